// /metrics is rendered once per snapshot and served as shared bytes, plus the per-request part.
#include "exporter/exposition.h"

#include <gtest/gtest.h>

#include "core/scheduler.h"
#include "exporter/gzip.h"
#include "tests/support/gzip.h"

namespace fabricwatch::exporter {
namespace {

// The one gzip member a response carries, inflated (a failure shows as an empty text that
// matches nothing).
std::string gunzip(const std::string& data) {
  auto text = testing::gunzipOneMember(data);
  EXPECT_TRUE(text) << "not exactly one whole gzip member";
  return text.value_or("");
}

std::string wire(const http::HttpResponse& r) {
  return r.body + (r.shared_body ? *r.shared_body : std::string()) + r.tail;
}

// Renders the counter it was built with: which renderer a snapshot carries decides its text.
class CountRenderer : public core::Source {
 public:
  explicit CountRenderer(int n) : n_(n) {}
  std::string_view name() const override { return "count"; }
  core::Collection collect(const core::CollectContext&) override { return {}; }
  void renderMetrics(const core::Snapshot&, core::MetricFamilies& out) const override {
    auto f = core::gaugeFamily("test_value", "A test value.");
    for (int i = 0; i < n_; ++i) core::addSample(f, {{"i", std::to_string(i)}}, i);
    out.push_back(std::move(f));
  }

 private:
  int n_;
};

std::shared_ptr<core::Snapshot> snapshot(int n) {
  auto s = std::make_shared<core::Snapshot>();
  s->renderers.push_back(std::make_shared<CountRenderer>(n));
  return s;
}

const std::string kSelf = "# TYPE self_requests counter\nself_requests 3\n";

TEST(ExpositionTest, RenderedOnceAtPublishAndSharedByEveryScrape) {
  auto snap = snapshot(500);
  ExpositionStage().apply(*snap);
  ASSERT_NE(snap->exposition, nullptr);
  EXPECT_NE(snap->exposition->text.find("test_value{i=\"499\"} 499"), std::string::npos);
  EXPECT_EQ(snap->exposition->series, 501u);  // 500 + fabricwatch_snapshot_timestamp_seconds
  std::shared_ptr<const core::Snapshot> published = snap;
  auto a = metricsResponse(published, kSelf, false);
  auto b = metricsResponse(published, kSelf, false);
  // The snapshot's bytes are not copied: both answers point at the exposition itself.
  EXPECT_EQ(a.shared_body->data(), snap->exposition->text.data());
  EXPECT_EQ(b.shared_body->data(), snap->exposition->text.data());
  EXPECT_EQ(wire(a), snap->exposition->text + kSelf);
  EXPECT_EQ(a.content_encoding, "");
  EXPECT_EQ(a.content_type, kMetricsContentType);
}

TEST(ExpositionTest, GzipIsOneMemberOfTheSameText) {
  auto snap = snapshot(2000);
  ExpositionStage().apply(*snap);
  std::shared_ptr<const core::Snapshot> published = snap;
  auto z = metricsResponse(published, kSelf, true);
  EXPECT_EQ(z.content_encoding, "gzip");
  EXPECT_EQ(z.shared_body->data(), snap->exposition->gzip_prefix.data());
  EXPECT_EQ(gunzip(wire(z)), snap->exposition->text + kSelf);
  EXPECT_LT(wire(z).size(), snap->exposition->text.size() / 4);
  // Another request with other self metrics shares the same prefix.
  auto z2 = metricsResponse(published, kSelf + "more 1\n", true);
  EXPECT_EQ(gunzip(wire(z2)), snap->exposition->text + kSelf + "more 1\n");
}

TEST(ExpositionTest, TheResponseKeepsTheBytesAliveAfterTheSnapshotIsGone) {
  auto snap = snapshot(10);
  ExpositionStage().apply(*snap);
  std::string expected = snap->exposition->text + kSelf;
  http::HttpResponse r;
  {
    std::shared_ptr<const core::Snapshot> published = std::move(snap);
    r = metricsResponse(published, kSelf, false);
  }
  EXPECT_EQ(wire(r), expected);
}

TEST(ExpositionTest, WithoutASnapshotOnlyThePerRequestPart) {
  EXPECT_EQ(wire(metricsResponse(nullptr, kSelf, false)), kSelf);
  EXPECT_EQ(gunzip(wire(metricsResponse(nullptr, kSelf, true))), kSelf);
}

TEST(ExpositionTest, ASnapshotPublishedWithoutTheStageIsRenderedOnRequest) {
  std::shared_ptr<const core::Snapshot> snap = snapshot(3);
  auto r = metricsResponse(snap, kSelf, true);
  std::string text = gunzip(wire(r));
  EXPECT_NE(text.find("test_value{i=\"2\"} 2\n"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - kSelf.size()), kSelf);
}

TEST(ExpositionTest, TheSchedulersLastStageRendersWhatTheSourcesRender) {
  core::SnapshotStore store;
  core::Scheduler sched(store, core::CollectContext{}, 0);
  sched.addSource(std::make_shared<CountRenderer>(4), {});
  sched.addStage(std::make_shared<ExpositionStage>());
  sched.runOnce();
  auto snap = store.load();
  ASSERT_NE(snap->exposition, nullptr);
  EXPECT_NE(snap->exposition->text.find("test_value{i=\"3\"} 3\n"), std::string::npos);
  EXPECT_NE(snap->exposition->text.find("fabricwatch_source_success{source=\"count\"} 1\n"),
            std::string::npos)
      << snap->exposition->text;
}

}  // namespace
}  // namespace fabricwatch::exporter
