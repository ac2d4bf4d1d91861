// OpenSSL's functions by their own names, each a trampoline to the library core/openssl.cc
// loaded, so the code that uses OpenSSL is written as if it were linked. The target compiles
// this file with hidden visibility: the executable never exports these names, so the loaded
// libssl and libcrypto bind to their own functions, never to these.

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "core/openssl_functions.h"

#define FW_OPENSSL_TRAMPOLINE(ret, name, params, args)                       \
  extern "C" ret name params {                                               \
    using Fn = decltype(&::name);                                            \
    return reinterpret_cast<Fn>(fabricwatch::core::openssl::detail::address( \
        fabricwatch::core::openssl::detail::k_##name, #name)) args;          \
  }
FW_OPENSSL_FUNCTIONS(FW_OPENSSL_TRAMPOLINE)
