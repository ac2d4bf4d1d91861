// Collection cost of the node fact sources on the fixture roots, above all the p5-like one
// (32 EFA devices, 8 GPUs): the budget is well under 10 ms for a full collection.
//
//   cmake -S . -B build-bench -DFW_BUILD_BENCH=ON -DCMAKE_BUILD_TYPE=Release
//   make -C build-bench -j2 facts_bench && ./build-bench/bench/facts_bench
//
// FW_BENCH_FIXTURES=DIR reads a copy of tests/fixtures from DIR instead (on tmpfs, say). The
// host benchmarks read this machine's own root: real sysfs, procfs and dpkg database.
// bench/facts_vs_node_exporter.sh puts these figures next to node_exporter's on the same roots.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "core/snapshot.h"
#include "facts/kept_file.h"
#include "probes/registry.h"

namespace {

using fabricwatch::core::Collection;
using fabricwatch::core::Value;

std::string fixture(const std::string& name) {
  const char* dir = std::getenv("FW_BENCH_FIXTURES");
  return (dir ? std::string(dir) : std::string(FW_SOURCE_DIR) + "/tests/fixtures") + "/" + name;
}

Value collectOnce(std::vector<std::shared_ptr<fabricwatch::core::Source>>& sources,
                  const std::string& root) {
  Value facts = Value::map();
  for (auto& s : sources) fabricwatch::core::mergeFacts(facts, s->collect({root}).facts);
  return facts;
}

// Every node source once, facts merged, as each scheduler round of the daemon does: the
// sources live on, so devices are scanned once and only what changes is read again.
void collectAll(benchmark::State& state, const char* root_name) {
  std::string root = fixture(root_name);
  auto sources = fabricwatch::probes::makeNodeSources();
  for (auto _ : state) benchmark::DoNotOptimize(collectOnce(sources, root));
}

// The same with new sources each time: what `fabricwatch check` and `facts` pay, and the
// daemon's first round.
void collectAllFirst(benchmark::State& state, const char* root_name) {
  std::string root = fixture(root_name);
  for (auto _ : state) {
    auto sources = fabricwatch::probes::makeNodeSources();
    benchmark::DoNotOptimize(collectOnce(sources, root));
  }
}

// One source alone, to see where the time goes.
void collectOne(benchmark::State& state, const std::string& root_name, const std::string& name) {
  std::string root = root_name == "/" ? root_name : fixture(root_name);
  for (auto& s : fabricwatch::probes::makeNodeSources()) {
    if (s->name() != name) continue;
    for (auto _ : state) benchmark::DoNotOptimize(s->collect({root}));
  }
}

BENCHMARK_CAPTURE(collectAll, p5_efa, "p5_efa")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(collectAll, ib_ndr, "ib_ndr")->Unit(benchmark::kMillisecond);
// Two ports with whole GID tables (255 entries each, 4 in use).
BENCHMARK_CAPTURE(collectAll, roce_v2, "roce_v2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(collectAllFirst, p5_efa, "p5_efa")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(collectAllFirst, ib_ndr, "ib_ndr")->Unit(benchmark::kMillisecond);

// This machine's own root: real sysfs, procfs, dpkg database and library directories.
void collectAllHost(benchmark::State& state) {
  auto sources = fabricwatch::probes::makeNodeSources();
  for (auto _ : state) benchmark::DoNotOptimize(collectOnce(sources, "/"));
}
BENCHMARK(collectAllHost)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  fabricwatch::facts::raiseOpenFileLimit();  // as `fabricwatch serve` does
  for (auto& s : fabricwatch::probes::makeNodeSources()) {
    std::string name(s->name());
    for (std::string root : {"p5_efa", "/"}) {
      std::string label = "collectOne/" + (root == "/" ? std::string("host") : root) + "_" + name;
      benchmark::RegisterBenchmark(label.c_str(), [root, name](benchmark::State& st) {
        collectOne(st, root, name);
      })->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
