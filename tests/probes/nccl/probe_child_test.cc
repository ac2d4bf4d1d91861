// The probe child (`fabricwatch __nccl-probe`) against the real libraries of this machine:
// libnccl.so.2 and libcudart (under /usr/local/cuda, found by ldconfig) but no GPU and no
// driver, so the "no device" path runs for real and must say CUDA's own reason. Without the
// libraries it must say which one is missing. The request/result protocol is tested as text.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "core/child_process.h"
#include "probes/nccl/nccl_api.h"
#include "probes/nccl/probe_protocol.h"
#include "tests/support/paths.h"

namespace fabricwatch::probes::nccl {
namespace {

ProbeResult runProbe(const ProbeRequest& req, std::vector<std::string> env = {}) {
  core::ChildSpec s;
  s.exe = testing::binaryPath();
  s.argv = {s.exe, std::string(kProbeSubcommand)};
  if (const char* ld = std::getenv("LD_LIBRARY_PATH"))
    env.push_back(std::string("LD_LIBRARY_PATH=") + ld);
  s.env = env;
  s.input = encodeRequest(req);
  s.timeout = std::chrono::seconds(60);
  auto r = runChild(s);
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
    GTEST_SKIP() << "libnccl.so.2 or libcudart.so is not installed here";
  auto r = runProbe(ProbeRequest{});
  EXPECT_EQ(r.state, "unavailable") << r.reason;
  // CUDA's own words (cudaGetErrorString), e.g. "CUDA driver version is insufficient for CUDA
  // runtime version" without a driver, "no CUDA-capable device is detected" without a GPU.
  EXPECT_EQ(r.reason.rfind("cudaGetDeviceCount: ", 0), 0u) << r.reason;
  EXPECT_NE(r.reason.find("(cudaError "), std::string::npos) << r.reason;
  EXPECT_FALSE(r.nccl_version.empty()) << "ncclGetVersion runs without a GPU";
  EXPECT_EQ(r.nccl_version.find_first_not_of("0123456789."), std::string::npos) << r.nccl_version;
  EXPECT_FALSE(r.cuda_runtime_version.empty());
}

TEST(ProbeChildTest, RankModeWithoutGpuIsUnavailableToo) {
  if (!haveLibrary("libnccl.so.2") || !haveLibrary("libcudart.so"))
    GTEST_SKIP() << "libnccl.so.2 or libcudart.so is not installed here";
  ProbeRequest req;
  req.mode = "rank";
  req.nranks = 2;
  auto r = runProbe(req);
  EXPECT_EQ(r.state, "unavailable") << r.reason;
}

TEST(ProbeChildTest, MissingCudaRuntimeIsNamed) {
  ProbeRequest req;
  req.cudart_libraries = {"/nonexistent/libcudart.so"};
  auto r = runProbe(req);
  EXPECT_EQ(r.state, "unavailable");
  EXPECT_NE(r.reason.find("CUDA runtime not loadable: /nonexistent/libcudart.so"),
            std::string::npos)
      << r.reason;
}

TEST(ProbeChildTest, MissingNcclIsNamed) {
  if (!haveLibrary("libcudart.so")) GTEST_SKIP() << "libcudart.so is not installed here";
  ProbeRequest req;
  req.nccl_library = "/nonexistent/libnccl.so.2";
  auto r = runProbe(req);
  EXPECT_EQ(r.state, "unavailable");
  EXPECT_NE(r.reason.find("NCCL not loadable: /nonexistent/libnccl.so.2"), std::string::npos)
      << r.reason;
}

TEST(ProbeChildTest, LibraryPathPointingNowhereMeansLibraryMissing) {
  // Bare names resolved through a library path with nothing in it (and no cache entry for
  // this made-up soname): what a node without NCCL sees.
  ProbeRequest req;
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
  ProbeRequest r;
  r.mode = "rank";
  r.sizes = {8, 1 << 30};
  r.rank = 1;
  r.nranks = 2;
  r.device = 3;
  r.unique_id = std::string(256, 'a');
  std::string err;
  auto back = parseRequest(encodeRequest(r), err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->sizes, r.sizes);
  EXPECT_EQ(back->rank, 1);
  EXPECT_EQ(back->device, 3);
  EXPECT_EQ(back->unique_id, r.unique_id);
  EXPECT_FALSE(parseRequest("rank=2\nnranks=2\n", err));
  EXPECT_FALSE(parseRequest("unique_id=abc\n", err));
  EXPECT_FALSE(parseRequest("iterations=0\n", err));
}

TEST(ProbeProtocolTest, ResultParsingIsBoundedAndSkipsBadLines) {
  ProbeResult r;
  r.state = "ok";
  r.reason = "multi\nline";
  r.gpus = 8;
  r.results = {{1048576, 25.5, 41.1, 71.9}};
  auto back = parseResult(encodeResult(r));
  EXPECT_EQ(back.state, "ok");
  EXPECT_EQ(back.reason, "multi?line");
  EXPECT_EQ(back.gpus, 8);
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
  EXPECT_EQ(ncclVersionString(22105), "2.21.5");
  EXPECT_EQ(ncclVersionString(2708), "2.7.8");
  EXPECT_EQ(cudaVersionString(12040), "12.4");
}

}  // namespace
}  // namespace fabricwatch::probes::nccl
