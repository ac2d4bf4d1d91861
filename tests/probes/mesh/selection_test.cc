#include "probes/mesh/selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <set>

namespace fabricwatch::probes {
namespace {

std::vector<std::string> fleet(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i)
    ids.push_back("10." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ".1:19737");
  return ids;
}

TEST(SelectionTest, StableHashIsFixed) {
  // The schedule must agree across builds and platforms: pin the hash.
  EXPECT_EQ(stableHash(""), stableHash(""));
  EXPECT_NE(stableHash("10.0.0.1:19737"), stableHash("10.0.0.2:19737"));
  EXPECT_EQ(stableHash("node-a"), 0xfc3d268eb41253a0ull);
}

TEST(SelectionTest, EveryOrderedPairCoveredWithinNOverKRounds) {
  const int n = 300, k = 8;
  SelectionRing ring(fleet(n));
  const int rounds = static_cast<int>((SelectionRing::cycleLength(n) + k - 1) / k);
  EXPECT_LE(rounds, 2 * (n - 1) / k + 1);
  std::vector<std::vector<bool>> seen(n, std::vector<bool>(n, false));
  for (int r = 0; r < rounds; ++r)
    for (int p = 0; p < n; ++p)
      for (size_t t : ring.targets(static_cast<size_t>(p), 1000 + r, k)) seen[p][t] = true;
  int missing = 0;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) missing += a != b && !seen[a][b];
  EXPECT_EQ(missing, 0);
}

TEST(SelectionTest, InDegreeIsExactlyKEveryRound) {
  const int n = 257, k = 6;
  SelectionRing ring(fleet(n));
  // Every round of a full cycle, folded offsets included.
  for (uint64_t r = 0; r < SelectionRing::cycleLength(n); ++r) {
    std::vector<int> in(n, 0);
    for (int p = 0; p < n; ++p) {
      auto t = ring.targets(static_cast<size_t>(p), r, k);
      ASSERT_EQ(t.size(), static_cast<size_t>(k));
      std::set<size_t> uniq(t.begin(), t.end());
      EXPECT_EQ(uniq.size(), t.size());
      EXPECT_FALSE(uniq.count(static_cast<size_t>(p)));
      for (size_t x : t) in[x]++;
    }
    for (int p = 0; p < n; ++p) ASSERT_EQ(in[p], k) << "round " << r << " node " << p;
  }
}

TEST(SelectionTest, SmallFleetProbesEveryoneElse) {
  auto ids = fleet(4);
  std::vector<Candidate> members;
  for (const auto& id : ids) members.push_back({id, ""});
  auto peers = selectPeers(members, {ids[0], ""}, 12345, 8);
  EXPECT_EQ(peers.size(), 3u);
  EXPECT_EQ(std::count(peers.begin(), peers.end(), ids[0]), 0);
  // Self need not be listed, and a lone node has nobody to probe.
  EXPECT_EQ(selectPeers({}, {ids[0], ""}, 1, 8).size(), 0u);
}

TEST(SelectionTest, AllNodesAgreeWithoutACoordinator) {
  // Two nodes given the member list in different orders compute the same schedule.
  auto ids = fleet(50);
  std::vector<Candidate> a, b;
  for (const auto& id : ids) a.push_back({id, ""});
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) b.push_back({*it, ""});
  for (uint64_t r = 0; r < 10; ++r)
    EXPECT_EQ(selectPeers(a, {ids[3], ""}, r, 4), selectPeers(b, {ids[3], ""}, r, 4));
}

TEST(SelectionTest, ChurnMovesTargetsByAtMostOneRingPosition) {
  const int n = 400, k = 8;
  auto ids = fleet(n);
  SelectionRing before(ids);
  ids.push_back("10.99.99.99:19737");
  SelectionRing after(ids);
  auto newcomer = *after.position("10.99.99.99:19737");
  int changed = 0, total = 0, rounds = 0, far = 0;
  const uint64_t m = SelectionRing::cycleLength(n);
  ASSERT_EQ(m, SelectionRing::cycleLength(n + 1));
  // Realistic round numbers (unix ms / interval), folded rounds included.
  for (uint64_t r = 170000000000; rounds < 200; r += 7) {
    ++rounds;
    // The one raw offset equal to the old N-1 folds for N but not for N+1: there alone a
    // target may jump.
    uint64_t base = ((r % m) * k) % m;
    bool boundary = false;
    for (int j = 0; j < k; ++j)
      boundary = boundary || (base + j) % m == static_cast<uint64_t>(n - 1);
    for (int p = 0; p < n; ++p) {
      const std::string& self = before.at(static_cast<size_t>(p));
      auto old_t = before.targets(static_cast<size_t>(p), r, k);
      auto new_t = after.targets(*after.position(self), r, k);
      for (size_t j = 0; j < old_t.size(); ++j) {
        ++total;
        const std::string& o = before.at(old_t[j]);
        const std::string& nw = after.at(new_t[j]);
        if (o == nw) continue;
        ++changed;
        // Either the newcomer, or the old target's ring neighbour: nobody jumps further.
        size_t op = *after.position(o);
        size_t np = new_t[j];
        bool neighbour =
            np == newcomer || (np + 1) % after.size() == op || (op + 1) % after.size() == np;
        far += !neighbour;
        if (!boundary) {
          EXPECT_TRUE(neighbour) << o << " -> " << nw;
        }
      }
    }
  }
  EXPECT_GT(total, 0);
  EXPECT_LT(changed, total);  // a join never reshuffles everything
  EXPECT_LT(far * 100, total);
  EXPECT_GT(rounds, 0);
}

