#include "probes/mesh/selection.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace fabricwatch::probes {

uint64_t stableHash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  // splitmix64 finaliser: FNV alone clusters similar strings ("10.0.0.1:1", "10.0.0.2:1").
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

SelectionRing::SelectionRing(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<std::pair<uint64_t, size_t>> order;
  order.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) order.emplace_back(stableHash(ids[i]), i);
  std::sort(order.begin(), order.end());  // ties broken by id order (ids are sorted)
  ids_.reserve(ids.size());
  hashes_.reserve(ids.size());
  for (auto& [h, i] : order) {
    ids_.push_back(std::move(ids[i]));
    hashes_.push_back(h);
  }
}

std::optional<size_t> SelectionRing::position(std::string_view id) const {
  uint64_t h = stableHash(id);
  auto it = std::lower_bound(hashes_.begin(), hashes_.end(), h);
  for (; it != hashes_.end() && *it == h; ++it) {
    size_t p = static_cast<size_t>(it - hashes_.begin());
    if (ids_[p] == id) return p;
  }
  return std::nullopt;
}

namespace {

// The walk of ring offsets for one ring size, round and k (see selection.h).
struct OffsetWalk {
  uint64_t others, m, base;
  OffsetWalk(size_t n, uint64_t round, int k)
      : others(n - 1),
        m(SelectionRing::cycleLength(n)),
        base(((round % m) * (static_cast<uint64_t>(k) % m)) % m) {}
  // Offsets walk a cycle of length M = bit_ceil(N-1), k per round. M depends on N only through
  // its power of two, so a join or leave does not reshuffle the schedule; raw offsets past
  // N-1 fold back by M/2 onto ones visited in the same cycle (M/2 < N-1 <= M). Folding by
  // M/2, not modulo N-1, keeps the folded value independent of N too.
  uint64_t at(uint64_t j) const {
    uint64_t raw = (base + j) % m;
    return 1 + (raw < others ? raw : raw - m / 2);
  }
};

}  // namespace

std::vector<uint64_t> ringOffsets(size_t n, uint64_t round, int k) {
  std::vector<uint64_t> out;
  if (n < 2 || k <= 0) return out;
  OffsetWalk walk(n, round, k);
  uint64_t count = std::min<uint64_t>(static_cast<uint64_t>(k), n - 1);
  out.reserve(count);
  for (uint64_t j = 0; j < count; ++j) {
    uint64_t offset = walk.at(j);
    if (std::find(out.begin(), out.end(), offset) == out.end()) out.push_back(offset);
  }
  return out;
}

