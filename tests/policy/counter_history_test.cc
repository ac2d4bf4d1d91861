// The counters' samples in serve: increases since the previous collection, rates over the
// window, resets, and the bounds on what is kept.
#include "policy/counter_history.h"

#include <gtest/gtest.h>

namespace fabricwatch::policy {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using TimePoint = CounterHistory::TimePoint;

const TimePoint kT0 = TimePoint{} + std::chrono::hours(24 * 365 * 56);

// One mlx5 device with one port, and one EFA-like device-wide counter.
core::Value rdmaFacts(int64_t link_downed, int64_t symbol_error, int64_t cmds_err = 0) {
  core::Value port = core::Value::map(
      {{"port", 1},
       {"state", "ACTIVE"},
       {"counters",
        core::Value::map({{"link_downed", link_downed}, {"symbol_error", symbol_error}})},
       {"hw_counters", core::Value::map({{"rnr_nak_retry_err", 0}})}});
  core::Value ports = core::Value::list();
  ports.push(std::move(port));
  core::Value dev = core::Value::map({{"name", "mlx5_0"},
                                      {"ports", std::move(ports)},
                                      {"hw_counters", core::Value::map({{"cmds_err", cmds_err}})}});
  core::Value devices = core::Value::list();
  devices.push(std::move(dev));
  return core::Value::map({{"rdma", core::Value::map({{"devices", std::move(devices)}})}});
}

// The facts as the stage sees them after a collection at `at`.
core::Value collect(CounterHistory& h, core::Value facts, TimePoint at,
                    CounterHistory::Window window = minutes(10)) {
  h.record(facts, at, window);
  h.annotate(facts, window);
  return facts;
}

const core::Value& port1(const core::Value& facts) {
  return facts.findPath("rdma.devices")->asList()[0].find("ports")->asList()[0];
}

TEST(CounterHistoryTest, FirstCollectionHasHistoryButNoChangeYet) {
  CounterHistory h;
  auto f = collect(h, rdmaFacts(1, 10), kT0);
  EXPECT_EQ(port1(f).find("counters_increase"), nullptr);
  EXPECT_EQ(port1(f).find("counters_rate"), nullptr);
  const core::Value* st = f.findPath("rdma.counter_history");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->find("collections")->asInt(), 1);
  EXPECT_EQ(st->find("window_seconds")->asDouble(), 600);
  EXPECT_EQ(st->find("counters")->asInt(), 4);  // link_downed, symbol_error, rnr, cmds_err
  EXPECT_EQ(st->find("untracked")->asInt(), 0);
}

TEST(CounterHistoryTest, IncreaseSinceThePreviousCollectionAndRateOverTheWindow) {
  CounterHistory h;
  collect(h, rdmaFacts(1, 10, 3), kT0);
  auto f = collect(h, rdmaFacts(3, 40, 3), kT0 + seconds(30));
  const core::Value& p = port1(f);
  EXPECT_EQ(p.findPath("counters_increase.link_downed")->asInt(), 2);
  EXPECT_EQ(p.findPath("counters_increase.symbol_error")->asInt(), 30);
  EXPECT_DOUBLE_EQ(p.findPath("counters_rate.symbol_error")->asDouble(), 1.0);
  EXPECT_EQ(p.findPath("hw_counters_increase.rnr_nak_retry_err")->asInt(), 0);
  const core::Value& d = f.findPath("rdma.devices")->asList()[0];
  EXPECT_EQ(d.findPath("hw_counters_increase.cmds_err")->asInt(), 0);
  EXPECT_DOUBLE_EQ(d.findPath("hw_counters_rate.cmds_err")->asDouble(), 0);

  // The increase is the last collection's; the rate is over everything in the window.
  f = collect(h, rdmaFacts(3, 100, 3), kT0 + seconds(60));
  EXPECT_EQ(port1(f).findPath("counters_increase.symbol_error")->asInt(), 60);
  EXPECT_EQ(port1(f).findPath("counters_increase.link_downed")->asInt(), 0);
  EXPECT_DOUBLE_EQ(port1(f).findPath("counters_rate.symbol_error")->asDouble(), 1.5);
  EXPECT_DOUBLE_EQ(f.findPath("rdma.counter_history.span_seconds")->asDouble(), 60);
  EXPECT_EQ(f.findPath("rdma.counter_history.collections")->asInt(), 3);
}

TEST(CounterHistoryTest, AValueThatGoesDownIsAReset) {
  CounterHistory h;
  collect(h, rdmaFacts(0, 1000), kT0);
  collect(h, rdmaFacts(0, 1100), kT0 + seconds(10));
  // perfquery -R, then 5 more errors: the increase restarts from 0, and the rate keeps the 100.
  auto f = collect(h, rdmaFacts(0, 5), kT0 + seconds(20));
  EXPECT_EQ(port1(f).findPath("counters_increase.symbol_error")->asInt(), 5);
  EXPECT_DOUBLE_EQ(port1(f).findPath("counters_rate.symbol_error")->asDouble(), 105.0 / 20);
}

