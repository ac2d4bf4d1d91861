#include "core/scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "tests/support/eventually.h"

namespace fabricwatch::core {
namespace {

using testing::eventually;

using namespace std::chrono_literals;

// Where a hanging source waits: closed until open(), then every wait returns at once (a
// wait also ends at its timeout, so a failed test cannot leave a thread blocked for ever).
class Gate {
 public:
  void wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [this] { return open_; });
  }
  void open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// A source whose behaviour each test sets: counts runs, can fail, hang or throw.
class FakeSource : public Source {
 public:
  explicit FakeSource(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  Collection collect(const CollectContext& ctx) override {
    int run = ++runs;
    if (hang_for.count() > 0) std::this_thread::sleep_for(hang_for);
    if (throws) throw std::runtime_error("boom");
    Collection c;
    c.facts[name_] = Value::map({{"run", run}, {"rootfs", ctx.rootfs}});
    if (fail) {
      c.failed = true;
      c.addError("whole source failed");
    }
    if (read_errors) c.addError("/sys/x: Permission denied");
    return c;
  }
  std::atomic<int> runs{0};
  std::chrono::milliseconds hang_for{0};
  bool fail = false;
  bool throws = false;
  bool read_errors = false;

 private:
  std::string name_;
};

class CountingStage : public Stage {
 public:
  std::string_view name() const override { return "count"; }
  void apply(Snapshot& s) override {
    Violation v;
    v.pack = "p";
    v.rule = "r";
    v.severity = "warning";
    v.subject = v.metric_subject = "node";
    v.message = "sources=" + std::to_string(s.sources.size());
    s.violations.push_back(std::move(v));
  }
};

TEST(SchedulerTest, RunOnceMergesAllSourcesAndAppliesStages) {
  SnapshotStore store;
  Scheduler s(store, CollectContext{"/fixture"}, 0);
  s.addSource(std::make_shared<FakeSource>("a"), {});
  s.addSource(std::make_shared<FakeSource>("b"), {});
  s.addStage(std::make_shared<CountingStage>());
  s.runOnce();
  auto snap = store.load();
  ASSERT_NE(snap, nullptr);
  EXPECT_TRUE(snap->complete);
  EXPECT_EQ(snap->generation, 1u);
  EXPECT_EQ(snap->facts.findPath("a.run")->asInt(), 1);
  EXPECT_EQ(snap->facts.findPath("b.rootfs")->asString(), "/fixture");
  ASSERT_EQ(snap->violations.size(), 1u);
  EXPECT_EQ(snap->violations[0].message, "sources=2");
  EXPECT_EQ(snap->renderers.size(), 3u);
}

TEST(SchedulerTest, TimeoutIsReportedAtTheDeadlineAndDoesNotPileUp) {
  SnapshotStore store;
  Scheduler s(store, CollectContext{}, 0);
  auto slow = std::make_shared<FakeSource>("slow");
  slow->hang_for = 1500ms;
  s.addSource(slow, Schedule{20ms, 50ms});
  auto started = std::chrono::steady_clock::now();
  s.start();
  ASSERT_TRUE(eventually([&] {
    auto p = store.load();
    return p && !p->sources.empty() && p->sources[0].ran;
  }));
  auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_LT(waited, 1000ms)
      << "the timeout must be reported at the deadline, not when the run returns";
  auto snap = store.load();
  EXPECT_FALSE(snap->sources[0].success);
  EXPECT_NE(snap->sources[0].last_error.find("timed out"), std::string::npos);
  EXPECT_EQ(snap->facts.find("slow"), nullptr) << "a timed-out run publishes no facts";
  // While the first run hangs, no second run starts on top of it.
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(slow->runs.load(), 1);
  s.stop();
}

// A source that answers its first run at once and hangs in every later one until released, as
// a read on a wedged driver or a dead NFS mount would after a good start.
class HangsAfterFirstRun : public Source {
 public:
  std::string_view name() const override { return "flaky"; }
  Collection collect(const CollectContext&) override {
    int run = ++runs;
    if (run > 1) gate_.wait(30s);
    Collection c;
    c.facts["flaky"] = Value::map({{"run", run}});
    return c;
  }
  void release() { gate_.open(); }
  std::atomic<int> runs{0};

