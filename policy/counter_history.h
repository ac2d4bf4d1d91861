#pragma once
// The recent past of the RDMA counters in `serve`, so that rules judge change rather than
// totals since boot. Per counter of rdma.devices (each port's counters, counters_ext and
// hw_counters, each device's own hw_counters) a ring of (time, value) samples, taken once per
// collection of the rdma source. From it, next to each counter map M of the facts:
//   M_increase  the increase since the previous collection; a value that went down is a counter
//               reset (a driver reload, perfquery -R) and the increase is the new value, as
//               Prometheus's increase() has it
//   M_rate      the increase per second over the window (policy.counter_window): over the
//               samples within it, divided by the time they actually span (at least the last
//               two collections, so an interval longer than the window still has a rate)
// and rdma.counter_history {collections, window_seconds, span_seconds, counters, untracked}.
// A counter appears in M_increase and M_rate from its second collection on. `check` keeps no
// history: none of these facts exist there.
//
// Bounded: at most kMaxCounters counters (the rest are counted as untracked and have no derived
// facts), each with at most kMaxSamples samples spaced at least window / (kMaxSamples - 1)
// apart (the newest is always kept), so a window of any length fits. A counter that a
// collection does not report (its device gone) is forgotten.

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/value.h"

namespace fabricwatch::policy {

class CounterHistory {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  using Window = std::chrono::milliseconds;
  static constexpr size_t kMaxCounters = 4096;
  static constexpr size_t kMaxSamples = 64;

  // One counter's change as the history knows it.
  struct Change {
    core::Value increase;  // since the previous collection: int for int counters
    double rate = 0;       // per second over the window
    double span_seconds = 0;
  };

  // Records one collection of the rdma source, taken at `at`, from the facts' rdma.devices.
  // A collection already recorded (the same `at`: the stage runs on every publish, and most
  // publishes are other sources') is ignored; so is a time that goes back, after which the
  // samples restart.
  void record(const core::Value& facts, TimePoint at, Window window);
  // Adds the derived facts to rdma.devices and rdma.counter_history, from what was recorded.
  void annotate(core::Value& facts, Window window) const;

  // One counter, by key ("DEVICE/PORT/MAP/NAME", PORT empty for a device's own counters):
  // record one sample of it, and its change. The collection-level record() is built on these.
  void sample(const std::string& key, const core::Value& value, TimePoint at, Window window);
  std::optional<Change> change(const std::string& key, Window window) const;

  size_t counters() const;
  size_t untracked() const;
  size_t samples(const std::string& key) const;  // 0 for a counter not tracked
  uint64_t collections() const;

 private:
  struct Sample {
    TimePoint at;
    double total;  // the counter's increases summed over its life here (resets taken out)
  };
  struct Series {
    core::Value last, previous;  // the raw values of the last two collections
    bool has_previous = false;
    double total = 0;
    std::deque<Sample> samples;
    uint64_t seen = 0;  // the collection that last reported it
  };
  void sampleLocked(const std::string& key, const core::Value& value, TimePoint at, Window window);
  std::optional<Change> changeLocked(const Series& s, Window window) const;

  mutable std::mutex mu_;
  std::map<std::string, Series, std::less<>> series_;
  TimePoint last_at_{};
  uint64_t collections_ = 0;
  size_t untracked_ = 0;
};

}  // namespace fabricwatch::policy
