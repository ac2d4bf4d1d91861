#pragma once
// Whether shared libraries can be loaded here, for tests that need the real libnccl and
// libcudart (this project's build machine has both, and no GPU) and skip without them.

#include <dlfcn.h>

#include <initializer_list>

namespace fabricwatch::testing {

inline bool haveLibraries(std::initializer_list<const char*> names) {
  for (const char* lib : names) {
    void* h = ::dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    ::dlclose(h);
  }
  return true;
}

inline bool haveNccl() { return haveLibraries({"libnccl.so.2", "libcudart.so"}); }

}  // namespace fabricwatch::testing
