// Collection cost of the node fact sources on the fixture roots, above all the p5-like one
// (32 EFA devices, 8 GPUs): the budget is well under 10 ms for a full collection.
//
//   cmake -S . -B build -DFW_BUILD_BENCH=ON && make -C build -j2 facts_bench
//   ./build/bench/facts_bench
//   cp -a tests/fixtures /dev/shm/fw-fixtures && FW_BENCH_FIXTURES=/dev/shm/fw-fixtures \
//     ./build/bench/facts_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "core/snapshot.h"
#include "probes/node/sources.h"

namespace {

using fabricwatch::core::Collection;
using fabricwatch::core::Value;

// FW_BENCH_FIXTURES points at a copy of tests/fixtures elsewhere (e.g. on tmpfs, whose
// in-memory lookups resemble sysfs more than a disk file system does).
std::string fixture(const char* name) {
  const char* dir = std::getenv("FW_BENCH_FIXTURES");
  return (dir ? std::string(dir) : std::string(FW_SOURCE_DIR) + "/tests/fixtures") + "/" + name;
}

// Every node source once, facts merged, as one scheduler round does.
void collectAll(benchmark::State& state, const char* root_name) {
  std::string root = fixture(root_name);
  auto sources = fabricwatch::probes::node::makeNodeSources();
  for (auto _ : state) {
    Value facts = Value::map();
    for (auto& s : sources) {
      Collection c = s->collect({root});
      fabricwatch::core::mergeFacts(facts, c.facts);
    }
    benchmark::DoNotOptimize(facts);
  }
}

// One source alone, to see where the time goes.
void collectOne(benchmark::State& state, const char* root_name, const char* source) {
  std::string root = fixture(root_name);
  for (auto& s : fabricwatch::probes::node::makeNodeSources()) {
    if (s->name() != source) continue;
    for (auto _ : state) benchmark::DoNotOptimize(s->collect({root}));
  }
}

BENCHMARK_CAPTURE(collectAll, p5_efa, "p5_efa")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(collectAll, ib_ndr, "ib_ndr")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(collectOne, p5_efa_rdma, "p5_efa", "rdma")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(collectOne, p5_efa_gpu, "p5_efa", "gpu")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(collectOne, p5_efa_workloads, "p5_efa", "workloads")
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
