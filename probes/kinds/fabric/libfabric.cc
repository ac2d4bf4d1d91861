#include "probes/kinds/fabric/libfabric.h"

#include <dlfcn.h>
#include <signal.h>

#include <mutex>

#include "core/log.h"
#include "probes/kinds/fabric/queue_sizes.h"

namespace fabricwatch::probes::fabric {
namespace {

constexpr const char* kLibrary = "libfabric.so.1";

template <typename F>
bool resolve(void* lib, const char* name, F& fn, std::string& why) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
  if (!fn) {
    const char* e = ::dlerror();
    why = std::string("symbol ") + name + " not found in " + kLibrary +
          (e ? std::string(": ") + e : "");
  }
  return fn != nullptr;
}

}  // namespace

struct SignalDispositions::Saved {
  struct sigaction act[NSIG];
  bool ok[NSIG];
};

SignalDispositions::SignalDispositions() : saved_(new Saved{}) {
  for (int s = 1; s < NSIG; ++s)
    saved_->ok[s] = s != SIGKILL && s != SIGSTOP && ::sigaction(s, nullptr, &saved_->act[s]) == 0;
}

SignalDispositions::~SignalDispositions() {
  for (int s = 1; s < NSIG; ++s)
    if (saved_->ok[s]) ::sigaction(s, &saved_->act[s], nullptr);
  delete saved_;
}

const Libfabric* libfabric(std::string* why) {
  static std::once_flag once;
  static Libfabric api;
  static bool loaded = false;
  static std::string error;
  std::call_once(once, [] {
    SignalDispositions keep;
    // Before the load: providers read their variables when they initialise (queue_sizes.h).
    std::string set;
    for (const auto& a : applyProbeProviderVariables()) set += (set.empty() ? "" : " ") + a;
    if (!set.empty())
      core::log::info("fabric", "provider queues sized for a probe", {{"variables", set}});
    void* lib = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = ::dlerror();
      error = e ? e : std::string(kLibrary) + ": cannot be loaded";
      return;
    }
    loaded = resolve(lib, "fi_getinfo", api.getinfo, error) &&
             resolve(lib, "fi_freeinfo", api.freeinfo, error) &&
             resolve(lib, "fi_dupinfo", api.dupinfo, error) &&
             resolve(lib, "fi_fabric", api.fabric, error) &&
             resolve(lib, "fi_strerror", api.strerror, error) &&
             resolve(lib, "fi_version", api.version, error);
  });
  if (!loaded && why) *why = error;
  return loaded ? &api : nullptr;
}

std::string fabricStrerror(int code) {
  const Libfabric* f = libfabric();
  const char* s = f ? f->strerror(code) : nullptr;
  return s ? s : "libfabric error " + std::to_string(code);
}

}  // namespace fabricwatch::probes::fabric