// A fleet in groups of the given sizes ("leaf-0", ...), addresses as fleet() gives them.
std::vector<Candidate> grouped(const std::vector<int>& sizes) {
  std::vector<Candidate> out;
  int total = 0;
  for (int s : sizes) total += s;
  auto ids = fleet(total);
  size_t i = 0;
  for (size_t g = 0; g < sizes.size(); ++g)
    for (int j = 0; j < sizes[g]; ++j) out.push_back({ids[i++], "leaf-" + std::to_string(g)});
  return out;
}

struct RoundCounts {
  std::map<std::string, int> in_from_mates, in_from_outside;
  size_t max_peers = 0, min_outsiders = SIZE_MAX;
};

RoundCounts simulateRound(const std::vector<Candidate>& members, uint64_t round, int k) {
  std::map<std::string, std::string> group;
  for (const auto& m : members) group[m.id] = m.group;
  RoundCounts c;
  for (const auto& self : members) {
    auto peers = selectPeers(members, self, round, k);
    c.max_peers = std::max(c.max_peers, peers.size());
    size_t outsiders = 0;
    for (const auto& p : peers) {
      EXPECT_NE(p, self.id);
      if (group.at(p) == self.group) {
        c.in_from_mates[p]++;
      } else {
        c.in_from_outside[p]++;
        ++outsiders;
      }
    }
    c.min_outsiders = std::min(c.min_outsiders, outsiders);
  }
  return c;
}

TEST(SelectionTest, GroupsKeepAtMostKPeersAndExactInGroupInDegree) {
  // Three full leaves of 32, one of 11 and one of 3: k_in = 4 except in the leaf of 3.
  auto members = grouped({32, 32, 32, 11, 3});
  for (int k : {2, 3, 8, 16}) {
    GroupShares full = groupShares(k, 0, 31, true);
    EXPECT_EQ(full.in + full.out, k);
    for (uint64_t r = 1000; r < 1040; ++r) {
      RoundCounts c = simulateRound(members, r, k);
      EXPECT_LE(c.max_peers, static_cast<size_t>(k)) << "k=" << k << " round " << r;
      EXPECT_GE(c.min_outsiders, 1u) << "k=" << k << " round " << r;
      for (const auto& m : members) {
        size_t g = m.group == "leaf-4" ? 3 : m.group == "leaf-3" ? 11 : 32;
        // Every mate of a group uses the same offsets: exact, not a bound.
        int want = static_cast<int>(ringOffsets(g, r, std::min<int>(full.in, g - 1)).size());
        if (g - 1 <= static_cast<size_t>(full.in)) want = static_cast<int>(g - 1);
        EXPECT_EQ(c.in_from_mates[m.id], want) << m.id << " k=" << k << " round " << r;
        // Outsiders: exactly one per offset from each arc at least as large as the node's
        // own. With k_out >= 4 (k >= 8) a round's offsets reach all 4 other arcs, two of
        // them leaves of 32: at least 2 for every node, the others' k_out for the leaf of 3.
        // (k = 3 has one outside offset a round, which may come from a smaller arc: 0.)
        if (k >= 8) {
          EXPECT_GE(c.in_from_outside[m.id], 2) << m.id << " k=" << k;
        }
        if (k >= 8 && m.group == "leaf-4") {
          EXPECT_GE(c.in_from_outside[m.id], k - full.in);
        }
        EXPECT_LE(c.in_from_outside[m.id], 2 * k) << m.id << " k=" << k;
      }
    }
  }
}

TEST(SelectionTest, EqualGroupsGiveExactOutsideInDegree) {
  // Equal arcs tile the arrangement: each offset brings every node exactly one outsider.
  for (auto sizes : {std::vector<int>(2, 6), std::vector<int>(8, 16), std::vector<int>(5, 7)}) {
    auto members = grouped(sizes);
    for (uint64_t r = 500; r < 520; ++r) {
      RoundCounts c = simulateRound(members, r, 8);
      size_t g = static_cast<size_t>(sizes[0]);
      int in = static_cast<int>(ringOffsets(g, r, 4).size());
      int want = static_cast<int>(ringOffsets(members.size() - g + 1, r, 8 - in).size());
      for (const auto& m : members)
        EXPECT_EQ(c.in_from_outside[m.id], want) << m.id << " round " << r;
    }
  }
}

