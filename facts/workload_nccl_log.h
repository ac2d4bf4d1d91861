#pragma once
// The verdict of a running job's own NCCL log (workloads[].nccl_log): where the process's
// environment sets NCCL_DEBUG_FILE, the file it names (%h and %p expanded as NCCL does, with the
// process's own host name and PID), opened inside the process's root file system through
// /proc/PID/root, and parsed from its first and last parts only. So the verdict (transport,
// GPUDirect RDMA, problems) is the job's own, not a guess from the node's configuration.

#include <string>
#include <string_view>

#include "core/value.h"
#include "facts/fact_reader.h"

namespace fabricwatch::facts {

// Sets workload["nccl_log"] when the environment names a log that exists; a log that exists
// but cannot be read counts a read error.
void addWorkloadNcclLog(FactReader& r, const std::string& pid, std::string_view environ,
                        core::Value& workload);

}  // namespace fabricwatch::facts
