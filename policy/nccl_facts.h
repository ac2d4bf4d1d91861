#pragma once
// NCCL's interface and HCA list settings resolved against the facts (the syntax is
// nccl/nccl_list.h).
//
// annotateNccl() resolves such settings against the facts so that rules can check what NCCL
// will actually use without re-implementing the syntax in expressions: it adds `matched`,
// `unmatched` (and for HCAs `ports`) next to `value` and `source`, and resolves the GID index
// on the ports NCCL would open (docs/policies.md).

#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"
#include "nccl/nccl_list.h"

namespace fabricwatch::policy {

using nccl::ncclEntryMatches;
using nccl::NcclList;
using nccl::NcclListEntry;
using nccl::ncclSelects;
using nccl::parseNcclList;

// Adds the resolved NCCL_SOCKET_IFNAME, NCCL_IB_HCA and NCCL_IB_GID_INDEX selections to
// facts.nccl.settings and to each facts.workloads[*].nccl, in place (docs/policies.md).
void annotateNccl(core::Value& facts);

// Everything the evaluator expects on top of the collected facts: the resource group the node
// is evaluated as, and the NCCL annotations. Idempotent.
void prepareFacts(core::Value& facts, const std::string& resource_group);

}  // namespace fabricwatch::policy
