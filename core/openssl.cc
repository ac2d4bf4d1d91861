#include "core/openssl.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/log.h"
#include "core/openssl_functions.h"

namespace fabricwatch::core::openssl {
namespace {

#define FW_OPENSSL_NAME(ret, name, params, args) #name,
constexpr const char* kNames[] = {FW_OPENSSL_FUNCTIONS(FW_OPENSSL_NAME)};
#undef FW_OPENSSL_NAME
static_assert(sizeof kNames / sizeof kNames[0] == detail::kFunctionCount);

struct Library {
  std::mutex mu;  // guards soname and attempted
  std::string soname = kLibrary;
  bool attempted = false;
  std::once_flag once;
  void* handle = nullptr;
  std::string error;  // why the load failed
  void* functions[detail::kFunctionCount] = {};
  // Published (release) once every function is resolved; the trampolines read it (acquire).
  std::atomic<void* const*> table{nullptr};
};

Library& library() {
  static Library* lib = new Library;  // never destroyed: trampolines may run during exit
  return *lib;
}

void loadOnce(Library& lib) {
  std::string soname;
  {
    std::lock_guard lock(lib.mu);
    lib.attempted = true;
    soname = lib.soname;
  }
  // RTLD_LOCAL: nothing else binds to it. Never closed: OpenSSL pins itself and keeps state
  // (error queues, providers) for the life of the process.
  void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    lib.error = why ? why : "dlopen failed";
    return;
  }
  // dlsym on libssl's handle searches its dependencies too, so libcrypto's functions resolve.
  for (int i = 0; i < detail::kFunctionCount; ++i) {
    lib.functions[i] = ::dlsym(handle, kNames[i]);
    if (!lib.functions[i]) {
      lib.error = soname + " has no " + kNames[i];
      return;  // handle left open: cheaper than a dlclose that OpenSSL's pinning ignores
    }
  }
  lib.handle = handle;
  lib.table.store(lib.functions, std::memory_order_release);
  core::log::debug("openssl", "loaded", {{"library", soname}});
}

}  // namespace

core::Status require(std::string_view feature) {
  Library& lib = library();
  std::call_once(lib.once, loadOnce, lib);
  if (lib.table.load(std::memory_order_acquire)) return core::Status::Ok();
  std::lock_guard lock(lib.mu);
  return core::Error{std::string(feature) + " needs " + lib.soname + " (OpenSSL 3): " + lib.error};
}

bool loaded() { return library().table.load(std::memory_order_acquire) != nullptr; }

void* symbol(const char* name) {
  Library& lib = library();
  if (!lib.table.load(std::memory_order_acquire)) return nullptr;
  return ::dlsym(lib.handle, name);
}

namespace testing {
bool useLibrary(std::string soname) {
  Library& lib = library();
  std::lock_guard lock(lib.mu);
  if (lib.attempted) return false;
  lib.soname = std::move(soname);
  return true;
}
}  // namespace testing

namespace detail {
void* address(Function f, const char* name) {
  void* const* table = library().table.load(std::memory_order_acquire);
  if (!table) {
    // A code path reached OpenSSL without its entry point's require(): a bug, not a host
    // problem (a host without the library fails require() with a configuration error).
    std::fprintf(stderr, "fabricwatch: %s called before %s was loaded (no openssl::require)\n",
                 name, kLibrary);
    std::abort();
  }
  return table[f];
}
}  // namespace detail

}  // namespace fabricwatch::core::openssl
