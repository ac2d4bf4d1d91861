#pragma once
// Which peers a node probes in a round, derived from the membership alone: every node computes
// the same schedule with no coordinator, given the same member list and the round number
// (unix time / interval, so nodes agree to within their clock skew).
//
// Members sit on a ring ordered by a stable hash of their identity (FNV-1a + a mixer, fixed
// across builds and platforms). In round r the node at ring position p probes the members at
// offsets 1 + ((r*k + j) mod M), j = 0..k-1, where M = bit_ceil(N-1) (offsets past N-1 fold
// back by M/2, which does not depend on N). Hence:
//  - coverage: every ordered pair is probed within M/k rounds (N/k to 2N/k), deterministically;
//  - in-degree: every node is probed by exactly k others each round (k <= M/2; the offsets
//    are distinct and all nodes shift by the same ones);
//  - churn: M changes only when N crosses a power of two, so a join or leave moves each target
//    by at most one ring position (nodes whose arc spans the change), or not at all.
// With topology groups, a node probes every member of its own group each round (full mesh
// within a rack or rail) and keeps the ring targets that lie outside its group as the sample
// across groups.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::probes {

uint64_t stableHash(std::string_view s);

class SelectionRing {
 public:
  explicit SelectionRing(std::vector<std::string> ids);
  size_t size() const { return ids_.size(); }
  const std::string& at(size_t pos) const { return ids_[pos]; }
  std::optional<size_t> position(std::string_view id) const;
  // Ring positions probed by the member at `pos` in `round` (k or fewer, never pos itself).
  std::vector<size_t> targets(size_t pos, uint64_t round, int k) const;
  // Offsets cycle with this period (bit_ceil(N-1)); see the file comment.
  static uint64_t cycleLength(size_t n);

 private:
  std::vector<std::string> ids_;  // in ring order
  std::vector<uint64_t> hashes_;
};

struct Candidate {
  std::string id;     // the identity every node uses for this member (its listed address)
  std::string group;  // topology group; empty when unknown or unused
};

// The peers `self` probes in `round`: pure, members + self + round -> peers. `members` may or
// may not contain self. Topology groups are used when self.group is not empty.
std::vector<std::string> selectPeers(const std::vector<Candidate>& members, const Candidate& self,
                                     uint64_t round, int k);

}  // namespace fabricwatch::probes
