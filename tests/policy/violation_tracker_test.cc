#include "policy/violation_tracker.h"

#include <gtest/gtest.h>

namespace fabricwatch::policy {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using TP = ViolationTracker::TimePoint;

const TP kT0 = TP(seconds(1'800'000'000));

core::Violation trackerViolation(std::string rule, std::string subject = "node") {
  core::Violation v;
  v.pack = "baseline";
  v.rule = std::move(rule);
  v.severity = "critical";
  v.subject = std::move(subject);
  v.message = "m";
  v.metric_subject = v.subject;
  return v;
}

TEST(ViolationTracker, BeginsActiveAndKeepsItsStart) {
  ViolationTracker t;
  std::vector<core::Violation> now{trackerViolation("r")};
  t.update(now, kT0, minutes(5));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].state, "active");
  EXPECT_EQ(now[0].began_at, kT0);
  now = {trackerViolation("r")};
  t.update(now, kT0 + minutes(1), minutes(5));
  EXPECT_EQ(now[0].began_at, kT0);
  EXPECT_EQ(t.tracked(), 1u);
}

TEST(ViolationTracker, ClearedConditionRecoversThenClearsAfterTheHold) {
  ViolationTracker t;
  std::vector<core::Violation> now{trackerViolation("r")};
  t.update(now, kT0, minutes(5));
  now.clear();
  t.update(now, kT0 + seconds(30), minutes(5));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].state, "recovering");
  EXPECT_EQ(now[0].began_at, kT0);
  EXPECT_EQ(now[0].recovering_since, kT0 + seconds(30));
  now.clear();
  t.update(now, kT0 + seconds(30) + minutes(4), minutes(5));
  ASSERT_EQ(now.size(), 1u) << "still within the hold";
  EXPECT_TRUE(t.cleared().empty());
  now.clear();
  t.update(now, kT0 + seconds(30) + minutes(5), minutes(5));
  EXPECT_TRUE(now.empty());
  ASSERT_EQ(t.cleared().size(), 1u);
  EXPECT_EQ(t.cleared()[0].cleared_at, kT0 + seconds(30) + minutes(5));
  EXPECT_EQ(t.cleared()[0].violation.began_at, kT0);
  EXPECT_EQ(t.cleared()[0].violation.recovering_since, kT0 + seconds(30));
  EXPECT_EQ(t.clearedTotal(), 1u);
  EXPECT_EQ(t.tracked(), 0u);
}

TEST(ViolationTracker, ReoccurringDuringTheHoldKeepsItsStart) {
  ViolationTracker t;
  std::vector<core::Violation> now{trackerViolation("r")};
  t.update(now, kT0, minutes(5));
  now.clear();
  t.update(now, kT0 + minutes(1), minutes(5));
  now = {trackerViolation("r")};
  t.update(now, kT0 + minutes(2), minutes(5));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].state, "active");
  EXPECT_EQ(now[0].began_at, kT0);
  EXPECT_EQ(now[0].recovering_since, TP{});
  // Passing again starts a new hold from then.
  now.clear();
  t.update(now, kT0 + minutes(3), minutes(5));
  t.update(now = {}, kT0 + minutes(7), minutes(5));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].recovering_since, kT0 + minutes(3));
  EXPECT_EQ(t.clearedTotal(), 0u);
}

TEST(ViolationTracker, ZeroHoldClearsAtOnceAndASetBackClockDoesNotStretchIt) {
  ViolationTracker t;
  std::vector<core::Violation> now{trackerViolation("a"), trackerViolation("b")};
  t.update(now, kT0, minutes(0));
  now = {trackerViolation("b")};
  t.update(now, kT0 + seconds(1), minutes(0));
  EXPECT_EQ(now.size(), 1u);
  EXPECT_EQ(t.clearedTotal(), 1u);
  now.clear();
  t.update(now, kT0 + seconds(2), minutes(5));
  now.clear();
  t.update(now, kT0 - minutes(60), minutes(5));  // the clock set back an hour
  ASSERT_EQ(now.size(), 1u) << "elapsed reads as 0, not negative";
  now.clear();
  t.update(now, kT0 + seconds(2) + minutes(5), minutes(5));
  EXPECT_TRUE(now.empty());
}

