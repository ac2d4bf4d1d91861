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

std::vector<size_t> SelectionRing::targets(size_t pos, uint64_t round, int k) const {
  std::vector<size_t> out;
  size_t n = ids_.size();
  if (n < 2 || k <= 0) return out;
  uint64_t others = n - 1;
  uint64_t count = std::min<uint64_t>(static_cast<uint64_t>(k), others);
  // Offsets walk a cycle of length M = bit_ceil(N-1), k per round. M depends on N only through
  // its power of two, so a join or leave does not reshuffle the schedule; raw offsets past
  // N-1 fold back by M/2 onto ones visited in the same cycle (M/2 < N-1 <= M).
  uint64_t m = cycleLength(n);
  uint64_t base = ((round % m) * (static_cast<uint64_t>(k) % m)) % m;
  out.reserve(count);
  for (uint64_t j = 0; j < count; ++j) {
    uint64_t raw = (base + j) % m;
    // Fold by M/2, not modulo N-1: the folded value then does not depend on N either.
    uint64_t offset = 1 + (raw < others ? raw : raw - m / 2);
    size_t t = static_cast<size_t>((pos + offset) % n);
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

uint64_t SelectionRing::cycleLength(size_t n) {
  return n < 2 ? 1 : std::bit_ceil(static_cast<uint64_t>(n - 1));
}

std::vector<std::string> selectPeers(const std::vector<Candidate>& members, const Candidate& self,
                                     uint64_t round, int k) {
  std::vector<std::string> ids;
  ids.reserve(members.size() + 1);
  for (const auto& m : members) ids.push_back(m.id);
  ids.push_back(self.id);
  SelectionRing ring(std::move(ids));
  std::vector<std::string> out;
  auto pos = ring.position(self.id);
  if (!pos) return out;
  if (!self.group.empty()) {
    for (const auto& m : members)
      if (m.id != self.id && m.group == self.group) out.push_back(m.id);
  }
  for (size_t t : ring.targets(*pos, round, k)) {
    const std::string& id = ring.at(t);
    if (!self.group.empty()) {
      auto it = std::find_if(members.begin(), members.end(),
                             [&](const Candidate& c) { return c.id == id; });
      if (it != members.end() && it->group == self.group) continue;  // already in the mesh
    }
    out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace fabricwatch::probes
