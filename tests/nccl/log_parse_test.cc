// The NCCL log parser on real-shaped excerpts (tests/fixtures/nccl_logs/*.log, each with its
// expected summary in *.json), on single lines of every release's formats, and on truncated,
// garbage and huge input. FW_UPDATE_GOLDEN=1 rewrites the expected summaries: review the diff.
#include "nccl/log_parse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <sstream>

#include "core/utf8.h"
#include "core/value_format.h"
#include "nccl/log_verdict.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace fabricwatch::nccl {
namespace {

using testing::readFile;

std::string logsDir() { return testing::fixture("nccl_logs"); }

struct Parsed {
  LogSummary s;
  Verdict v;
};

Parsed parseFixture(const std::string& name) {
  Parsed p{parseNcclLog(readFile(logsDir() + "/" + name + ".log")), {}};
  p.v = judge(p.s);
  return p;
}

Parsed parseText(const std::string& text) {
  Parsed p{parseNcclLog(text), {}};
  p.v = judge(p.s);
  return p;
}

bool hasKind(const LogSummary& s, const std::string& kind) {
  for (const auto& f : s.findings) {
    if (f.kind == kind) return true;
  }
  return false;
}

bool hasProblem(const Verdict& v, const std::string& severity, const std::string& words) {
  for (const auto& p : v.problems) {
    if (p.severity == severity && p.message.find(words) != std::string::npos) return true;
  }
  return false;
}

TEST(NcclLogGoldenTest, EveryFixtureMatchesItsExpectedSummary) {
  bool update = std::getenv("FW_UPDATE_GOLDEN") != nullptr;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(logsDir())) {
    if (e.path().extension() != ".log") continue;
    ++n;
    auto p = parseFixture(e.path().stem().string());
    std::string got = core::toJson(summaryValue(p.s, p.v), 2) + "\n";
    std::string golden = e.path().parent_path() / (e.path().stem().string() + ".json");
    if (update) std::ofstream(golden, std::ios::binary) << got;
    EXPECT_EQ(readFile(golden), got) << e.path();
  }
  EXPECT_GE(n, 8);
}

// Found by nccl_log_fuzz (issue 13): a line whose prefix before "NCCL" starts with a space
// (" NCCL INFO ...", a log line cut after its host:pid:tid) looped for ever in parseOrigin.
// The input is also in the fuzz corpus (leading_space_prefix).
TEST(NcclLogTest, APrefixOfSpacesEndsTheOriginSearch) {
  auto run = std::async(std::launch::async, [] {
    return parseNcclLog(
        " NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\n"
        "   NCCL INFO cudaDriverVersion 12040\n"
        "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0\n");
  });
  if (run.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "parseNcclLog did not return: the origin search loops";
    std::_Exit(1);  // the looping thread cannot be joined
  }
  LogSummary s = run.get();
  EXPECT_EQ(s.hosts.count("h"), 1u);
}

TEST(NcclLogTest, InfiniBandWithGpuDirect) {
  auto p = parseFixture("ib");
  EXPECT_EQ(p.s.nccl_version, "2.21.5");
  EXPECT_EQ(p.s.nccl_cuda_version, "12.4");
  EXPECT_EQ(p.s.cuda_driver_version, "12.4");
  EXPECT_EQ(p.s.hosts.size(), 2u);
  EXPECT_EQ(p.s.processes.size(), 4u);
  EXPECT_EQ(p.s.ranks, 4);
  EXPECT_EQ(p.s.nodes, 2);
  EXPECT_EQ(p.s.nics.size(), 4u);
  EXPECT_EQ(p.s.nics[1].device, "mlx5_3");
  EXPECT_EQ(p.s.nics[1].link, "IB");
  EXPECT_EQ(p.s.oob, "ibp26s0:10.12.0.17");
  EXPECT_EQ(p.s.net_plugin_state, "not_found");
  EXPECT_EQ(p.s.transports.at("NET/IB"), 10u);
  EXPECT_EQ(p.s.transports.at("P2P/CUMEM"), 3u);
  EXPECT_EQ(p.s.channels, 4);
  EXPECT_EQ(p.s.tree_channels, 4);
  EXPECT_EQ(p.s.init_complete, 4u);
  EXPECT_EQ(p.s.env.at("NCCL_IB_HCA"), "mlx5_0,mlx5_3,mlx5_4,mlx5_5");
  EXPECT_EQ(p.v.inter_node_transport, "ib");
  EXPECT_EQ(p.v.gdr, "on");
  EXPECT_EQ(p.v.status, "ok") << core::toJson(summaryValue(p.s, p.v), 2);
}

