#pragma once
// The facts document of a fixture root: every node source (workloads included) collected once
// and merged, as the scheduler would. Shared by the fixture and schema tests.

#include <string>
#include <vector>

#include "core/snapshot.h"
#include "probes/registry.h"
#include "tests/support/paths.h"

namespace fabricwatch::facts {

inline const std::vector<std::string>& fixtureRoots() {
  static const std::vector<std::string> kRoots = {
      "ib_ndr",         "roce_v2",        "roce_v2_gid_v1",
      "p5_efa",         "erdma",          "no_rdma",
      "broken",         "legacy_bond",    "efa_no_pci_tree",
      "h100_dual_port", "a100_port_down", "h100_class_only",
      "hgx_roce",       "hgx_roce_mtu",   "hgx_no_fabric_manager",
      "hgx_iommu_dma",  "hgx_acs",        "hgx_ecn_off",
      "p5_efa_versions"};
  return kRoots;
}

struct FixtureFacts {
  core::Value facts = core::Value::map();
  uint64_t read_errors = 0;
  std::vector<std::string> errors;
};

inline FixtureFacts collectRoot(const std::string& root) {
  FixtureFacts out;
  for (auto& s : probes::makeNodeSources()) {
    core::Collection c = s->collect({root});
    core::mergeFacts(out.facts, c.facts);
    out.read_errors += c.read_errors;
    out.errors.insert(out.errors.end(), c.errors.begin(), c.errors.end());
  }
  return out;
}

inline FixtureFacts collectFixture(const std::string& name) {
  return collectRoot(testing::fixture(name));
}

}  // namespace fabricwatch::facts
