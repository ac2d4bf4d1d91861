#pragma once
// Runs sources on their own intervals (with jitter) and deadlines, and publishes a new snapshot
// after every run: the facts of all sources merged, then each stage applied in order.
//
// A source that overruns its timeout is reported failed ("timed out") at the deadline and its
// facts are withdrawn (as a failed run's are), so a hung read can neither delay a scrape nor
// leave stale facts published as current. No run starts on top of a stuck one: the same
// source object is never run twice at once. When the stuck run returns, the next run starts
// as usual; when it is still stuck at the next run's time and the source was added with a
// factory, the stuck run is abandoned (its thread finishes or hangs on its own, holding its
// own instance) and a fresh instance of the source runs instead. At most kMaxAbandoned runs
// per source are abandoned and not yet returned, so a mount that wedges every read bounds the
// threads it holds. stop() returns promptly; a run still stuck in the kernel is abandoned.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/snapshot.h"
#include "core/source.h"

namespace fabricwatch::core {

struct Schedule {
  std::chrono::milliseconds interval{30000};
  std::chrono::milliseconds timeout{10000};
};

// Makes a fresh instance of a source, to run in place of one whose run is stuck; null when it
// makes none now (the run stays stuck, as without a factory).
using SourceFactory = std::function<std::shared_ptr<Source>()>;

class Scheduler {
 public:
  // jitter: fraction of the interval (0..0.5) by which each run start is randomly shifted.
  Scheduler(SnapshotStore& store, CollectContext ctx, double jitter = 0.1,
            uint64_t seed = std::random_device{}());
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Abandoned runs of one source that may be stuck at once, besides the one it waits for.
  static constexpr size_t kMaxAbandoned = 2;

  // `fresh`: how to replace the source when a run is stuck (none: wait until it returns).
  void addSource(std::shared_ptr<Source> source, Schedule schedule, SourceFactory fresh = {});
  void addStage(std::shared_ptr<Stage> stage);
  // Takes over the statuses, facts and generation of a stopped scheduler whose sources have the
  // same names, so that a reload keeps what is known instead of starting from empty.
  void carryOver(Scheduler& previous);

  // Background mode: one thread per source.
  void start();
  void stop();
  // One-shot mode (`facts`, `check`): runs every source once, concurrently, each bounded by its
  // timeout, then publishes.
  void runOnce();
  // Publishes a new snapshot from the sources' latest facts without running a source: the
  // stages apply again (after a pack reload, say) and the result is published at once.
  void republish();

 private:
  struct Slot;
  struct Run;
  void loop(Slot& slot);
  // Runs one collection with the slot's deadline; true if it finished in time.
  bool runWithDeadline(Slot& slot);
  // Its two halves: start the run on a thread of its own (nothing when a stuck run forbids a
  // new one; the status says so), then await it up to its deadline and record the result.
  std::optional<Run> startRun(Slot& slot);
  bool awaitRun(Slot& slot, Run run);
  void publishLocked();
  std::chrono::milliseconds jittered(std::chrono::milliseconds base);

  SnapshotStore& store_;
  CollectContext ctx_;
  double jitter_;
  std::mt19937_64 rng_;
  std::mutex rng_mu_;

  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::shared_ptr<Stage>> stages_;
  std::mutex publish_mu_;  // guards slot results and generation_
  uint64_t generation_ = 0;

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace fabricwatch::core
