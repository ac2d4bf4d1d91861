// The NCCL probe source: which processes count as holding a GPU, a run skipped while one does
// (keeping the last run's results), and the first run waiting one interval.
#include "probes/nccl/nccl_probe_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/snapshot.h"
#include "probes/nccl/gpu_holders.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::probes::nccl {
namespace {

// A host root whose /proc has a training process holding GPU 3, a monitoring daemon holding
// GPU 0, and a process with only a socket open.
testing::TempDir hostWithGpuUsers() {
  testing::TempDir root;
  auto proc = [&](const std::string& pid, const std::string& comm,
                  std::vector<std::pair<std::string, std::string>> fds) {
    root.write("proc/" + pid + "/comm", comm + "\n");
    std::filesystem::create_directories(root.path() + "/proc/" + pid + "/fd");
    for (auto& [fd, target] : fds)
      std::filesystem::create_symlink(target, root.path() + "/proc/" + pid + "/fd/" + fd);
  };
  proc("1200", "nvidia-persistenced", {{"3", "/dev/nvidiactl"}, {"4", "/dev/nvidia0"}});
  proc("4242", "python3", {{"0", "/dev/null"}, {"17", "/dev/nvidia-uvm"}, {"18", "/dev/nvidia3"}});
  proc("5000", "sshd", {{"3", "socket:[12345]"}});
  return root;
}

TEST(GpuHoldersTest, GpuDevicesAreTheOnesCudaContextsOpen) {
  EXPECT_TRUE(isGpuDevice("/dev/nvidia0"));
  EXPECT_TRUE(isGpuDevice("/dev/nvidia15"));
  EXPECT_TRUE(isGpuDevice("/dev/nvidia-uvm"));
  EXPECT_FALSE(isGpuDevice("/dev/nvidiactl"));
  EXPECT_FALSE(isGpuDevice("/dev/nvidia-uvm-tools"));
  EXPECT_FALSE(isGpuDevice("/dev/nvidia-caps/nvidia-cap1"));
  EXPECT_FALSE(isGpuDevice("/dev/null"));
}

TEST(GpuHoldersTest, ScanFindsTheTrainingProcessAndIgnoresMonitoring) {
  auto root = hostWithGpuUsers();
  GpuScanOptions o;
  o.ignore_comms = {"nvidia-persistenced"};
  auto scan = scanGpuHolders(root.path(), o);
  ASSERT_EQ(scan.holders.size(), 1u);
  EXPECT_EQ(scan.holders[0].pid, 4242);
  EXPECT_EQ(scan.holders[0].comm, "python3");
  EXPECT_EQ(scan.processes_scanned, 3u);
  o.self = 4242;  // this process never counts
  EXPECT_TRUE(scanGpuHolders(root.path(), o).holders.empty());
  o.max_processes = 1;
  EXPECT_FALSE(scanGpuHolders(root.path(), o).complete);
}

TEST(GpuHoldersTest, AProcessDirectoryNamedPastAnyPidIsSkippedNotAnException) {
  // Under --path.rootfs, /proc is input: a directory named with more digits than any pid
  // reached std::stoll, which threw std::out_of_range out of the scan.
  testing::TempDir root;
  std::string big(40, '9');
  root.write("proc/" + big + "/comm", "python3\n");
  std::filesystem::create_directories(root.path() + "/proc/" + big + "/fd");
  std::filesystem::create_symlink("/dev/nvidia0", root.path() + "/proc/" + big + "/fd/3");
  GpuScan scan;
  ASSERT_NO_THROW(scan = scanGpuHolders(root.path(), GpuScanOptions{}));
  EXPECT_TRUE(scan.holders.empty());
}

core::Value local(const core::Collection& c) {
  const core::Value* v = c.facts.findPath("probes.nccl.local");
  return v ? *v : core::Value();
}

TEST(NcclProbeSourceTest, SkippedWhileAnotherProcessHoldsAGpu) {
  auto root = hostWithGpuUsers();
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

  auto busy = hostWithGpuUsers();
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
