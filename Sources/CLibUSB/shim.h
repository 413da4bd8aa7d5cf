#ifndef CLIBUSB_SHIM_H
#define CLIBUSB_SHIM_H
#include <libusb.h>   /* pkg-config supplies -I/usr/include/libusb-1.0 */

/* libusb_set_option is variadic: Swift cannot call C variadics, so wrap the fixed-arity forms. */
static inline int clibusb_set_log_level(libusb_context *ctx, int level) {
    return libusb_set_option(ctx, LIBUSB_OPTION_LOG_LEVEL, level);
}
static inline int clibusb_api_version(void) { return LIBUSB_API_VERSION; }
#endif