TEST(NcclLogTest, RoceWithGpuDirect) {
  auto p = parseFixture("roce");
  EXPECT_EQ(p.s.nccl_version, "2.19.3");
  EXPECT_EQ(p.v.inter_node_transport, "roce");
  EXPECT_EQ(p.v.gdr, "on");
  EXPECT_EQ(p.s.env.at("NCCL_IB_GID_INDEX"), "3");
  EXPECT_EQ(p.s.env.at("NCCL_IB_TC"), "136");
  EXPECT_EQ(p.v.status, "ok");
}

TEST(NcclLogTest, SocketFallbackNamesTheVersionMismatch) {
  auto p = parseFixture("socket_fallback");
  EXPECT_EQ(p.s.nccl_version, "2.18.3");  // printed without a prefix by 2.18
  EXPECT_EQ(p.v.inter_node_transport, "socket");
  EXPECT_EQ(p.v.gdr, "off");
  EXPECT_TRUE(hasKind(p.s, "symbol_version"));
  EXPECT_TRUE(hasKind(p.s, "ib_no_device"));
  EXPECT_TRUE(hasProblem(p.v, "critical", "TCP sockets"));
  EXPECT_TRUE(hasProblem(p.v, "critical", "IBVERBS_PRIVATE_34"));
  EXPECT_EQ(p.s.nics.size(), 2u);
  EXPECT_EQ(p.s.nics[0].address, "10.0.1.5");
  EXPECT_EQ(p.v.status, "problem");
}

TEST(NcclLogTest, EfaThroughTheOfiPlugin) {
  auto p = parseFixture("efa_ofi");
  EXPECT_EQ(p.s.ofi_provider, "efa");
  EXPECT_EQ(p.s.ofi_nics, 32);
  EXPECT_EQ(p.s.ofi_plugin_version, "aws-ofi-nccl 1.9.1-aws");
  EXPECT_EQ(p.s.net_plugin_state, "loaded");
  EXPECT_EQ(p.s.net_plugin, "AWS Libfabric");
  EXPECT_EQ(p.s.transports.at("NET/AWS Libfabric"), 3u);
  EXPECT_EQ(p.v.inter_node_transport, "efa");
  EXPECT_EQ(p.v.gdr, "on");
  EXPECT_EQ(p.v.status, "ok");
}

TEST(NcclLogTest, GpuDirectDisabled) {
  auto p = parseFixture("gdr_disabled");
  EXPECT_EQ(p.v.inter_node_transport, "roce");
  EXPECT_EQ(p.v.gdr, "off");
  EXPECT_EQ(p.s.gdr_disabled.size(), 2u);
  EXPECT_TRUE(hasProblem(p.v, "warning", "GPUDirect RDMA was off"));
  EXPECT_EQ(p.s.transports.at("SHM"), 2u);
  EXPECT_EQ(p.v.status, "problem");
}

TEST(NcclLogTest, PluginNotFoundBecauseOfLibefa) {
  auto p = parseFixture("plugin_not_found");
  EXPECT_EQ(p.s.net_plugin_state, "not_found");
  EXPECT_EQ(p.v.inter_node_transport, "socket");
  EXPECT_TRUE(hasKind(p.s, "symbol_version"));
  EXPECT_TRUE(hasProblem(p.v, "critical", "EFA_1.4"));
}

TEST(NcclLogTest, InitErrorKeepsTheCauseOnce) {
  auto p = parseFixture("init_error");
  EXPECT_EQ(p.s.nccl_version, "2.27.3");
  EXPECT_EQ(p.s.nodes, 7);
  ASSERT_TRUE(hasKind(p.s, "ibv_call"));
  // The process warned, so its trace says where the WARN's failure was, not a second cause.
  EXPECT_FALSE(hasKind(p.s, "nccl_trace"));
  for (const auto& f : p.s.findings) {
    if (f.kind == "ibv_call") {
      EXPECT_EQ(f.trace, "transport/net_ib.cc:1050 -> 2");
    }
  }
  EXPECT_TRUE(hasProblem(p.v, "critical", "NCCL_CROSS_NIC=0"));
  // PyTorch's DistBackendError is the consequence, reported as such.
  EXPECT_TRUE(hasProblem(p.v, "info", "a consequence of the error above"));
  EXPECT_EQ(p.v.status, "problem");
}