TEST(SelectionTest, GroupsCoverEveryPairWithinTheirCycles) {
  auto members = grouped({32, 32, 32, 32, 20});
  const int k = 8;
  std::map<std::string, std::string> group;
  for (const auto& m : members) group[m.id] = m.group;
  std::set<std::pair<std::string, std::string>> seen;
  // Outside cycle: bit_ceil(N - g) / k_out rounds, 128 / 4 = 32 for the full leaves (the leaf
  // of 20 has 128 outsiders: 256 / 4 = 64).
  for (uint64_t r = 7; r < 7 + 64; ++r)
    for (const auto& self : members)
      for (const auto& p : selectPeers(members, self, r, k)) seen.insert({self.id, p});
  EXPECT_EQ(seen.size(), members.size() * (members.size() - 1));
}

TEST(SelectionTest, SmallGroupsAreProbedInFullAndGiveTheirShareOutside) {
  auto members = grouped({3, 40});
  Candidate self = members[0];  // in the leaf of 3
  for (uint64_t r = 0; r < 10; ++r) {
    auto peers = selectPeers(members, self, r, 8);
    EXPECT_EQ(peers.size(), 8u);
    EXPECT_NE(std::find(peers.begin(), peers.end(), members[1].id), peers.end());
    EXPECT_NE(std::find(peers.begin(), peers.end(), members[2].id), peers.end());
  }
  // Alone in its group: k outsiders. The whole fleet one group: the ring over the group.
  Candidate lone{"10.9.9.9:19737", "leaf-lone"};
  EXPECT_EQ(selectPeers(members, lone, 3, 8).size(), 8u);
  auto one = grouped({20});
  EXPECT_EQ(selectPeers(one, one[0], 3, 8), selectPeers(one, Candidate{one[0].id, ""}, 3, 8));
}

// The leaf/spine e2e's fleet (tests/deploy/leafspine_lab.py): 2 leaves of 6, k = 16. Every node
// probes all 11 others every round through the grouped selection, as that test relies on.
TEST(SelectionTest, TwoLeavesOfSixWithSixteenPeersAreAFullMesh) {
  auto members = grouped({6, 6});
  for (uint64_t r = 176400000000; r < 176400000020; ++r)
    for (const auto& self : members) EXPECT_EQ(selectPeers(members, self, r, 16).size(), 11u);
}

TEST(SelectionTest, GroupedSelectionIsDeterministicAndOrderFree) {
  auto members = grouped({32, 32, 17});
  auto shuffled = members;
  std::reverse(shuffled.begin(), shuffled.end());
  std::rotate(shuffled.begin(), shuffled.begin() + 13, shuffled.end());
  std::vector<Candidate> without_self(members.begin() + 1, members.end());
  for (uint64_t r = 176400000000; r < 176400000010; ++r) {
    auto a = selectPeers(members, members[0], r, 8);
    EXPECT_EQ(a, selectPeers(shuffled, members[0], r, 8));
    EXPECT_EQ(a, selectPeers(without_self, members[0], r, 8));
    EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  }
}

TEST(SelectionTest, UnknownGroupsAreOutsidersAndAnUngroupedSelfUsesThePlainRing) {
  auto members = grouped({8, 8});
  for (size_t i = 8; i < 16; ++i) members[i].group = "";  // not learned yet
  Candidate self = members[0];
  for (uint64_t r = 0; r < 8; ++r) {
    auto peers = selectPeers(members, self, r, 8);
    int mates = 0;
    for (const auto& p : peers)
      for (size_t i = 1; i < 8; ++i) mates += p == members[i].id;
    EXPECT_EQ(mates, 4);
    EXPECT_EQ(peers.size(), 8u);
  }
  Candidate unknown = members[8];
  std::vector<std::string> ids;
  for (const auto& m : members) ids.push_back(m.id);
  SelectionRing ring(ids);
  auto targets = ring.targets(*ring.position(unknown.id), 5, 8);
  std::vector<std::string> plain;
  for (size_t t : targets) plain.push_back(ring.at(t));
  std::sort(plain.begin(), plain.end());
  EXPECT_EQ(selectPeers(members, unknown, 5, 8), plain);
}

TEST(SelectionTest, OnePeerARoundAlternatesMatesAndOutsiders) {
  auto members = grouped({4, 4});
  EXPECT_EQ(groupShares(1, 0, 3, true).in, 1);
  EXPECT_EQ(groupShares(1, 1, 3, true).out, 1);
  EXPECT_EQ(selectPeers(members, members[0], 0, 1).size(), 1u);
  EXPECT_EQ(selectPeers(members, members[0], 1, 1).size(), 1u);
}

}  // namespace
}  // namespace fabricwatch::probes
