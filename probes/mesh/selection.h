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
// With topology groups (self.group set) the k peers are split: k_in = ceil(k/2) inside the
// node's own group and k_out = k - k_in outside it, never more than k in all:
//  - the fleet is arranged in arcs, one per group (groups in hash order, members in hash order
//    within each); members whose group is not known yet ("") form one more arc;
//  - inside: the arc is the group's ring, with the offsets above for its size g: every member
//    is probed by exactly as many mates as the round has distinct offsets (k_in when
//    k_in <= bit_ceil(g-1)/2), the same offsets for all, and by all g-1 of them within
//    ceil(bit_ceil(g-1)/k_in) rounds. A group of k_in + 1 or fewer is probed in full, and its
//    unused share goes outside;
//  - outside: the offsets above on a ring of (G-1)*W + 1 (G arcs, W the largest), offset
//    q = o-1 naming the arc a = 1 + q mod (G-1) ahead (a changes fastest, so one round's
//    offsets reach different arcs) and a rotation b = q div (G-1): the member d-th in its arc
//    (size g) probes slot (d + b) mod max(g, size) of that arc, a slot past its members being
//    a hole that is passed over for the next offset of the walk. So each slot gets at most one
//    prober per arc and offset, and a node gets exactly one per offset from an arc at least as
//    large as its own: with groups of one size, exactly k_out distinct outsiders a round;
//    otherwise at least the round's offsets from arcs no smaller than its own (k_out less the
//    smaller arcs they hit) and at most the offsets used. Every outside pair is probed within
//    ceil(bit_ceil((G-1)*W)/k_out) rounds;
//  - k = 1 alternates: group mates on even rounds, outsiders on odd ones.
// A node whose own group is not set (or not known) uses the plain ring over everyone.

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

// Distinct ring offsets (1..n-1) used in `round` on a ring of n: the scheme above, at most k.
std::vector<uint64_t> ringOffsets(size_t n, uint64_t round, int k);

struct Candidate {
  std::string id;     // the identity every node uses for this member (its listed address)
  std::string group;  // topology group; empty when unknown or unused
};

// How a node with `mates` other members in its group splits its k peers (see above).
struct GroupShares {
  int in = 0;
  int out = 0;
};
GroupShares groupShares(int k, uint64_t round, size_t mates, bool outsiders);

// The arrangement used with topology groups (see above): arcs of groups, each member's targets
// as positions. Built once per membership change; targets() is the per-round step.
class GroupedRing {
 public:
  explicit GroupedRing(std::vector<Candidate> members);  // one entry per id, the first listed
  size_t size() const { return order_.size(); }
  const Candidate& at(size_t pos) const { return order_[pos]; }
  std::optional<size_t> position(const Candidate& c) const;  // by id and group
  // Positions probed by the member at `pos` in `round`: at most k, never pos itself.
  std::vector<size_t> targets(size_t pos, uint64_t round, int k) const;

 private:
  struct Key {
    uint64_t group_hash, id_hash;
    size_t index;
  };
  struct Arc {
    size_t start, size;
  };
  static bool less(const Key& a, const Candidate& ca, const Key& b, const Candidate& cb);
  std::vector<Candidate> order_;  // arrangement order
  std::vector<Key> keys_;
  std::vector<Arc> arcs_;       // in arrangement order
  std::vector<size_t> arc_of_;  // per position: its arc
  size_t widest_ = 0;           // the largest group
};

// The peers `self` probes in `round`: pure, members + self + round -> peers. `members` may or
// may not contain self. Topology groups are used when self.group is not empty; at most k peers,
// sorted.
std::vector<std::string> selectPeers(const std::vector<Candidate>& members, const Candidate& self,
                                     uint64_t round, int k);

}  // namespace fabricwatch::probes
