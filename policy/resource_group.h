#pragma once
// The node's resource group: which packs apply. Chosen, first set wins, from the
// --resource-group flag, the FABRICWATCH_RESOURCE_GROUP environment variable (set in the
// DaemonSet), policy.resource_group in the configuration, and a node-label file
// (policy.resource_group_file). When none is set it is derived from the facts:
//   efa         any RDMA device of kind efa
//   infiniband  any RDMA port with link_layer InfiniBand
//   roce        any other RDMA port with link_layer Ethernet (mlx5, bnxt_re, irdma ...)
//   erdma       any RDMA device of kind erdma
//   none        no RDMA device
// checked in that order.

#include <optional>
#include <string>
#include <string_view>

#include "core/value.h"

namespace fabricwatch::policy {

struct ResourceGroupInputs {
  std::string flag;
  std::string env;
  std::string config;
  std::string label_file_text;  // the node-label file's content, if any
};

struct ResourceGroup {
  std::string name;
  std::string origin;  // flag | env | config | label-file | derived
};

inline constexpr std::string_view kResourceGroupEnv = "FABRICWATCH_RESOURCE_GROUP";
// The node label that carries the group in a label file (Kubernetes downward-API style lines
// key="value"); a file holding one bare word is taken as the group itself.
inline constexpr std::string_view kResourceGroupLabel = "fabricwatch.io/resource-group";

std::string deriveResourceGroup(const core::Value& facts);
std::optional<std::string> parseLabelFile(std::string_view text);
ResourceGroup resolveResourceGroup(const ResourceGroupInputs& in, const core::Value& facts);

}  // namespace fabricwatch::policy