 private:
  Gate gate_;
};

// docs/architecture.md: at the deadline a source is reported failed and its facts withdrawn.
// Facts from before the hang are not published as current: the snapshot after the deadline
// has none of the source's facts, until a run succeeds again.
TEST(SchedulerTest, HangAfterASuccessfulRunWithdrawsItsFactsAtTheDeadline) {
  SnapshotStore store;
  Scheduler s(store, CollectContext{}, 0);
  auto src = std::make_shared<HangsAfterFirstRun>();
  s.addSource(src, Schedule{30ms, 100ms});
  s.start();
  ASSERT_TRUE(eventually([&] {
    auto p = store.load();
    return p && p->facts.findPath("flaky.run");
  })) << "the first run publishes its facts";
  ASSERT_TRUE(eventually(
      [&] {
        auto p = store.load();
        return p && src->runs.load() >= 2 && !p->sources[0].success;
      },
      20s))
      << "the second run times out";
  auto snap = store.load();
  EXPECT_NE(snap->sources[0].last_error.find("timed out"), std::string::npos);
  EXPECT_EQ(snap->facts.find("flaky"), nullptr) << "stale facts are published after the deadline";
  // Once the stuck run returns, the next run publishes fresh facts again.
  src->release();
  EXPECT_TRUE(eventually(
      [&] {
        auto p = store.load();
        return p && p->sources[0].success && p->facts.findPath("flaky.run");
      },
      20s));
  s.stop();
}

TEST(SchedulerTest, FailedAndThrowingSourcesAreCountedNotFatal) {
  SnapshotStore store;
  Scheduler s(store, CollectContext{}, 0);
  auto failing = std::make_shared<FakeSource>("failing");
  failing->fail = true;
  auto throwing = std::make_shared<FakeSource>("throwing");
  throwing->throws = true;
  auto partial = std::make_shared<FakeSource>("partial");
  partial->read_errors = true;
  s.addSource(failing, {});
  s.addSource(throwing, {});
  s.addSource(partial, {});
  s.runOnce();
  auto snap = store.load();
  EXPECT_FALSE(snap->sources[0].success);
  EXPECT_EQ(snap->sources[0].failures_total, 1u);
  EXPECT_FALSE(snap->sources[1].success);
  EXPECT_NE(snap->sources[1].last_error.find("boom"), std::string::npos);
  EXPECT_TRUE(snap->sources[2].success) << "read errors leave facts absent but the source succeeds";
  EXPECT_EQ(snap->sources[2].read_errors_total, 1u);
  EXPECT_NE(snap->facts.find("partial"), nullptr);
  EXPECT_EQ(snap->facts.find("failing"), nullptr);
}

TEST(SchedulerTest, RunsRepeatedlyOnItsIntervalAndStopsPromptly) {
  SnapshotStore store;
  Scheduler s(store, CollectContext{}, 0.2, /*seed=*/42);
  auto fast = std::make_shared<FakeSource>("fast");
  s.addSource(fast, Schedule{10ms, 10ms});
  s.addSource(std::make_shared<FakeSource>("slowpoke"), Schedule{std::chrono::hours(1), 1s});
  s.start();
  ASSERT_TRUE(eventually([&] { return fast->runs.load() >= 5; }));
  ASSERT_TRUE(eventually([&] {
    auto p = store.load();
    return p && p->complete;
  }));
  auto before = std::chrono::steady_clock::now();
  s.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 500ms);
  int runs = fast->runs.load();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(fast->runs.load(), runs);
  EXPECT_GE(store.load()->generation, 5u);
}

// runOnce() awaits the runs one after another on the calling thread: a source awaited after a
// slow one still reports its own duration, and one past its short deadline is given up at that
// deadline even when a slower source with a longer one comes first.
TEST(SchedulerTest, RunOnceGivesEachRunItsOwnDeadlineAndDuration) {
  SnapshotStore store;
  Scheduler s(store, CollectContext{}, 0);
  auto slow = std::make_shared<FakeSource>("slow");
  slow->hang_for = 300ms;
  auto fast = std::make_shared<FakeSource>("fast");
  auto stuck = std::make_shared<FakeSource>("stuck");
  stuck->hang_for = 2s;
  s.addSource(slow, Schedule{1h, 5s});
  s.addSource(fast, Schedule{1h, 5s});
  s.addSource(stuck, Schedule{1h, 100ms});
  auto before = std::chrono::steady_clock::now();
  s.runOnce();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1500ms);
  auto snap = store.load();
  ASSERT_EQ(snap->sources.size(), 3u);
  EXPECT_TRUE(snap->sources[0].success);
  EXPECT_GE(snap->sources[0].duration_seconds, 0.3);
  EXPECT_TRUE(snap->sources[1].success);
  EXPECT_LT(snap->sources[1].duration_seconds, 0.2) << "its own run, not the wait for slow";
  EXPECT_FALSE(snap->sources[2].success);
  EXPECT_EQ(snap->sources[2].last_error, "timed out after 100ms");
  EXPECT_LT(snap->sources[2].duration_seconds, 0.29) << "given up at its deadline";
  EXPECT_NE(snap->facts.find("fast"), nullptr);
  EXPECT_EQ(snap->facts.find("stuck"), nullptr);
}