TEST(NcclLogTest, InterleavedRanksBehindLauncherPrefixes) {
  auto p = parseFixture("interleaved");
  EXPECT_EQ(p.s.hosts, (std::set<std::string>{"dgx-b-01", "dgx-b-02"}));
  EXPECT_EQ(p.s.processes.size(), 7u);  // rank 6 never logs here; rank 2 only in its WARN
  EXPECT_EQ(p.s.nics.size(), 4u);       // merged NICs: [0]={[0] mlx5_0:1/IB, [1] mlx5_1:1/IB} ...
  EXPECT_EQ(p.s.garbled_lines, 1u);
  EXPECT_EQ(p.v.inter_node_transport, "ib");
  EXPECT_EQ(p.v.gdr, "on");
  ASSERT_EQ(p.s.completions.size(), 1u);  // the timestamped 2.26 WARN
  EXPECT_EQ(p.s.completions[0].status, 12);
  EXPECT_EQ(p.s.completions[0].peer, "10.40.0.2<58713>");
}

TEST(NcclLogTest, NewerOfiAndPluginFormats) {
  auto p = parseText(
      "h:1:2 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found 16 nics)\n"
      "h:1:2 [0] NCCL INFO Using network Libfabric\n"
      "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
      "h:1:2 [0] NCCL INFO Channel 00/0 : 9[1] -> 0[0] [receive] via "
      "NET/Libfabric/0/GDRDMA(PCI)/Shared\n");
  EXPECT_EQ(p.s.ofi_fabric, "efa-direct");
  EXPECT_EQ(p.s.ofi_nics, 16);
  EXPECT_EQ(p.s.transports.count("NET/Libfabric"), 1u);
  EXPECT_EQ(p.v.inter_node_transport, "efa");
  EXPECT_EQ(p.v.gdr, "on");

  auto hpcx = parseText(
      "h:1:2 [0] NCCL INFO P2P plugin IBext_v8\n"
      "h:1:2 [0] NCCL INFO NET/IB : Using [0]irdma0:1/RoCE [RO]; OOB eth0:172.16.0.1<0>\n"
      "h:1:2 [0] NCCL INFO Using network IBext_v8\n"
      "h:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 2[0] [receive] via NET/IBext_v8/0(1)\n");
  EXPECT_EQ(hpcx.s.net_plugin, "IBext_v8");
  EXPECT_EQ(hpcx.v.inter_node_transport, "roce");
  EXPECT_EQ(hpcx.v.gdr, "off");
}

TEST(NcclLogTest, MixedNetworksAcrossProcessesAreCritical) {
  auto p =
      parseText("a:1:1 [0] NCCL INFO Using network IB\nb:2:2 [0] NCCL INFO Using network Socket\n");
  EXPECT_TRUE(hasProblem(p.v, "critical", "different networks"));
}

TEST(NcclLogTest, NoNcclLinesIsUnknown) {
  auto p = parseText("hello\nworld\n");
  EXPECT_EQ(p.v.status, "unknown");
  EXPECT_EQ(p.v.inter_node_transport, "unknown");
  EXPECT_EQ(p.v.problems.size(), 1u);
}

TEST(NcclLogTest, ChunkedFeedingGivesTheSameSummary) {
  std::string text = readFile(logsDir() + "/interleaved.log");
  auto whole = parseFixture("interleaved");
  LogParser byte;
  for (char c : text) byte.feed(std::string_view(&c, 1));
  auto s = byte.finish();
  EXPECT_EQ(core::toJson(summaryValue(s, judge(s))), core::toJson(summaryValue(whole.s, whole.v)));
}

TEST(NcclLogTest, TruncatedInputKeepsWhatItHas) {
  std::string text = readFile(logsDir() + "/ib.log");
  std::string cut = text.substr(0, text.find("Using network IB") + 10);  // cut mid-line
  auto p = parseText(cut);
  EXPECT_EQ(p.s.nccl_version, "2.21.5");
  EXPECT_EQ(p.s.networks.count("IB"), 0u);  // "Using netw" is not a network
  EXPECT_EQ(p.v.inter_node_transport, "unknown");
}

