#include "probes/mesh/selection.h"

#include <gtest/gtest.h>

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

TEST(SelectionTest, TopologyGroupsMeshInsideAndSampleAcross) {
  std::vector<Candidate> members;
  for (int g = 0; g < 10; ++g)
    for (int i = 0; i < 8; ++i)
      members.push_back({"10.0." + std::to_string(g) + "." + std::to_string(i) + ":1",
                         "rack-" + std::to_string(g)});
  Candidate self = members[0];
  auto peers = selectPeers(members, self, 99, 4);
  int same = 0, cross = 0;
  for (const auto& p : peers) {
    auto it = std::find_if(members.begin(), members.end(), [&](auto& c) { return c.id == p; });
    ASSERT_NE(it, members.end());
    (it->group == self.group ? same : cross)++;
  }
  EXPECT_EQ(same, 7);  // everyone else in rack-0
  EXPECT_GE(cross, 1);
  EXPECT_LE(cross, 4);
}

}  // namespace
}  // namespace fabricwatch::probes
