// Peer selection at fleet scale: the cost of one node's selection per round, and a simulation
// of 1,000- and 10,000-member fleets reporting coverage (rounds until every ordered pair was
// probed), in-degree spread per round and churn (targets changed by one join); the same with
// topology groups (leaves of 32), with distinct probers per node over windows of rounds.
//
//   cmake -S . -B build -DFW_BUILD_BENCH=ON && make -C build -j2 peer_selection_bench
//   ./build/bench/peer_selection_bench
//   ./build/bench/peer_selection_bench --benchmark_filter=Groups   # the grouped fleet only
#include <benchmark/benchmark.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <iterator>
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

// Leaves of 32 (the last one partial), as probe.topology_group names them.
std::vector<Candidate> leaves(int n, int leaf = 32) {
  std::vector<Candidate> out;
  auto ids = fleet(n);
  for (int i = 0; i < n; ++i) out.push_back({ids[i], "leaf-" + std::to_string(i / leaf)});
  return out;
}

void BM_SelectPeersFromScratchGrouped(benchmark::State& state) {
  auto members = leaves(static_cast<int>(state.range(0)));
  uint64_t r = kRound;
  for (auto _ : state) benchmark::DoNotOptimize(selectPeers(members, members[7], r++, 8));
}
BENCHMARK(BM_SelectPeersFromScratchGrouped)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_GroupedTargets(benchmark::State& state) {
  GroupedRing ring(leaves(static_cast<int>(state.range(0))));
  uint64_t r = kRound;
  for (auto _ : state) benchmark::DoNotOptimize(ring.targets(7, r++, 8));
}
BENCHMARK(BM_GroupedTargets)->Arg(10000)->Unit(benchmark::kNanosecond);

// Distinct probers of each node over W consecutive rounds, mates and outsiders apart: min and
// max over every node and over `starts` consecutive windows.
struct WindowSpread {
  int in_min = INT32_MAX, in_max = 0, out_min = INT32_MAX, out_max = 0;
};

WindowSpread windows(const GroupedRing& ring, int k, int w, int starts) {
  const size_t n = ring.size();
  WindowSpread s;
  std::vector<std::vector<std::vector<size_t>>> probers(static_cast<size_t>(w + starts - 1),
                                                        std::vector<std::vector<size_t>>(n));
  for (size_t r = 0; r < probers.size(); ++r)
    for (size_t p = 0; p < n; ++p)
      for (size_t t : ring.targets(p, kRound + r, k)) probers[r][t].push_back(p);
  std::vector<size_t> all;
  for (int start = 0; start < starts; ++start) {
    for (size_t x = 0; x < n; ++x) {
      all.clear();
      for (int r = start; r < start + w; ++r)
        all.insert(all.end(), probers[static_cast<size_t>(r)][x].begin(),
                   probers[static_cast<size_t>(r)][x].end());
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
      int in = 0;
      for (size_t p : all) in += ring.at(p).group == ring.at(x).group;
      int out = static_cast<int>(all.size()) - in;
      s.in_min = std::min(s.in_min, in);
      s.in_max = std::max(s.in_max, in);
      s.out_min = std::min(s.out_min, out);
      s.out_max = std::max(s.out_max, out);
    }
  }
  return s;
}

// The grouped fleet: peers per round, in-degree per round (mates, outsiders), distinct probers
// per window (the localisation rules' 2 rounds, and the 30 rounds of a `for: 5m` at the
// default 10 s), rounds to cover every ordered pair, and churn from one node joining a leaf.
void BM_SimulateGroups(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  auto members = leaves(n);
  GroupedRing ring(members);
  for (auto _ : state) {
    std::vector<uint8_t> seen(static_cast<size_t>(n) * n, 0);
    uint64_t missing = static_cast<uint64_t>(n) * (n - 1);
    int rounds = 0, in_min = n, in_max = 0, out_min = n, out_max = 0;
    size_t peers_max = 0;
    std::vector<int> in(n), out(n);
    while (missing > 0 && rounds < 100000) {
      std::fill(in.begin(), in.end(), 0);
      std::fill(out.begin(), out.end(), 0);
      for (int p = 0; p < n; ++p) {
        auto targets = ring.targets(static_cast<size_t>(p), kRound + rounds, k);
        peers_max = std::max(peers_max, targets.size());
        for (size_t t : targets) {
          uint8_t& s = seen[static_cast<size_t>(p) * n + t];
          if (!s) {
            s = 1;
            --missing;
          }
          (ring.at(t).group == ring.at(static_cast<size_t>(p)).group ? in : out)[t]++;
        }
      }
      auto [ilo, ihi] = std::minmax_element(in.begin(), in.end());
      auto [olo, ohi] = std::minmax_element(out.begin(), out.end());
      in_min = std::min(in_min, *ilo);
      in_max = std::max(in_max, *ihi);
      out_min = std::min(out_min, *olo);
      out_max = std::max(out_max, *ohi);
      ++rounds;
    }
    WindowSpread w2 = windows(ring, k, 2, 100), w30 = windows(ring, k, 30, 100);
    // Churn: one member joins the last leaf; targets that change, over 100 rounds.
    auto joined = members;
    joined.push_back({"10.255.255.255:19737", members.back().group});
    GroupedRing after(joined);
    uint64_t changed = 0, total = 0;
    for (int r = 0; r < 100; ++r) {
      for (int p = 0; p < n; ++p) {
        auto a = ring.targets(static_cast<size_t>(p), kRound + r * 37, k);
        auto b =
            after.targets(*after.position(ring.at(static_cast<size_t>(p))), kRound + r * 37, k);
        std::vector<std::string> ia, ib;
        for (size_t t : a) ia.push_back(ring.at(t).id);
        for (size_t t : b) ib.push_back(after.at(t).id);
        std::sort(ia.begin(), ia.end());
        std::sort(ib.begin(), ib.end());
        std::vector<std::string> common;
        std::set_intersection(ia.begin(), ia.end(), ib.begin(), ib.end(),
                              std::back_inserter(common));
        changed += ia.size() - common.size();
        total += ia.size();
      }
    }
    state.counters["members"] = n;
    state.counters["k"] = k;
    state.counters["peers_max"] = static_cast<double>(peers_max);
    state.counters["coverage_rounds"] = rounds;
    state.counters["in_mates_min"] = in_min;
    state.counters["in_mates_max"] = in_max;
    state.counters["in_outside_min"] = out_min;
    state.counters["in_outside_max"] = out_max;
    state.counters["w2_mates_min"] = w2.in_min;
    state.counters["w2_mates_max"] = w2.in_max;
    state.counters["w2_outside_min"] = w2.out_min;
    state.counters["w2_outside_max"] = w2.out_max;
    state.counters["w30_mates_min"] = w30.in_min;
    state.counters["w30_mates_max"] = w30.in_max;
    state.counters["w30_outside_min"] = w30.out_min;
    state.counters["w30_outside_max"] = w30.out_max;
    state.counters["churn_changed_ratio"] =
        static_cast<double>(changed) / static_cast<double>(total);
  }
}
BENCHMARK(BM_SimulateGroups)
    ->Args({1000, 8})
    ->Args({1024, 8})  // 32 full leaves: the exact case
    ->Args({10000, 8})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace
}  // namespace fabricwatch::probes

BENCHMARK_MAIN();