TEST(SchedulerTest, CarryOverKeepsFactsUntilSourcesRunAgain) {
  SnapshotStore store;
  Scheduler first(store, CollectContext{}, 0);
  first.addSource(std::make_shared<FakeSource>("a"), {});
  first.runOnce();
  Scheduler second(store, CollectContext{}, 0);
  second.addSource(std::make_shared<FakeSource>("a"), Schedule{std::chrono::hours(1), 1s});
  second.addSource(std::make_shared<FakeSource>("b"), Schedule{std::chrono::hours(1), 1s});
  second.carryOver(first);
  second.runOnce();
  auto snap = store.load();
  EXPECT_EQ(snap->generation, 2u);
  EXPECT_EQ(snap->sources[0].runs_total, 2u);
}

// A source whose every run blocks until released, as a read of a FIFO where a sysfs file
// belongs did (issue 13), or a mount that wedges every read.
class Stuck : public Source {
 public:
  std::string_view name() const override { return "stuck"; }
  Collection collect(const CollectContext&) override {
    ++runs;
    gate_.wait(60s);
    return Collection{};
  }
  void release() { gate_.open(); }
  std::atomic<int> runs{0};

 private:
  Gate gate_;
};

// Issue 13: a run that never returns wedged its source for good (success 0 until a restart).
// With a factory, the stuck run is abandoned at the next run's time and a fresh instance of
// the source runs instead, while the stuck one still hangs.
TEST(SchedulerTest, AStuckRunIsAbandonedAndAFreshInstanceRecovers) {
  SnapshotStore store;
  Scheduler s(store, CollectContext{}, 0);
  auto stuck = std::make_shared<Stuck>();
  std::atomic<int> made{0};
  s.addSource(stuck, Schedule{50ms, 100ms}, [&]() -> std::shared_ptr<Source> {
    ++made;
    return std::make_shared<FakeSource>("stuck");
  });
  s.start();
  EXPECT_TRUE(eventually(
      [&] {
        auto p = store.load();
        return p && p->sources[0].success && p->facts.findPath("stuck.run");
      },
      20s))
      << "the source must recover while its stuck run still hangs";
  EXPECT_EQ(stuck->runs.load(), 1);
  EXPECT_EQ(made.load(), 1);
  auto snap = store.load();
  EXPECT_EQ(snap->sources[0].abandoned_total, 1u);
  EXPECT_EQ(snap->sources[0].stuck_runs, 1u) << "the abandoned run still holds its thread";
  stuck->release();
  EXPECT_TRUE(eventually([&] { return store.load()->sources[0].stuck_runs == 0; }, 20s));
  s.stop();
}

