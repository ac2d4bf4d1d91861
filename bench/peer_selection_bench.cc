// Peer selection at fleet scale: the cost of one node's selection per round, and a simulation
// of a 10,000-member fleet reporting coverage (rounds until every ordered pair was probed),
// in-degree spread per round and churn (targets changed by one join).
//
//   cmake -S . -B build -DFW_BUILD_BENCH=ON && make -C build -j2 peer_selection_bench
//   ./build/bench/peer_selection_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "probes/mesh/selection.h"

namespace fabricwatch::probes {
namespace {

std::vector<std::string> fleet(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i)
    ids.push_back("10." + std::to_string(i / 65536) + "." + std::to_string((i / 256) % 256) + "." +
                  std::to_string(i % 256) + ":19737");
  return ids;
}

constexpr uint64_t kRound = 176400000000;  // a realistic round number (unix ms / 10 s)

// What a node does each round when the membership changed: build the ring and select.
void BM_SelectPeersFromScratch(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto ids = fleet(n);
  std::vector<Candidate> members;
  for (const auto& id : ids) members.push_back({id, ""});
  uint64_t r = kRound;
  for (auto _ : state) benchmark::DoNotOptimize(selectPeers(members, members[7], r++, 8));
}
BENCHMARK(BM_SelectPeersFromScratch)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The steady state: the ring is unchanged, only the round moves.
void BM_RingTargets(benchmark::State& state) {
  SelectionRing ring(fleet(static_cast<int>(state.range(0))));
  uint64_t r = kRound;
  for (auto _ : state) benchmark::DoNotOptimize(ring.targets(7, r++, 8));
}
BENCHMARK(BM_RingTargets)->Arg(10000)->Unit(benchmark::kNanosecond);

// The whole fleet for as many rounds as full coverage takes.
void BM_Simulate(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  SelectionRing ring(fleet(n));
  for (auto _ : state) {
    std::vector<uint8_t> seen(static_cast<size_t>(n) * n, 0);
    uint64_t missing = static_cast<uint64_t>(n) * (n - 1);
    int rounds = 0, in_min = n, in_max = 0;
    std::vector<int> in(n);
    while (missing > 0 && rounds < 100000) {
      std::fill(in.begin(), in.end(), 0);
      for (int p = 0; p < n; ++p) {
        for (size_t t : ring.targets(static_cast<size_t>(p), kRound + rounds, k)) {
          uint8_t& s = seen[static_cast<size_t>(p) * n + t];
          if (!s) {
            s = 1;
            --missing;
          }
          in[t]++;
        }
      }
      auto [lo, hi] = std::minmax_element(in.begin(), in.end());
      in_min = std::min(in_min, *lo);
      in_max = std::max(in_max, *hi);
      ++rounds;
    }
    // Churn: one member joins; how many of this round's targets change, over 100 rounds.
    auto ids = fleet(n);
    ids.push_back("10.255.255.255:19737");
    SelectionRing after(ids);
    uint64_t changed = 0, far = 0, total = 0;
    for (int r = 0; r < 100; ++r) {
      for (int p = 0; p < n; ++p) {
        const std::string& self = ring.at(static_cast<size_t>(p));
        auto a = ring.targets(static_cast<size_t>(p), kRound + r * 37, k);
        auto b = after.targets(*after.position(self), kRound + r * 37, k);
        for (size_t j = 0; j < a.size() && j < b.size(); ++j, ++total) {
          if (ring.at(a[j]) == after.at(b[j])) continue;
          ++changed;
          // A "far" change is anything but the old target's ring neighbour or the newcomer.
          size_t op = *after.position(ring.at(a[j]));
          size_t np = b[j];
          bool near = after.at(np) == ids.back() || (np + 1) % after.size() == op ||
                      (op + 1) % after.size() == np;
          far += !near;
        }
      }
    }
    state.counters["members"] = n;
    state.counters["k"] = k;
    state.counters["n_over_k"] = static_cast<double>(n - 1) / k;
    state.counters["coverage_rounds"] = rounds;
    state.counters["in_degree_min"] = in_min;
    state.counters["in_degree_max"] = in_max;
    state.counters["churn_changed_ratio"] =
        static_cast<double>(changed) / static_cast<double>(total);
    state.counters["churn_far_ratio"] = static_cast<double>(far) / static_cast<double>(total);
  }
}
BENCHMARK(BM_Simulate)->Args({1000, 8})->Args({10000, 8})->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace fabricwatch::probes

BENCHMARK_MAIN();
