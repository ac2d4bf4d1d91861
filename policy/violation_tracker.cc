#include "policy/violation_tracker.h"

#include <algorithm>
#include <set>

namespace fabricwatch::policy {

void ViolationTracker::clearLocked(core::Violation v, TimePoint now) {
  cleared_.push_front(Cleared{std::move(v), now});
  while (cleared_.size() > kMaxCleared) cleared_.pop_back();
  ++cleared_total_;
}

void ViolationTracker::update(std::vector<core::Violation>& current, TimePoint now,
                              std::chrono::milliseconds hold, bool settled) {
  std::lock_guard lock(mu_);
  std::set<Key> seen;
  for (auto& v : current) {
    Key key{v.pack, v.rule, v.subject};
    // A rule may list one subject twice (it should not); the first wins.
    if (!seen.insert(key).second) continue;
    auto it = entries_.find(key);
    v.began_at = it != entries_.end() ? it->second.began_at : now;
    v.state = "active";
    v.recovering_since = {};
    entries_.insert_or_assign(std::move(key), v);
  }
  for (auto& v : current) v.state = "active";  // duplicates too
  size_t recovering = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    core::Violation& v = it->second;
    if (!settled || !settled_) {
      it = entries_.erase(it);
      continue;
    }
    if (v.state == "active") {
      v.state = "recovering";
      v.recovering_since = now;
    }
    // A clock set back does not stretch the hold: elapsed time is never negative.
    auto elapsed = now > v.recovering_since ? now - v.recovering_since : TimePoint::duration(0);
    if (elapsed >= hold) {
      clearLocked(std::move(v), now);
      it = entries_.erase(it);
      continue;
    }
    ++recovering;
    ++it;
  }
  // Past the bound (workloads coming and going), the longest recovering clear early.
  while (recovering > kMaxRecovering) {
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.state != "recovering") continue;
      if (oldest == entries_.end() || it->second.recovering_since < oldest->second.recovering_since)
        oldest = it;
    }
    clearLocked(std::move(oldest->second), now);
    entries_.erase(oldest);
    --recovering;
  }
  settled_ = settled_ || settled;
  for (const auto& [key, v] : entries_)
    if (v.state == "recovering") current.push_back(v);
}

std::vector<ViolationTracker::Cleared> ViolationTracker::cleared() const {
  std::lock_guard lock(mu_);
  return {cleared_.begin(), cleared_.end()};
}

uint64_t ViolationTracker::clearedTotal() const {
  std::lock_guard lock(mu_);
  return cleared_total_;
}

size_t ViolationTracker::tracked() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace fabricwatch::policy