TEST(NcclLogTest, GarbageIsBoundedAndValidUtf8) {
  std::mt19937 rng(7);
  std::string junk;
  for (int i = 0; i < 200000; ++i) junk += static_cast<char>(rng() & 0xff);
  junk += "\nx:1:1 [0] NCCL INFO Using network \xff\xfe\x01Socket\n";
  junk += "\nx:1:1 [0] misc.cc:1 NCCL WARN \xc3\x28 bad \x80 bytes\n";
  auto p = parseText(junk);
  std::string json = core::toJson(summaryValue(p.s, p.v));
  EXPECT_EQ(core::sanitizeUtf8(json), json) << "the summary must be valid UTF-8";
  for (const auto& f : p.s.findings) EXPECT_LE(f.text.size(), LogLimits{}.max_text_bytes);
}

TEST(NcclLogTest, HugeInputIsBounded) {
  LogLimits lim;
  lim.max_lines = 1000;
  LogParser parser(lim);
  // A 64 MiB line without a newline: held at most max_line_bytes at a time.
  std::string mb(1 << 20, 'a');
  for (int i = 0; i < 64; ++i) parser.feed(mb);
  parser.feed("\n");
  // Distinct warnings, far more than are kept.
  for (int i = 0; i < 5000; ++i)
    parser.feed("h:1:1 [0] x.cc:1 NCCL WARN distinct warning " + std::to_string(i) + "\n");
  auto s = parser.finish();
  EXPECT_EQ(s.long_lines, 1u);
  EXPECT_TRUE(s.truncated);
  EXPECT_EQ(s.lines, 1000u);
  EXPECT_EQ(s.findings.size(), lim.max_findings);
  EXPECT_EQ(s.findings_dropped, 999u - lim.max_findings);
}

// Issue 23, item 7: bytes without a newline (/dev/zero) never count a line, so the line bound
// alone never ended an endless input. The byte bound does, newline or not, and stopped() tells
// the reader to stop reading.
TEST(NcclLogTest, EndlessInputWithoutNewlinesStopsAtTheByteBound) {
  LogLimits lim;
  lim.max_bytes = 8u << 20;
  LogParser parser(lim);
  std::string zeros(1 << 16, '\0');
  int chunks = 0;
  while (!parser.stopped() && chunks < 1000) {
    parser.feed(zeros);
    ++chunks;
  }
  EXPECT_TRUE(parser.stopped());
  EXPECT_EQ(chunks, 129) << "stops within the chunk that passes 8 MiB";
  auto s = parser.finish();
  EXPECT_TRUE(s.truncated);
  EXPECT_EQ(s.bytes, lim.max_bytes);
  EXPECT_EQ(s.lines, 0u);
  auto v = judge(s);
  auto it = std::find_if(v.problems.begin(), v.problems.end(),
                         [](const Problem& p) { return p.code == "truncated"; });
  ASSERT_NE(it, v.problems.end());
  EXPECT_NE(it->evidence.find("8388608 bytes read"), std::string::npos) << it->evidence;
}

TEST(NcclLogTest, TheByteBoundCutsWithinAChunkAndKeepsTheLinesBeforeIt) {
  LogLimits lim;
  lim.max_bytes = 100;
  LogParser parser(lim);
  std::string line = "h:1:1 [0] NCCL INFO NET/Plugin: x\n";  // 35 bytes
  parser.feed(line + line + line + line);                    // 140: the third is cut at 100
  EXPECT_TRUE(parser.stopped());
  parser.feed(line);  // ignored
  auto s = parser.finish();
  EXPECT_EQ(s.bytes, 100u);
  EXPECT_EQ(s.lines, 2u);
  EXPECT_TRUE(s.truncated);
}

TEST(NcclLogTest, IdenticalFindingsOfManyRanksAreCountedOnce) {
  std::string text;
  for (int r = 0; r < 64; ++r)
    text += "\nh" + std::to_string(r) +
            ":1:1 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error "
            "Network is unreachable\n";
  auto p = parseText(text);
  ASSERT_EQ(p.s.findings.size(), 1u);
  EXPECT_EQ(p.s.findings[0].count, 64u);
  EXPECT_EQ(p.s.findings[0].kind, "ibv_call");
  EXPECT_EQ(p.s.findings[0].text,
            "misc/ibvwrap.cc:187 Call to ibv_modify_qp failed with error Network is unreachable");
}

}  // namespace
}  // namespace fabricwatch::nccl
