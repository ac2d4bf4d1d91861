#pragma once
// Variables the daemon puts into its own environment for its own use, told apart from those the
// operator set. The fabric probe sizes libfabric's provider queues for a probe through
// variables read when libfabric loads (probes/kinds/fabric/queue_sizes.h); a child that stands
// in for a training job (the NCCL probe) must see the job's environment, not the probe's
// sizes, so it drops what is recorded here and keeps what the operator set.

#include <string>
#include <string_view>

namespace fabricwatch::core {

// Sets NAME=VALUE in this process's environment when NAME is unset, and records NAME as the
// daemon's own. Returns whether it set it (false: the operator's value stays, not recorded).
bool setOwnVariable(const std::string& name, const std::string& value);

// Whether NAME holds the value setOwnVariable set (not one set over it since).
bool isOwnVariable(std::string_view name);

}  // namespace fabricwatch::core
