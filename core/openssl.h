#pragma once
// OpenSSL (libssl.so.3, and through it libcrypto.so.3), loaded with dlopen() when a feature
// that needs it is turned on, rather than linked. TLS and basic auth (--web.config.file) and the
// peer mesh's frame HMAC are the only users; linked, the two libraries were mapped and
// relocated (~24,000 relocations) by every start, `fabricwatch check` in a prolog included, and
// held 1.65 MiB of a daemon's resident pages on a node without TLS or a mesh.
//
// The code that uses OpenSSL calls its functions by their own names: core/openssl_calls.cc
// defines each one (hidden, never exported) as a trampoline to the loaded library. An entry
// point that turns such a feature on calls require() first and reports its error as a
// configuration problem; a trampoline reached without a successful load aborts (a bug).

#include <string>
#include <string_view>

#include "core/result.h"

namespace fabricwatch::core::openssl {

// The library dlopen()ed; its dependency libcrypto.so.3 comes with it.
inline constexpr const char* kLibrary = "libssl.so.3";

// Loads the library and resolves every function fabricwatch calls, once (thread-safe; a failure
// is kept too). The error names the feature: "TLS needs libssl.so.3 (OpenSSL 3): <dlerror>".
core::Status require(std::string_view feature);

// True once a require() succeeded.
bool loaded();

// A symbol of the loaded library or of libcrypto (null when absent or nothing is loaded): for
// tests that call OpenSSL functions fabricwatch itself does not (a TLS client).
void* symbol(const char* name);

namespace testing {
// Loads `soname` instead of kLibrary. Tests only, before the process's first require(); false
// when a load was already attempted.
bool useLibrary(std::string soname);
}  // namespace testing

}  // namespace fabricwatch::core::openssl
