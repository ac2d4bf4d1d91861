// The GPU-holder scan that heavy probes yield to (gpu/gpu_holders.h): what one scan costs the
// daemon, on this machine's own /proc and on a fixture root shaped like a busy training node
// (PROCESSES processes of FDS descriptors each, none of them a GPU: the scan's worst case, every
// descriptor read). The fabric probe scans at most once per 10 s (gpu::JobWatch), in bandwidth
// rounds and when a peer asks for a bandwidth session.
//
//   cmake -S . -B build -DFW_BUILD_BENCH=ON && cmake --build build -j2 --target gpu_scan_bench
//   ./build/bench/gpu_scan_bench
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gpu/gpu_holders.h"

namespace fabricwatch::gpu {
namespace {

void BM_ScanThisHost(benchmark::State& state) {
  GpuScan s;
  for (auto _ : state) benchmark::DoNotOptimize(s = scanForJobs("/", monitoringProcesses()));
  state.counters["processes"] = static_cast<double>(s.processes_scanned);
  state.counters["unreadable"] = static_cast<double>(s.unreadable);
}
BENCHMARK(BM_ScanThisHost)->Unit(benchmark::kMicrosecond);

// A root of `processes` processes with `fds` descriptors each (sockets and /dev/null).
std::string busyNode(int processes, int fds) {
  char tmpl[] = "/tmp/gpu_scan_bench.XXXXXX";
  std::string root = ::mkdtemp(tmpl);
  for (int p = 1000; p < 1000 + processes; ++p) {
    std::string dir = root + "/proc/" + std::to_string(p);
    std::filesystem::create_directories(dir + "/fd");
    std::ofstream(dir + "/comm") << "python3\n";
    for (int f = 0; f < fds; ++f)
      std::filesystem::create_symlink(f % 2 ? "/dev/null" : "socket:[4242]",
                                      dir + "/fd/" + std::to_string(f));
  }
  return root;
}

void BM_ScanBusyNode(benchmark::State& state) {
  std::string root = busyNode(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  GpuScan s;
  for (auto _ : state) benchmark::DoNotOptimize(s = scanForJobs(root, monitoringProcesses()));
  state.counters["processes"] = static_cast<double>(s.processes_scanned);
  std::filesystem::remove_all(root);
}
BENCHMARK(BM_ScanBusyNode)
    ->Args({200, 64})
    ->Args({1000, 64})
    ->Args({1000, 512})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fabricwatch::gpu

BENCHMARK_MAIN();
