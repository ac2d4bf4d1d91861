// The probe kinds built into the binary, in the order a round runs them (tcp first: its echo
// tells the kinds after it who the peer is). A new kind adds its line here.
#include <algorithm>
#include <mutex>

#include "probes/kinds/dns/dns_kind.h"
#include "probes/kinds/fabric/fabric_kind.h"
#include "probes/kinds/nccl/nccl_kind.h"
#include "probes/kinds/tcp/tcp_kind.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<KindRegistration> kinds = {
      tcp::tcpKindRegistration(),
      dns::dnsKindRegistration(),
      fabric::fabricKindRegistration(),
      nccl::ncclKindRegistration(),
  };
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void registerProbeKind(KindRegistration r) {
  auto& reg = registry();
  std::lock_guard lock(reg.mu);
  auto it = std::find_if(reg.kinds.begin(), reg.kinds.end(),
                         [&](const KindRegistration& k) { return k.name == r.name; });
  if (it != reg.kinds.end())
    *it = std::move(r);
  else
    reg.kinds.push_back(std::move(r));
}

std::vector<KindRegistration> probeKinds() {
  auto& reg = registry();
  std::lock_guard lock(reg.mu);
  return reg.kinds;
}

std::vector<std::string> probeKindNames() {
  std::vector<std::string> names;
  for (const auto& k : probeKinds()) names.push_back(k.name);
  return names;
}

}  // namespace fabricwatch::probes
