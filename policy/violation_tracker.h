#pragma once
// The lifecycle of a violation in `serve`: when it began, a hold after its condition clears
// (state "recovering", so a flapping port neither appears nor vanishes between scrapes), and a
// short list of those that cleared, with when. Keyed by the violation's identity (pack, rule,
// subject). Bounded: recovering entries at most kMaxRecovering (past it the oldest clear
// early), cleared ones at most kMaxCleared (newest kept). `check` evaluates once and uses none.

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/snapshot.h"

namespace fabricwatch::policy {

class ViolationTracker {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  static constexpr size_t kMaxRecovering = 256;
  static constexpr size_t kMaxCleared = 32;

  struct Cleared {
    core::Violation violation;  // as last seen; began_at and recovering_since set
    TimePoint cleared_at;       // when its hold ended
  };

  // Marks this evaluation's violations "active" with the time each began (kept from an earlier
  // evaluation while it stayed active or recovering), moves those that are gone to
  // "recovering" for `hold` (0: they clear at once), clears those whose hold has passed, and
  // appends the recovering ones to `current` (in identity order). While the first collection
  // is still running (`settled` false: some sources have not reported), a violation that goes
  // away is forgotten instead: it was judged on part of the facts. So is one gone at the first
  // settled evaluation: it was seen only while sources were missing (a rule that fails on an
  // absent fact, before the source that brings the fact reported for the first time).
  void update(std::vector<core::Violation>& current, TimePoint now, std::chrono::milliseconds hold,
              bool settled = true);

  std::vector<Cleared> cleared() const;  // newest first
  uint64_t clearedTotal() const;
  size_t tracked() const;  // active and recovering

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  void clearLocked(core::Violation v, TimePoint now);

  mutable std::mutex mu_;
  std::map<Key, core::Violation> entries_;
  std::deque<Cleared> cleared_;
  uint64_t cleared_total_ = 0;
  bool settled_ = false;  // an earlier evaluation was settled
};

}  // namespace fabricwatch::policy
