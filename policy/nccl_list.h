#pragma once
// NCCL's interface and HCA list syntax (NCCL_SOCKET_IFNAME, NCCL_IB_HCA), as NCCL parses it:
// comma-separated entries NAME[:PORT]; an entry matches names that start with it; a leading
// '=' makes the whole list exact; a leading '^' (before '=') makes it an exclusion list.
//   "eth"            eth0, eth1 ...          "=eth0"       eth0 only
//   "^docker,lo"     everything but docker*, lo*     "^=docker0"  everything but docker0
//   "mlx5_0:1,mlx5_1"  port 1 of mlx5_0 and every port of mlx5_1
//
// annotateNccl() resolves such settings against the facts so that rules can check what NCCL
// will actually use without re-implementing the syntax in expressions: it adds `matched`,
// `unmatched` (and for HCAs `ports`) next to `value` and `source` (docs/policies.md).

#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"

namespace fabricwatch::policy {

struct NcclListEntry {
  std::string name;
  int port = -1;  // -1: any port
};

struct NcclList {
  bool exclude = false;  // leading '^'
  bool exact = false;    // leading '='
  std::vector<NcclListEntry> entries;
};

NcclList parseNcclList(std::string_view value);
// Whether NCCL would select the name (and port; -1 for interfaces) under this list.
bool ncclSelects(const NcclList& list, std::string_view name, int port = -1);
// Whether one entry names this (name, port), ignoring the list's '^'.
bool ncclEntryMatches(const NcclList& list, const NcclListEntry& e, std::string_view name,
                      int port);

// Adds the resolved NCCL_SOCKET_IFNAME and NCCL_IB_HCA selections to facts.nccl.settings and
// to each facts.workloads[*].nccl, in place.
void annotateNccl(core::Value& facts);

// Everything the evaluator expects on top of the collected facts: the resource group the node
// is evaluated as, and the NCCL annotations. Idempotent.
void prepareFacts(core::Value& facts, const std::string& resource_group);

}  // namespace fabricwatch::policy