std::vector<size_t> SelectionRing::targets(size_t pos, uint64_t round, int k) const {
  std::vector<size_t> out;
  const size_t n = ids_.size();
  if (n < 2 || k <= 0) return out;
  OffsetWalk walk(n, round, k);
  uint64_t count = std::min<uint64_t>(static_cast<uint64_t>(k), n - 1);
  out.reserve(count);
  for (uint64_t j = 0; j < count; ++j) {
    size_t t = static_cast<size_t>((pos + walk.at(j)) % n);
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

uint64_t SelectionRing::cycleLength(size_t n) {
  return n < 2 ? 1 : std::bit_ceil(static_cast<uint64_t>(n - 1));
}

GroupShares groupShares(int k, uint64_t round, size_t mates, bool outsiders) {
  GroupShares s;
  if (k <= 0) return s;
  if (!outsiders) {
    s.in = k;
  } else if (k == 1) {
    s.in = round % 2 == 0 ? 1 : 0;  // one peer a round: mates and outsiders take turns
  } else {
    s.in = (k + 1) / 2;
  }
  s.in = static_cast<int>(std::min<size_t>(static_cast<size_t>(s.in), mates));
  s.out = outsiders ? k - s.in : 0;
  return s;
}

namespace {

std::vector<std::string> plainSelection(const std::vector<Candidate>& members,
                                        const Candidate& self, uint64_t round, int k) {
  std::vector<std::string> ids;
  ids.reserve(members.size() + 1);
  for (const auto& m : members) ids.push_back(m.id);
  ids.push_back(self.id);
  SelectionRing ring(std::move(ids));
  std::vector<std::string> out;
  auto pos = ring.position(self.id);
  if (!pos) return out;
  for (size_t t : ring.targets(*pos, round, k)) out.push_back(ring.at(t));
  return out;
}

}  // namespace

GroupedRing::GroupedRing(std::vector<Candidate> members) {
  // One entry per id (the first listed), then arcs: groups in hash order, members in hash
  // order within their group.
  std::stable_sort(members.begin(), members.end(),
                   [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
  members.erase(std::unique(members.begin(), members.end(),
                            [](const Candidate& a, const Candidate& b) { return a.id == b.id; }),
                members.end());
  std::vector<Key> keys;
  keys.reserve(members.size());
  for (size_t i = 0; i < members.size(); ++i)
    keys.push_back({stableHash(members[i].group), stableHash(members[i].id), i});
  std::sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) {
    return less(a, members[a.index], b, members[b.index]);
  });
  order_.reserve(members.size());
  keys_.reserve(members.size());
  for (size_t p = 0; p < keys.size(); ++p) {
    order_.push_back(std::move(members[keys[p].index]));
    keys_.push_back({keys[p].group_hash, keys[p].id_hash, p});
  }
  for (size_t p = 0; p < order_.size();) {
    size_t e = p;
    while (e < order_.size() && order_[e].group == order_[p].group) ++e;
    for (size_t i = p; i < e; ++i) arc_of_.push_back(arcs_.size());
    arcs_.push_back({p, e - p});
    widest_ = std::max(widest_, e - p);
    p = e;
  }
}

bool GroupedRing::less(const Key& a, const Candidate& ca, const Key& b, const Candidate& cb) {
  if (a.group_hash != b.group_hash) return a.group_hash < b.group_hash;
  if (ca.group != cb.group) return ca.group < cb.group;
  if (a.id_hash != b.id_hash) return a.id_hash < b.id_hash;
  return ca.id < cb.id;
}

std::optional<size_t> GroupedRing::position(const Candidate& c) const {
  Key key{stableHash(c.group), stableHash(c.id), 0};
  size_t lo = 0, hi = order_.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (less(keys_[mid], order_[mid], key, c))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < order_.size() && order_[lo].id == c.id && order_[lo].group == c.group) return lo;
  return std::nullopt;
}

std::vector<size_t> GroupedRing::targets(size_t pos, uint64_t round, int k) const {
  std::vector<size_t> out;
  if (pos >= order_.size() || k <= 0) return out;
  const size_t j = arc_of_[pos], groups = arcs_.size();
  const auto [s, g] = arcs_[j];
  const size_t d = pos - s;
  GroupShares share = groupShares(k, round, g - 1, groups > 1);
  // Inside: the arc is the group's ring (in ring order), k_in offsets a round; a group of
  // k_in + 1 or fewer is probed in full.
  if (share.in > 0 && g - 1 <= static_cast<size_t>(share.in)) {
    for (size_t i = 0; i < g; ++i)
      if (i != d) out.push_back(s + i);
  } else if (share.in > 0) {
    for (uint64_t o : ringOffsets(g, round, share.in)) out.push_back(s + (d + o) % g);
  }
  // Outside: offset q = o - 1 on a ring of (groups-1) * widest + 1 names an arc ahead
  // (a = 1 + q mod (groups-1), which changes fastest, so a round's offsets reach different
  // arcs) and a rotation b = q / (groups-1) within it. Offsets that land on a hole or on a
  // member already chosen are passed over for the next ones of the walk.
  const size_t wanted = static_cast<size_t>(k);  // out.size() <= share.in <= k
  if (groups > 1 && share.out > 0 && out.size() < wanted) {
    const uint64_t ahead = groups - 1, ring = ahead * widest_ + 1;
    const int k_out = static_cast<int>(wanted - out.size());
    OffsetWalk walk(ring, round, k_out);
    for (uint64_t i = 0; i < walk.m && out.size() < wanted; ++i) {
      uint64_t q = walk.at(i) - 1;
      const Arc& t = arcs_[(j + 1 + q % ahead) % groups];
      // Both arcs padded to the larger: each slot of the target arc gets at most one prober
      // of this arc per offset; a slot past the target's members is a hole, passed over.
      size_t slot = (d + q / ahead) % std::max(g, t.size);
      if (slot >= t.size) continue;
      size_t target = t.start + slot;
      if (std::find(out.begin(), out.end(), target) == out.end()) out.push_back(target);
    }
  }
  return out;
}

std::vector<std::string> selectPeers(const std::vector<Candidate>& members, const Candidate& self,
                                     uint64_t round, int k) {
  std::vector<std::string> out;
  if (self.group.empty()) {
    out = plainSelection(members, self, round, k);
  } else {
    std::vector<Candidate> all;
    all.reserve(members.size() + 1);
    all.push_back(self);  // first, so that its own group wins over a listed one
    for (const auto& m : members)
      if (m.id != self.id) all.push_back(m);
    GroupedRing ring(std::move(all));
    auto pos = ring.position(self);
    if (!pos) return out;
    for (size_t t : ring.targets(*pos, round, k)) out.push_back(ring.at(t).id);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace fabricwatch::probes
