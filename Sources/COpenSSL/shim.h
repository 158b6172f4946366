#ifndef AIF_COPENSSL_SHIM_H
#define AIF_COPENSSL_SHIM_H

// OpenSSL's libcrypto: the HMAC and digest primitives request signing is built on.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#endif