TEST(CounterHistoryTest, TheRateCoversTheWindowOnly) {
  CounterHistory h;
  const auto window = minutes(1);
  int64_t v = 0;
  // 10 errors a second for a minute, then none for two minutes.
  for (int s = 0; s <= 60; s += 10, v += 100) collect(h, rdmaFacts(0, v), kT0 + seconds(s), window);
  v -= 100;
  core::Value f;
  for (int s = 70; s <= 180; s += 10) f = collect(h, rdmaFacts(0, v), kT0 + seconds(s), window);
  EXPECT_DOUBLE_EQ(port1(f).findPath("counters_rate.symbol_error")->asDouble(), 0);
  EXPECT_DOUBLE_EQ(f.findPath("rdma.counter_history.span_seconds")->asDouble(), 60);

  // Collections further apart than the window: the rate is over the last two.
  CounterHistory slow;
  collect(slow, rdmaFacts(0, 0), kT0, window);
  f = collect(slow, rdmaFacts(0, 300), kT0 + minutes(5), window);
  EXPECT_DOUBLE_EQ(port1(f).findPath("counters_rate.symbol_error")->asDouble(), 1.0);
}

TEST(CounterHistoryTest, SamplesAreBoundedWhateverTheWindow) {
  CounterHistory h;
  const auto window = std::chrono::hours(24);
  const std::string key = "mlx5_0/1/counters/symbol_error";
  core::Value f;
  // A collection a second for three hours: 10,800 collections, at most 64 samples kept.
  for (int s = 0; s < 3 * 3600; ++s)
    f = collect(h, rdmaFacts(0, 2 * int64_t{s}), kT0 + seconds(s), window);
  EXPECT_LE(h.samples(key), CounterHistory::kMaxSamples);
  EXPECT_GE(h.samples(key), 2u);
  EXPECT_EQ(port1(f).findPath("counters_increase.symbol_error")->asInt(), 2);
  EXPECT_NEAR(port1(f).findPath("counters_rate.symbol_error")->asDouble(), 2.0, 1e-9);

  // Spaced over a window they fill: samples stay at most kMaxSamples.
  CounterHistory w;
  for (int s = 0; s < 1000; ++s) w.sample(key, core::Value(s), kT0 + seconds(s), seconds(100));
  EXPECT_LE(w.samples(key), CounterHistory::kMaxSamples);
  auto c = w.change(key, seconds(100));
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->rate, 1.0);
  EXPECT_LE(c->span_seconds, 100 + 100.0 / 63);
}

TEST(CounterHistoryTest, CountersPastTheBoundAreNotTracked) {
  CounterHistory h;
  core::Value many = core::Value::map();
  for (size_t i = 0; i < CounterHistory::kMaxCounters + 10; ++i) many["c" + std::to_string(i)] = 1;
  core::Value f = rdmaFacts(0, 0);
  auto& port = f["rdma"]["devices"].asList()[0]["ports"].asList()[0];
  port["hw_counters"] = many;
  collect(h, f, kT0);
  f = collect(h, f, kT0 + seconds(10));
  EXPECT_EQ(h.counters(), CounterHistory::kMaxCounters);
  // The four of rdmaFacts less rnr_nak_retry_err (replaced), plus 4106: 4109 counters.
  EXPECT_EQ(h.untracked(), 3 + CounterHistory::kMaxCounters + 10 - CounterHistory::kMaxCounters);
  EXPECT_EQ(f.findPath("rdma.counter_history.untracked")->asInt(), 13);
  EXPECT_EQ(port1(f).findPath("hw_counters_increase")->size() +
                port1(f).findPath("counters_increase")->size(),
            CounterHistory::kMaxCounters - 1);  // cmds_err, of the device, is tracked too
}

TEST(CounterHistoryTest, ForgetsWhatACollectionNoLongerReportsAndRepeatsNothing) {
  CounterHistory h;
  collect(h, rdmaFacts(0, 0, 1), kT0);
  core::Value f = rdmaFacts(0, 0, 1);
  f["rdma"]["devices"].asList()[0]["hw_counters"] = core::Value::map();  // cmds_err gone
  collect(h, f, kT0 + seconds(10));
  EXPECT_EQ(h.counters(), 3u);
  EXPECT_EQ(h.samples("mlx5_0//hw_counters/cmds_err"), 0u);

  // The same collection published again (another source's run) is not a new sample.
  collect(h, rdmaFacts(0, 7), kT0 + seconds(20));
  auto again = collect(h, rdmaFacts(0, 7), kT0 + seconds(20));
  EXPECT_EQ(h.collections(), 3u);
  EXPECT_EQ(port1(again).findPath("counters_increase.symbol_error")->asInt(), 7);

  // A clock that goes back restarts the samples: no rate from a negative span.
  auto back = collect(h, rdmaFacts(0, 9), kT0);
  EXPECT_EQ(port1(back).find("counters_increase"), nullptr);
  auto next = collect(h, rdmaFacts(0, 12), kT0 + seconds(3));
  EXPECT_EQ(port1(next).findPath("counters_increase.symbol_error")->asInt(), 3);
  EXPECT_DOUBLE_EQ(port1(next).findPath("counters_rate.symbol_error")->asDouble(), 1.0);
}

TEST(CounterHistoryTest, NoRdmaFactsNoHistoryFacts) {
  CounterHistory h;
  core::Value f = core::Value::map({{"kernel", core::Value::map()}});
  h.record(f, kT0, minutes(10));
  h.annotate(f, minutes(10));
  EXPECT_EQ(f.find("rdma"), nullptr);
}

}  // namespace
}  // namespace fabricwatch::policy
