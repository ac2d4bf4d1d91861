#pragma once
// libfabric, loaded with dlopen() at its first use rather than linked. The probe calls six of
// its entry points; everything else in libfabric's API is an inline call through the objects
// these return. Loading at run time keeps a node without libfabric (or with the fabric probe
// off) from needing it, lets the EFA stack's own libfabric come in through LD_LIBRARY_PATH, and
// contains what loading it does to the process: libfabric links provider libraries (psm's
// libinfinipath, psm2) whose constructors install crash handlers that turn SIGSEGV or SIGABRT
// into "exit 1". The process's signal dispositions are saved before the load (and before each
// provider initialisation in fi_getinfo) and put back after.

#include <rdma/fabric.h>

#include <cstdint>
#include <string>

namespace fabricwatch::probes::fabric {

struct Libfabric {
  int (*getinfo)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**);
  void (*freeinfo)(fi_info*);
  fi_info* (*dupinfo)(const fi_info*);
  int (*fabric)(fi_fabric_attr*, fid_fabric**, void*);
  const char* (*strerror)(int);
  uint32_t (*version)();
};

// The loaded library (libfabric.so.1), or null with dlerror's words in `why`. Loaded once.
const Libfabric* libfabric(std::string* why = nullptr);

// fi_strerror(code), or "libfabric error N" where libfabric is not loaded.
std::string fabricStrerror(int code);

// Saves every signal's disposition and restores it when destroyed.
class SignalDispositions {
 public:
  SignalDispositions();
  ~SignalDispositions();
  SignalDispositions(const SignalDispositions&) = delete;
  SignalDispositions& operator=(const SignalDispositions&) = delete;

 private:
  struct Saved;
  Saved* saved_;
};

}  // namespace fabricwatch::probes::fabric
