// The probe child (`fabricwatch __nccl-probe`) against the real libraries of this machine:
// libnccl.so.2 and libcudart (under /usr/local/cuda, found by ldconfig) but no GPU and no
// driver, so the "no device" path runs for real and must say CUDA's own reason. Without the
// libraries it must say which one is missing. The request/result protocol is tested as text.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>

#include "core/child_process.h"
#include "probes/kinds/nccl/nccl_api.h"
#include "probes/kinds/nccl/probe_protocol.h"
#include "tests/support/paths.h"
#include "tests/support/require.h"

namespace fabricwatch::probes::nccl {
namespace {

core::ChildSpec spec(const ChildRequest& req, std::vector<std::string> env = {}) {
  core::ChildSpec s;
  s.exe = testing::binaryPath();
  s.argv = {s.exe, std::string(kProbeSubcommand)};
  if (const char* ld = std::getenv("LD_LIBRARY_PATH"))
    env.push_back(std::string("LD_LIBRARY_PATH=") + ld);
  s.env = env;
  s.input = encodeRequest(req);
  s.timeout = std::chrono::seconds(60);
  return s;
}

ChildResult runProbe(const ChildRequest& req, std::vector<std::string> env = {}) {
  auto r = runChild(spec(req, std::move(env)));
  EXPECT_EQ(r.outcome, core::ChildResult::Outcome::kExited) << r.describe() << "\n" << r.output;
  return parseResult(r.result);
}

bool haveLibrary(const char* name) {
  void* h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (h) ::dlclose(h);
  return h != nullptr;
}

TEST(ProbeChildTest, RealNcclWithoutGpuIsUnavailableWithCudasReason) {
  if (!haveLibrary("libnccl.so.2") || !haveLibrary("libcudart.so"))
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  auto r = runProbe(ChildRequest{});
  EXPECT_EQ(r.state, "unavailable") << r.reason;
  // CUDA's own words (cudaGetErrorString), e.g. "CUDA driver version is insufficient for CUDA
  // runtime version" without a driver, "no CUDA-capable device is detected" without a GPU.
  EXPECT_EQ(r.reason.rfind("cudaGetDeviceCount: ", 0), 0u) << r.reason;
  EXPECT_NE(r.reason.find("(cudaError "), std::string::npos) << r.reason;
  EXPECT_FALSE(r.nccl_version.empty()) << "ncclGetVersion runs without a GPU";
  EXPECT_EQ(r.nccl_version.find_first_not_of("0123456789."), std::string::npos) << r.nccl_version;
  EXPECT_FALSE(r.cuda_runtime_version.empty());
}

TEST(ProbeChildTest, RankZeroMakesARealUniqueIdBeforeItLooksForAGpu) {
  if (!haveLibrary("libnccl.so.2") || !haveLibrary("libcudart.so"))
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  ChildRequest req;
  req.mode = "rank";
  req.nranks = 2;
  core::ChildSpec s = spec(req);
  std::vector<std::string> lines;
  s.on_result_line = [&](std::string_view l) { lines.emplace_back(l); };
  auto run = core::runChild(s);
  ASSERT_EQ(run.outcome, core::ChildResult::Outcome::kExited) << run.describe() << run.output;
  // The id is the first line, while the child goes on (to ncclCommInitRank, on a GPU node).
  ASSERT_FALSE(lines.empty());
  ASSERT_EQ(lines[0].rfind("unique_id=", 0), 0u) << lines[0];
  std::string id = lines[0].substr(10);
  EXPECT_EQ(id.size(), 256u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_NE(id, std::string(256, '0')) << "ncclGetUniqueId filled in a bootstrap handle";
  auto r = parseResult(run.result);
  EXPECT_EQ(r.state, "unavailable") << r.reason;
  EXPECT_EQ(r.reason.rfind("cudaGetDeviceCount: ", 0), 0u) << r.reason;
  EXPECT_EQ(r.unique_id, id);

  // Rank 1 joins with that id: it reaches the same point and reports the id it was given.
  ChildRequest join = req;
  join.rank = 1;
  join.unique_id = id;
  auto r1 = runProbe(join);
  EXPECT_EQ(r1.state, "unavailable") << r1.reason;
  EXPECT_EQ(r1.unique_id, id);

  // Two runs, two ids.
  auto again = runProbe(req);
  EXPECT_EQ(again.unique_id.size(), 256u);
  EXPECT_NE(again.unique_id, id);
}

TEST(ProbeChildTest, HangInInitComesAfterTheUniqueId) {
  if (!haveLibrary("libnccl.so.2") || !haveLibrary("libcudart.so"))
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  ChildRequest req;
  req.mode = "rank";
  req.nranks = 2;
  core::ChildSpec s = spec(req, {std::string(kTestModeEnv) + "=hang_in_init"});
  std::atomic<bool> cancel{false};
  s.cancel = &cancel;
  std::string id;
  s.on_result_line = [&](std::string_view l) {
    id = std::string(l);
    cancel = true;  // as the peer kind does when the peer declines
  };
  auto run = core::runChild(s);
  EXPECT_EQ(run.outcome, core::ChildResult::Outcome::kCancelled) << run.describe();
  EXPECT_EQ(id.rfind("unique_id=", 0), 0u) << id;
}

TEST(ProbeChildTest, SendRecvAndDeviceRotationReachTheDeviceCheck) {
  if (!haveLibrary("libnccl.so.2") || !haveLibrary("libcudart.so"))
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  ChildRequest req;
  req.mode = "rank";
  req.nranks = 2;
  req.operation = "send_recv";
  req.device = 1023;
  req.rotate_device = true;
  auto r = runProbe(req);
  EXPECT_EQ(r.state, "unavailable") << r.reason;
  EXPECT_EQ(r.reason.rfind("cudaGetDeviceCount: ", 0), 0u) << r.reason;
}

TEST(ProbeChildTest, MissingCudaRuntimeIsNamed) {
  ChildRequest req;
  req.cudart_libraries = {"/nonexistent/libcudart.so"};
  auto r = runProbe(req);
  EXPECT_EQ(r.state, "unavailable");
  EXPECT_NE(r.reason.find("CUDA runtime not loadable: /nonexistent/libcudart.so"),
            std::string::npos)
      << r.reason;
}

TEST(ProbeChildTest, MissingNcclIsNamed) {
  if (!haveLibrary("libcudart.so")) FW_UNAVAILABLE("nccl") << "libcudart.so is not installed here";
  ChildRequest req;
  req.nccl_library = "/nonexistent/libnccl.so.2";
  auto r = runProbe(req);
  EXPECT_EQ(r.state, "unavailable");
  EXPECT_NE(r.reason.find("NCCL not loadable: /nonexistent/libnccl.so.2"), std::string::npos)
      << r.reason;
}

TEST(ProbeChildTest, LibraryPathPointingNowhereMeansLibraryMissing) {
  // Bare names resolved through a library path with nothing in it (and no cache entry for
  // this made-up soname): what a node without NCCL sees.
  ChildRequest req;
  req.cudart_libraries = {"libcudart-fabricwatch-test.so"};
  auto r = runProbe(req, {"LD_LIBRARY_PATH=/nonexistent"});
  EXPECT_EQ(r.state, "unavailable");
  EXPECT_NE(r.reason.find("cannot open shared object file"), std::string::npos) << r.reason;
}

TEST(ProbeChildTest, BadRequestFails) {
  core::ChildSpec s;
  s.exe = testing::binaryPath();
  s.argv = {s.exe, std::string(kProbeSubcommand)};
  s.input = "sizes=1,2\n";
  auto r = core::runChild(s);
  EXPECT_EQ(r.exit_code, 2);
  auto res = parseResult(r.result);
  EXPECT_EQ(res.state, "failed");
  EXPECT_NE(res.reason.find("bad request: sizes"), std::string::npos) << res.reason;
}

TEST(ProbeProtocolTest, RequestRoundTrips) {
  ChildRequest r;
  r.mode = "rank";
  r.sizes = {8, 1 << 30};
  r.rank = 1;
  r.nranks = 2;
  r.device = 3;
  r.rotate_device = true;
  r.operation = "send_recv";
  r.unique_id = std::string(256, 'a');
  std::string err;
  auto back = parseRequest(encodeRequest(r), err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->sizes, r.sizes);
  EXPECT_EQ(back->rank, 1);
  EXPECT_EQ(back->device, 3);
  EXPECT_TRUE(back->rotate_device);
  EXPECT_EQ(back->operation, "send_recv");
  EXPECT_EQ(back->unique_id, r.unique_id);
  EXPECT_FALSE(parseRequest("operation=broadcast\n", err));
  EXPECT_NE(err.find("all_reduce or send_recv"), std::string::npos) << err;
  EXPECT_FALSE(parseRequest("rank=2\nnranks=2\n", err));
  EXPECT_FALSE(parseRequest("unique_id=abc\n", err));
  EXPECT_FALSE(parseRequest("iterations=0\n", err));
}

TEST(ProbeProtocolTest, ResultParsingIsBoundedAndSkipsBadLines) {
  ChildResult r;
  r.state = "ok";
  r.reason = "multi\nline";
  r.gpus = 8;
  r.device = 5;
  r.unique_id = std::string(255, 'f') + "0";
  r.results = {{1048576, 25.5, 41.1, 71.9}};
  auto back = parseResult(encodeResult(r));
  EXPECT_EQ(back.state, "ok");
  EXPECT_EQ(back.reason, "multi?line");
  EXPECT_EQ(back.gpus, 8);
  EXPECT_EQ(back.device, 5);
  EXPECT_EQ(back.unique_id, r.unique_id);
  EXPECT_TRUE(parseResult("unique_id=" + std::string(256, 'G') + "\n").unique_id.empty())
      << "an id that is not hex is dropped";
  ASSERT_EQ(back.results.size(), 1u);
  EXPECT_DOUBLE_EQ(back.results[0].busbw_gbps, 71.9);
  auto junk = parseResult("state=\xff\xfe\nresult=1 2 x 4\nresult=nonsense\ngpus=many\n");
  EXPECT_EQ(junk.state, "??");
  EXPECT_TRUE(junk.results.empty());
  EXPECT_EQ(junk.gpus, -1);
}

TEST(ProbeProtocolTest, BusBandwidthAsNcclTestsDefinesIt) {
  EXPECT_DOUBLE_EQ(allReduceBusBw(100, 8), 175);  // 2 * 7 / 8
  EXPECT_DOUBLE_EQ(allReduceBusBw(100, 2), 100);
  EXPECT_DOUBLE_EQ(allReduceBusBw(100, 1), 0);
  // sendrecv_perf: busbw = algbw, whatever the ranks.
  EXPECT_DOUBLE_EQ(busBw("send_recv", 100, 2), 100);
  EXPECT_DOUBLE_EQ(busBw("send_recv", 100, 8), 100);
  EXPECT_DOUBLE_EQ(busBw("all_reduce", 100, 8), 175);
  EXPECT_EQ(ncclVersionString(22105), "2.21.5");
  EXPECT_EQ(ncclVersionString(2708), "2.7.8");
  EXPECT_EQ(gpu::cudaVersionString(12040), "12.4");
}

}  // namespace
}  // namespace fabricwatch::probes::nccl
