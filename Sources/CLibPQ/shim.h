#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
/* libpq is opened with dlopen when a sink first needs it (Sources/CSinkLibraries defines the
 * functions ingestd calls, forwarding to the loaded library): not linked. */
/* Debian installs the header under postgresql/ (its own includes are relative to it). */
#include <postgresql/libpq-fe.h>
#endif