TEST(ViolationTracker, BeforeTheFirstCollectionEndsAGoneViolationIsForgotten) {
  ViolationTracker t;
  std::vector<core::Violation> now{trackerViolation("partial")};
  t.update(now, kT0, minutes(5), /*settled=*/false);
  EXPECT_EQ(now[0].state, "active");
  now.clear();
  t.update(now, kT0 + seconds(1), minutes(5), /*settled=*/false);
  EXPECT_TRUE(now.empty());
  EXPECT_EQ(t.tracked(), 0u);
  EXPECT_EQ(t.clearedTotal(), 0u);
}

// Seen when the software source reported last: rdma-core-installed failed on every partial
// snapshot (software.rdma_core absent), passed on the first complete one, and was then held as
// recovering for 5 minutes on a healthy node (StatusPageE2ETest counted a warning too many).
TEST(ViolationTracker, GoneAtTheFirstSettledEvaluationIsForgotten) {
  ViolationTracker t;
  std::vector<core::Violation> now{trackerViolation("partial")};
  t.update(now, kT0, minutes(5), /*settled=*/false);
  now.clear();
  t.update(now, kT0 + seconds(1), minutes(5), /*settled=*/true);
  EXPECT_TRUE(now.empty());
  EXPECT_EQ(t.tracked(), 0u);
  EXPECT_EQ(t.clearedTotal(), 0u);
  // Once settled, a gone violation recovers as before.
  now = {trackerViolation("real")};
  t.update(now, kT0 + seconds(2), minutes(5), /*settled=*/true);
  now.clear();
  t.update(now, kT0 + seconds(3), minutes(5), /*settled=*/true);
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].state, "recovering");
}

TEST(ViolationTracker, IdentityIsPackRuleAndSubject) {
  ViolationTracker t;
  std::vector<core::Violation> now{trackerViolation("r", "workload:a")};
  t.update(now, kT0, minutes(5));
  now = {trackerViolation("r", "workload:b")};
  t.update(now, kT0 + minutes(1), minutes(5));
  ASSERT_EQ(now.size(), 2u);
  EXPECT_EQ(now[0].subject, "workload:b");
  EXPECT_EQ(now[0].began_at, kT0 + minutes(1));
  EXPECT_EQ(now[1].subject, "workload:a");
  EXPECT_EQ(now[1].state, "recovering");
}

TEST(ViolationTracker, RecoveringAndClearedAreBounded) {
  ViolationTracker t;
  const size_t n = ViolationTracker::kMaxRecovering + 40;
  std::vector<core::Violation> now;
  for (size_t i = 0; i < n; ++i) {
    now = {trackerViolation("r", "workload:" + std::to_string(i))};
    t.update(now, kT0 + seconds(i), minutes(60));
  }
  // The last is active; the others recover, the oldest past the bound cleared early.
  EXPECT_EQ(t.tracked(), ViolationTracker::kMaxRecovering + 1);
  EXPECT_EQ(now.size(), ViolationTracker::kMaxRecovering + 1);
  EXPECT_EQ(t.clearedTotal(), n - 1 - ViolationTracker::kMaxRecovering);
  auto cleared = t.cleared();
  ASSERT_EQ(cleared.size(), ViolationTracker::kMaxCleared);
  // Newest first: the last cleared early is the youngest of those past the bound.
  EXPECT_EQ(cleared.front().violation.subject,
            "workload:" + std::to_string(n - 2 - ViolationTracker::kMaxRecovering));
}

}  // namespace
}  // namespace fabricwatch::policy
