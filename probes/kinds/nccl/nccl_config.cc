#include "probes/kinds/nccl/nccl_config.h"

#include <algorithm>
#include <cctype>

#include "config/duration.h"

namespace fabricwatch::probes::nccl {
namespace {

// The table at its defaults, documented: what `fabricwatch config default` prints for it (a
// test checks it loads to the struct's defaults).
constexpr const char* kDefaults = R"toml([probes.nccl]
# NCCL runs (docs/nccl.md), each in a child process, skipped while another process holds a
# GPU: a local all-reduce across this node's GPUs, and runs with a peer of the mesh (this node
# rank 0, the peer rank 1, the unique id sent over the peer channel), which show what NCCL
# chose between the two nodes (IB, RoCE, EFA or Socket; GPUDirect RDMA). Off: they run NCCL on
# the GPUs and need them in the pod (NVIDIA runtime, NVIDIA_VISIBLE_DEVICES=all) and hostPID.
enabled = false
local = true          # the local all-reduce
peers = true          # runs with peers: started here, and served when a peer asks
# Each of the two runs this often (a peer run every interval / probe.interval rounds, at a
# phase drawn per node), plus the peer runs this node serves.
interval = "30m"
# The child's hard limit; past it the child's process group is killed.
timeout = "3m"
# false: the first local run is one interval after start.
run_at_start = false
operation = "all_reduce"   # peer runs: all_reduce | send_recv
device = -1                # peer runs: the GPU of both nodes; -1: the next GPU each run
sizes = ["1MiB", "256MiB"]
warmup = 5
iterations = 20
nccl_library = "libnccl.so.2"
cudart_library = ""   # "": libcudart.so, .so.13, .so.12, .so.11.0
skip_when_busy = true
ignore_processes = ["nvidia-persistenced", "nv-hostengine", "dcgm-exporter", "dcgmi", "nvidia-smi"]
log_dir = ""          # "": $TMPDIR or /tmp
# Peer runs this node serves: a member asks for at most this node's own sizes, warmup and
# iterations (more is declined), and gets a run at most this often ("busy" otherwise).
serve_min_interval = "1m"
# The resource group's recommended NCCL settings for every run, e.g.
# [probes.nccl.env]
# NCCL_IB_HCA = "mlx5"
)toml";

void validate(const NcclConfig& n, const config::Config&, const config::ReportProblem& report) {
  if (n.sizes.empty() || n.sizes.size() > 16)
    report({"probes.nccl.sizes"},
           "probes.nccl.sizes must list 1 to 16 sizes, not " + std::to_string(n.sizes.size()));
  // The local run is a source: the scheduler needs its deadline inside its interval. A peer
  // run longer than the interval only delays the next one (the round that runs it is late).
  if (n.local && n.timeout >= n.interval)
    report({"probes.nccl.timeout", "probes.nccl.interval"},
           "probes.nccl.timeout (" + config::formatDuration(n.timeout) +
               ") must be shorter than probes.nccl.interval (" +
               config::formatDuration(n.interval) + ")");
}

}  // namespace

config::TableDef ncclConfigTable() {
  using std::chrono::hours;
  using std::chrono::milliseconds;
  using C = NcclConfig;
  using config::KeyContext;
  using config::KeyType;
  using config::KeyValue;
  return config::TableKeys<C>(kNcclTable)
      .boolean("local", &C::local)
      .boolean("peers", &C::peers)
      .duration("interval", milliseconds(1000), hours(24 * 7), &C::interval)
      .duration("timeout", milliseconds(100), hours(1), &C::timeout)
      .boolean("run_at_start", &C::run_at_start)
      .string("operation", &C::operation,
              [](const std::string& v) -> std::optional<std::string> {
                if (v != "all_reduce" && v != "send_recv")
                  return "operation \"" + v + "\" must be all_reduce or send_recv";
                return std::nullopt;
              })
      .integer("device", -1, 1023, &C::device)
      .custom("sizes", KeyType::kStringList,
              [](C& n, const KeyValue& v, const KeyContext&) -> std::optional<std::string> {
                std::vector<uint64_t> sizes;
                for (const auto& s : v.list) {
                  auto b = config::parseByteSize(s);
                  if (!b || *b < 4 || *b > (uint64_t{16} << 30))
                    return "size \"" + s + "\" must be 4B to 16GiB, e.g. \"1MiB\" or \"256MiB\"";
                  sizes.push_back(*b);
                }
                n.sizes = std::move(sizes);
                return std::nullopt;
              })
      .duration("serve_min_interval", milliseconds(0), hours(24), &C::serve_min_interval)
      .integer("warmup", 0, 1000, &C::warmup)
      .integer("iterations", 1, 10000, &C::iterations)
      .string("nccl_library", &C::nccl_library)
      .string("cudart_library", &C::cudart_library)
      .boolean("skip_when_busy", &C::skip_when_busy)
      .stringList("ignore_processes", &C::ignore_processes, gpu::checkProcessName)
      .string("log_dir", &C::log_dir,
              [](const std::string& v) -> std::optional<std::string> {
                if (!v.empty() && v[0] != '/')
                  return "log_dir \"" + v + "\" must be an absolute path";
                return std::nullopt;
              })
      .custom("env.*", KeyType::kString,
              [](C& n, const KeyValue& v, const KeyContext& ctx) -> std::optional<std::string> {
                const std::string& name = ctx.wild;
                bool ident = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
                  return std::isupper(static_cast<unsigned char>(ch)) ||
                         std::isdigit(static_cast<unsigned char>(ch)) || ch == '_';
                });
                if (!ident)
                  return "environment variable \"" + name + "\" must be upper case (NCCL_IB_HCA)";
                if (name.rfind("NCCL_DEBUG", 0) == 0)
                  return name + " is set by the probe itself (its log is what it reads)";
                n.env[name] = v.text;
                return std::nullopt;
              })
      .validate(validate)
      .defaults(kDefaults)
      .build();
}

}  // namespace fabricwatch::probes::nccl