// When every instance hangs, the threads held stay bounded: kMaxAbandoned abandoned runs and
// the one waited for.
TEST(SchedulerTest, AbandonedRunsAreBoundedWhenEveryInstanceHangs) {
  SnapshotStore store;
  Scheduler s(store, CollectContext{}, 0);
  std::vector<std::shared_ptr<Stuck>> all{std::make_shared<Stuck>()};
  std::mutex mu;
  s.addSource(all[0], Schedule{20ms, 40ms}, [&]() -> std::shared_ptr<Source> {
    std::lock_guard lock(mu);
    all.push_back(std::make_shared<Stuck>());
    return all.back();
  });
  s.start();
  EXPECT_TRUE(eventually(
      [&] {
        auto p = store.load();
        return p && p->sources[0].stuck_runs == Scheduler::kMaxAbandoned + 1;
      },
      20s));
  // Many more intervals pass; no further instance is made or run.
  auto failures = store.load()->sources[0].failures_total;
  EXPECT_TRUE(eventually([&] { return store.load()->sources[0].failures_total > failures + 5; }));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(all.size(), Scheduler::kMaxAbandoned + 1);
  }
  s.stop();
  std::lock_guard lock(mu);
  for (auto& a : all) a->release();
}

// Issue 13: a name with invalid UTF-8 (a device, an interface, a peer's node name behind the
// peer_node label) made Prometheus reject every scrape and /api/v1/facts emit invalid JSON.
// Facts and captured labels are made valid where they enter the snapshot, once, and counted;
// what a source cut at a bound becomes the fact collection.truncated.<source>.
class BadNames : public Source {
 public:
  std::string_view name() const override { return "peer"; }
  Collection collect(const CollectContext&) override {
    Collection c;
    c.facts["node"]["name"] = "bad\xff\xfename";
    c.facts["probes"]["tcp"]["peers"].push(Value::map({{"node", "ok"}}));
    auto fams = std::make_shared<MetricFamilies>();
    auto f = gaugeFamily("fabricwatch_probe_tcp_up", "help");
    addSample(f, {{"peer_node", "bad\xff\xfename"}}, 1);
    addSample(f, {{"peer_node", "fine"}}, 1);
    fams->push_back(std::move(f));
    c.metrics = fams;
    c.addTruncated("/sys/class/infiniband", "more than 4096 entries");
    return c;
  }
};

TEST(SchedulerTest, InvalidUtf8IsReplacedWhereFactsEnterTheSnapshotAndCounted) {
  SnapshotStore store;
  Scheduler s(store, CollectContext{}, 0);
  s.addSource(std::make_shared<BadNames>(), {});
  s.runOnce();
  auto snap = store.load();
  EXPECT_EQ(snap->facts.findPath("node.name")->asString(), "bad\xef\xbf\xbd\xef\xbf\xbdname");
  ASSERT_EQ(snap->captured_metrics.size(), 1u);
  const auto& labels = (*snap->captured_metrics[0])[0].metric;
  EXPECT_EQ(labels[0].label[0].value, "bad\xef\xbf\xbd\xef\xbf\xbdname");
  EXPECT_EQ(labels[1].label[0].value, "fine");
  EXPECT_EQ(snap->sources[0].sanitized_total, 2u);
  const Value* cut = snap->facts.findPath("collection.truncated.peer");
  ASSERT_NE(cut, nullptr);
  EXPECT_EQ(cut->asList().at(0).asString(), "/sys/class/infiniband");
  EXPECT_EQ(snap->sources[0].truncated, 1u);
}

}  // namespace
}  // namespace fabricwatch::core
