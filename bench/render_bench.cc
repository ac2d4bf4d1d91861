// The scrape path: rendering a snapshot into the Prometheus text format, as /metrics does on
// every scrape. Reproduce: scripts/dev bench, or
//   cmake -S . -B build-bench -DFW_BUILD_BENCH=ON -DCMAKE_BUILD_TYPE=Release &&
//   cmake --build build-bench --target render_bench && build-bench/bench/render_bench
#include <benchmark/benchmark.h>

#include "core/text_format.h"
#include "core/value_format.h"
#include "exporter/snapshot_collector.h"

namespace {

using fabricwatch::core::Snapshot;
using fabricwatch::core::Value;

// A renderer that emits one gauge per device and port, like the RDMA source does.
class PortRenderer : public fabricwatch::core::MetricRenderer {
 public:
  void renderMetrics(const Snapshot& s, fabricwatch::core::MetricFamilies& out) const override {
    auto f = fabricwatch::core::gaugeFamily("bench_port_state", "Port state.");
    for (const auto& d : s.facts.findPath("rdma.devices")->asList()) {
      fabricwatch::core::addSample(f, {{"device", d.find("name")->asString()}, {"port", "1"}}, 4);
    }
    out.push_back(std::move(f));
  }
};

std::shared_ptr<Snapshot> makeSnapshot(int devices) {
  auto s = std::make_shared<Snapshot>();
  for (int i = 0; i < devices; ++i) {
    Value d = Value::map({{"name", "rdmap" + std::to_string(i) + "s0"}, {"kind", "efa"}});
    s->facts["rdma"]["devices"].push(std::move(d));
  }
  for (int i = 0; i < 12; ++i) {
    fabricwatch::core::SourceStatus st;
    st.name = "source" + std::to_string(i);
    st.ran = st.success = true;
    s->sources.push_back(st);
  }
  s->renderers.push_back(std::make_shared<PortRenderer>());
  return s;
}

void BM_RenderSnapshotText(benchmark::State& state) {
  auto snap = makeSnapshot(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto families = fabricwatch::exporter::renderSnapshot(*snap);
    benchmark::DoNotOptimize(fabricwatch::core::textFormat(families));
  }
}
BENCHMARK(BM_RenderSnapshotText)->Arg(32)->Arg(1024);

void BM_FactsToJson(benchmark::State& state) {
  auto snap = makeSnapshot(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(fabricwatch::core::toJson(snap->facts));
}
BENCHMARK(BM_FactsToJson)->Arg(32)->Arg(1024);

}  // namespace

BENCHMARK_MAIN();
