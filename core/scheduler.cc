#include "core/scheduler.h"

#include <algorithm>
#include <future>
#include <optional>

#include "core/log.h"
#include "core/utf8.h"

namespace fabricwatch::core {

using Clock = std::chrono::steady_clock;

// The result of one run travels through a shared state, so an abandoned (timed-out) run can
// finish later without touching a scheduler that may be gone.
struct RunState {
  std::promise<Collection> promise;
  Clock::time_point finished;  // written before the promise is set
};

// A run started on its own thread, not yet awaited.
struct Scheduler::Run {
  std::shared_ptr<RunState> state;
  std::future<Collection> future;
  Clock::time_point started;
};

struct Scheduler::Slot {
  std::shared_ptr<Source> source;  // replaced (under publish_mu_) when a stuck run is abandoned
  SourceFactory fresh;
  Schedule schedule;
  Collection last;  // the facts currently published for this source
  SourceStatus status;
  std::future<Collection> pending;  // a run that overran its deadline and has not returned
  std::vector<std::future<Collection>> abandoned;  // stuck runs given up for a fresh instance
};

Scheduler::Scheduler(SnapshotStore& store, CollectContext ctx, double jitter, uint64_t seed)
    : store_(store), ctx_(std::move(ctx)), jitter_(jitter), rng_(seed) {}

Scheduler::~Scheduler() { stop(); }

void Scheduler::addSource(std::shared_ptr<Source> source, Schedule schedule, SourceFactory fresh) {
  auto slot = std::make_unique<Slot>();
  slot->status.name = std::string(source->name());
  slot->source = std::move(source);
  slot->fresh = std::move(fresh);
  slot->schedule = schedule;
  slots_.push_back(std::move(slot));
}

void Scheduler::addStage(std::shared_ptr<Stage> stage) { stages_.push_back(std::move(stage)); }

void Scheduler::carryOver(Scheduler& previous) {
  std::scoped_lock lock(publish_mu_, previous.publish_mu_);
  generation_ = previous.generation_;
  for (auto& slot : slots_) {
    for (auto& old : previous.slots_) {
      if (old->status.name != slot->status.name) continue;
      slot->status = old->status;
      slot->last = old->last;
    }
  }
}

std::chrono::milliseconds Scheduler::jittered(std::chrono::milliseconds base) {
  if (jitter_ <= 0) return base;
  std::lock_guard lock(rng_mu_);
  std::uniform_real_distribution<double> d(-jitter_, jitter_);
  auto ms = static_cast<int64_t>(static_cast<double>(base.count()) * (1.0 + d(rng_)));
  return std::chrono::milliseconds(std::max<int64_t>(ms, 1));
}

namespace {

bool returned(const std::future<Collection>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// Facts and captured labels enter the snapshot here, so this is where what a host, a workload
// or a peer named is made valid UTF-8, once, and counted: a name with invalid bytes would make
// Prometheus reject the whole page and /api/v1/facts emit invalid JSON. Cuts at a bound become
// the fact collection.truncated.<source>.
size_t enterSnapshot(Collection& c, const std::string& source) {
  if (!c.truncated.empty()) {
    Value paths = Value::list();
    for (const auto& p : c.truncated) paths.push(p);
    c.facts["collection"]["truncated"][source] = std::move(paths);
  }
  size_t changed = makeStringsValidUtf8(c.facts);
  if (c.metrics) {
    auto valid = [](const MetricFamilies& fams) {
      for (const auto& f : fams)
        for (const auto& m : f.metric)
          for (const auto& l : m.label)
            if (!isValidUtf8(l.value)) return false;
      return true;
    };
    if (!valid(*c.metrics)) {
      auto copy = std::make_shared<MetricFamilies>(*c.metrics);
      for (auto& f : *copy)
        for (auto& m : f.metric)
          for (auto& l : m.label) changed += makeValidUtf8(l.value);
      c.metrics = std::move(copy);
    }
  }
  return changed;
}

}  // namespace

bool Scheduler::runWithDeadline(Slot& slot) {
  std::optional<Run> run = startRun(slot);
  return run && awaitRun(slot, std::move(*run));
}

std::optional<Scheduler::Run> Scheduler::startRun(Slot& slot) {
  std::erase_if(slot.abandoned, [](const auto& f) { return returned(f); });
  if (slot.pending.valid() && returned(slot.pending)) slot.pending = {};
  if (slot.pending.valid()) {
    // Still stuck at the next run's time: give the run up, with the instance it holds, and
    // go on with a fresh one (a FIFO that blocked a read for good, a wedged mount). A factory
    // may make none (what the source needed on the host is gone): then wait as without one.
    std::shared_ptr<Source> fresh;
    if (slot.fresh && slot.abandoned.size() < kMaxAbandoned) fresh = slot.fresh();
    if (fresh) {
      std::lock_guard lock(publish_mu_);
      slot.abandoned.push_back(std::move(slot.pending));
      slot.source = std::move(fresh);
      ++slot.status.abandoned_total;
      log::warn(
          "scheduler", "abandoned a stuck run; running a fresh instance of the source",
          {{"source", slot.status.name}, {"stuck_runs", std::to_string(slot.abandoned.size())}});
    } else {
      // Do not start another run on top of it.
      std::lock_guard lock(publish_mu_);
      slot.status.success = false;
      slot.status.last_error = "timed out: the previous run is still running past its " +
                               std::to_string(slot.schedule.timeout.count()) + "ms timeout";
      ++slot.status.failures_total;
      slot.status.stuck_runs = 1 + slot.abandoned.size();
      slot.last = Collection{};  // withdrawn at the first deadline; stays so
      return std::nullopt;
    }
  }
  std::shared_ptr<Source> src;
  {
    std::lock_guard lock(publish_mu_);
    src = slot.source;
  }
  Run run;
  run.state = std::make_shared<RunState>();
  run.future = run.state->promise.get_future();
  run.started = Clock::now();
  std::thread([state = run.state, src, ctx = ctx_] {
    Collection c;
    try {
      c = src->collect(ctx);
    } catch (const std::exception& e) {
      c = Collection{};
      c.failed = true;
      c.addError(std::string("exception: ") + e.what());
    }
    state->finished = Clock::now();
    state->promise.set_value(std::move(c));
  }).detach();
  return run;
}

bool Scheduler::awaitRun(Slot& slot, Run run) {
  auto& future = run.future;
  const auto started = run.started;
  // Waited in slices, so that stop() is never held up by a long source (a heavy probe may
  // run for minutes): a run still going at stop is abandoned like one past its deadline.
  auto deadline = started + slot.schedule.timeout;
  bool in_time = false;
  while (true) {
    auto left = deadline - Clock::now();
    auto slice = std::min<Clock::duration>(left, std::chrono::milliseconds(100));
    if (future.wait_for(std::max(slice, Clock::duration::zero())) == std::future_status::ready) {
      in_time = true;
      break;
    }
    if (left <= Clock::duration::zero()) break;
    std::lock_guard lock(stop_mu_);
    if (stopping_) {
      slot.pending = std::move(future);
      return false;
    }
  }
  // Until the run returned, not until it was awaited: runOnce() awaits one run after another.
  double secs =
      std::chrono::duration<double>((in_time ? run.state->finished : Clock::now()) - started)
          .count();

  std::lock_guard lock(publish_mu_);
  auto& st = slot.status;
  ++st.runs_total;
  st.stuck_runs = slot.abandoned.size() + (in_time ? 0 : 1);
  st.ran = true;
  st.duration_seconds = secs;
  st.last_run = std::chrono::system_clock::now();
  if (!in_time) {
    st.success = false;
    ++st.failures_total;
    st.last_error = "timed out after " + std::to_string(slot.schedule.timeout.count()) + "ms";
    // The facts of the last good run are withdrawn, as a failure's are: they describe the host
    // as it was before the hang, and published on they would read as current (counters that
    // stop moving look like a quiet link). Absent facts and fabricwatch_source_success 0 say
    // what is known: nothing, now.
    slot.last = Collection{};
    slot.pending = std::move(future);
    log::warn("scheduler", "source timed out",
              {{"source", st.name}, {"timeout_ms", std::to_string(slot.schedule.timeout.count())}});
    return false;
  }
  Collection result = future.get();
  if (size_t n = enterSnapshot(result, st.name)) {
    if (st.sanitized_total == 0)  // the metric counts the rest
      log::warn("scheduler", "replaced invalid UTF-8 in a source's facts",
                {{"source", st.name}, {"strings", std::to_string(n)}});
    st.sanitized_total += n;
  }
  st.truncated = result.truncated.size();
  st.read_errors_total += result.read_errors;
  st.success = !result.failed;
  st.last_error = result.errors.empty() ? "" : result.errors.front();
  if (result.failed) {
    ++st.failures_total;
    slot.last = Collection{};
    log::warn("scheduler", "source failed", {{"source", st.name}, {"error", st.last_error}});
  } else {
    if (result.read_errors > 0) {
      log::debug("scheduler", "source read errors",
                 {{"source", st.name},
                  {"count", std::to_string(result.read_errors)},
                  {"first", st.last_error}});
    }
    slot.last = std::move(result);
  }
  return true;
}

void Scheduler::publishLocked() {
  auto snap = std::make_shared<Snapshot>();
  snap->generation = ++generation_;
  snap->published_at = std::chrono::system_clock::now();
  snap->complete = true;
  snap->facts = Value::map();
  for (auto& slot : slots_) {
    if (slot->status.ran) {
      mergeFacts(snap->facts, slot->last.facts);
      if (slot->last.metrics) snap->captured_metrics.push_back(slot->last.metrics);
      if (slot->last.api) snap->captured_api[slot->status.name] = slot->last.api;
    } else {
      snap->complete = false;
    }
    snap->sources.push_back(slot->status);
    snap->renderers.push_back(slot->source);
  }
  for (auto& stage : stages_) {
    stage->apply(*snap);
    snap->renderers.push_back(stage);
  }
  store_.publish(std::move(snap));
}

void Scheduler::republish() {
  std::lock_guard lock(publish_mu_);
  publishLocked();
}

void Scheduler::loop(Slot& slot) {
  // The first run starts at once (readiness waits for it); later runs are spaced by the interval
  // shifted by random jitter, which also spreads a fleet started together over the interval.
  auto next = Clock::now();
  while (true) {
    {
      std::unique_lock lock(stop_mu_);
      if (stop_cv_.wait_until(lock, next, [this] { return stopping_; })) return;
    }
    runWithDeadline(slot);
    {
      std::lock_guard lock(stop_mu_);
      if (stopping_) return;
    }
    {
      std::lock_guard lock(publish_mu_);
      publishLocked();
    }
    next = std::max(Clock::now(), next + jittered(slot.schedule.interval));
  }
}

void Scheduler::start() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = false;
  }
  for (auto& slot : slots_) threads_.emplace_back([this, s = slot.get()] { loop(*s); });
}

void Scheduler::stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Scheduler::runOnce() {
  // Every run starts at once on its own thread, and this thread awaits them in the order of
  // their deadlines, so each is still given up at its own deadline (a later deadline is
  // awaited only after the earlier ones). No thread per source waits on its run: a one-shot
  // command (`check` in a Slurm prolog) pays for every thread it starts.
  std::vector<std::pair<Slot*, Run>> runs;
  runs.reserve(slots_.size());
  for (auto& slot : slots_) {
    if (auto run = startRun(*slot)) runs.emplace_back(slot.get(), std::move(*run));
  }
  std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return a.second.started + a.first->schedule.timeout <
           b.second.started + b.first->schedule.timeout;
  });
  for (auto& [slot, run] : runs) awaitRun(*slot, std::move(run));
  std::lock_guard lock(publish_mu_);
  publishLocked();
}

}  // namespace fabricwatch::core
