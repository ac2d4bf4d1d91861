#pragma once
// NCCL's interface and HCA list syntax (NCCL_SOCKET_IFNAME, NCCL_IB_HCA), as NCCL parses it:
// comma-separated entries NAME[:PORT]; an entry matches names that start with it; a leading
// '=' makes the whole list exact; a leading '^' (before '=') makes it an exclusion list.
//   "eth"            eth0, eth1 ...          "=eth0"       eth0 only
//   "^docker,lo"     everything but docker*, lo*     "^=docker0"  everything but docker0
//   "mlx5_0:1,mlx5_1"  port 1 of mlx5_0 and every port of mlx5_1
//
// In core because both the policies (which settings name what) and the net source's metrics
// (which virtual interfaces NCCL uses) read it.

#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::nccl {

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

}  // namespace fabricwatch::nccl
