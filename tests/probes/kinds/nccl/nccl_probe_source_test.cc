// The NCCL probe source: a run skipped while a process holds a GPU (keeping the last run's
// results), and the first run waiting one interval.
#include "probes/kinds/nccl/nccl_probe_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/snapshot.h"
#include "tests/support/gpu_host.h"
#include "tests/support/paths.h"

namespace fabricwatch::probes::nccl {
namespace {

core::Value local(const core::Collection& c) {
  const core::Value* v = c.facts.findPath("probes.nccl.local");
  return v ? *v : core::Value();
}

TEST(NcclProbeSourceTest, SkippedWhileAnotherProcessHoldsAGpu) {
  auto root = testing::hostWithGpuUsers();
  NcclProbeOptions o;
  o.exe = testing::binaryPath();
  o.run_at_start = true;
  o.ignore_processes = {"nvidia-persistenced"};
  NcclProbeSource src(o);
  auto v = local(src.collect({root.path()}));
  EXPECT_EQ(v.find("state")->asString(), "skipped");
  EXPECT_NE(v.find("reason")->asString().find("python3 (pid 4242) holds /dev/nvidia"),
            std::string::npos)
      << v.find("reason")->asString();
  EXPECT_EQ(v.find("gpu_holders")->size(), 1u);
  EXPECT_EQ(v.find("results"), nullptr) << "nothing ran, and nothing ran before";
}

TEST(NcclProbeSourceTest, FirstRunWaitsAnIntervalThenASkipKeepsTheLastResults) {
  testing::TempDir idle;  // no /proc: nobody holds a GPU
  NcclProbeOptions o;
  o.exe = testing::binaryPath();
  o.cudart_library = "/nonexistent/libcudart.so";  // a run that completes at once
  NcclProbeSource src(o);
  auto first = local(src.collect({idle.path()}));
  EXPECT_EQ(first.find("state")->asString(), "waiting");
  auto ran = local(src.collect({idle.path()}));
  EXPECT_EQ(ran.find("state")->asString(), "unavailable");
  EXPECT_EQ(ran.find("run_state")->asString(), "unavailable");
  ASSERT_NE(ran.find("last_run"), nullptr);

  auto busy = testing::hostWithGpuUsers();
  auto skipped = local(src.collect({busy.path()}));
  EXPECT_EQ(skipped.find("state")->asString(), "skipped");
  EXPECT_EQ(skipped.find("run_state")->asString(), "unavailable");
  EXPECT_EQ(*skipped.find("last_run"), *ran.find("last_run"));
}

TEST(NcclProbeSourceTest, MetricsComeFromTheFacts) {
  core::Snapshot snap;
  snap.facts.setPath(
      "probes.nccl.local",
      core::Value::map(
          {{"state", "ok"},
           {"duration_seconds", 4.5},
           {"last_run_timestamp_seconds", 1700000000},
           {"results",
            core::Value::List{core::Value::map(
                {{"size_bytes", 268435456}, {"algbw_gbps", 200.0}, {"busbw_gbps", 350.0}})}}}));
  NcclProbeSource src({});
  core::MetricFamilies out;
  src.renderMetrics(snap, out);
  std::map<std::string, double> got;
  for (const auto& f : out) {
    for (const auto& m : f.metric) {
      std::string labels;
      for (const auto& l : m.label) labels += l.name + "=" + l.value + ",";
      got[f.name + "{" + labels + "}"] = m.gauge.value;
    }
  }
  EXPECT_EQ(got["fabricwatch_nccl_probe_state{probe=local,}"], 1);
  EXPECT_EQ(got["fabricwatch_nccl_probe_busbw_bytes_per_second{probe=local,size_bytes=268435456,}"],
            350e9);
  EXPECT_EQ(got["fabricwatch_nccl_probe_algbw_bytes_per_second{probe=local,size_bytes=268435456,}"],
            200e9);
  EXPECT_EQ(got["fabricwatch_nccl_probe_duration_seconds{probe=local,}"], 4.5);
}

}  // namespace
}  // namespace fabricwatch::probes::nccl
