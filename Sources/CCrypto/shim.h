#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
/* OpenSSL's libcrypto (libssl-dev): the EVP cipher interface, for AES-128-CCM. */
#include <openssl/evp.h>
#endif
