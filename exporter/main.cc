// fabricwatch: interconnect and configuration health for GPU training nodes.
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <string_view>

#include "exporter/commands.h"
#include "exporter/descriptor_table.h"
#include "probes/kinds/nccl/probe_child.h"
#include "probes/kinds/nccl/probe_protocol.h"

namespace {

using fabricwatch::exporter::Args;

const char* kUsage =
    "usage: fabricwatch COMMAND [flags]\n\n"
    "Commands:\n"
    "  serve            run the daemon: collect facts, serve /metrics and /api/v1/*\n"
    "  facts            collect once and print the facts document (json or yaml)\n"
    "  config validate  check configuration files; problems as FILE:LINE:COL: message\n"
    "  config default   print the embedded default configuration\n"
    "  version          print version, revision and build flags\n"
    "  check            collect once, evaluate the policy packs, exit 1 on violations\n"
    "  policy validate  load and compile policy packs; problems as FILE:LINE:COL: message\n"
    "  policy test      run policy test files (expected violations over given facts)\n"
    "  nccl-log         read an NCCL log: network, NICs, GPUDirect RDMA, transports, verdict\n"
    "  diagnose         ask Prometheus which node, NIC or path the fleet's probes blame\n\n"
    "Run 'fabricwatch COMMAND --help' for a command's flags.\n";

// glibc gives each thread that allocates an arena of its own (up to 8 per core): with a thread
// per source, the prober's workers and the HTTP workers, `serve` held 4-5 MB of mostly free
// arena memory (64 peers: 18.6 MB resident with them, 14.6 MB with one arena), and a one-shot
// `check` paid an arena's set-up per source thread. fabricwatch allocates little and rarely
// contends, so one arena serves every thread. MALLOC_ARENA_MAX or GLIBC_TUNABLES decide when set.
//
// Large blocks are mapped on their own and unmapped when freed. glibc otherwise raises its mmap
// threshold to the size of each mapped block freed (up to 32 MB), after which such blocks come
// from the heap and stay there: the fabric probe's libfabric pools (tcp;ofi_rxm allocates 17 MB
// blocks per endpoint) were rebuilt by every reload, and a daemon reloaded every few seconds
// grew from 200 to 400 MB resident (bench/soak.sh). MALLOC_MMAP_THRESHOLD_ decides when set.
void tuneMalloc() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  auto tuned = [&](const char* env, const char* tunable) {
    return std::getenv(env) ||
           (tunables && std::string_view(tunables).find(tunable) != std::string_view::npos);
  };
  if (!tuned("MALLOC_ARENA_MAX", "arena_max")) mallopt(M_ARENA_MAX, 1);
  if (!tuned("MALLOC_MMAP_THRESHOLD_", "mmap_threshold")) mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

// Room for what a node's sources keep open (~630 descriptors on a p5 node) and the sockets,
// reserved while main() is the only thread (exporter/descriptor_table.h): 1024 slots are 8 KiB
// of kernel memory.
constexpr int kDescriptorSlots = 1024;

}  // namespace

int main(int argc, char** argv) {
  tuneMalloc();
  fabricwatch::exporter::reserveDescriptorTable(kDescriptorSlots);
  namespace ex = fabricwatch::exporter;
  const std::map<std::string, std::function<int(const Args&)>> commands = {
      {"serve", ex::runServe},
      {"facts", ex::runFacts},
      {"config", ex::runConfig},
      {"version", ex::runVersion},
      {"check", ex::runCheck},
      {"policy", ex::runPolicy},
      {"nccl-log", ex::runNcclLog},
      {"diagnose", ex::runDiagnose},
      // Hidden: the NCCL probe's child process (fabricwatch starts itself; never a shell).
      {std::string(fabricwatch::probes::nccl::kProbeSubcommand),
       [](const Args&) { return fabricwatch::probes::nccl::runProbeChild(); }},
  };
  if (argc < 2) {
    std::cerr << kUsage;
    return ex::kExitUsage;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kUsage;
    return ex::kExitOk;
  }
  if (cmd == "--version") cmd = "version";
  auto it = commands.find(cmd);
  if (it == commands.end()) {
    std::cerr << "fabricwatch: unknown command \"" << cmd << "\"\n\n" << kUsage;
    return ex::kExitUsage;
  }
  return it->second(Args(argv + 2, argv + argc));
}
