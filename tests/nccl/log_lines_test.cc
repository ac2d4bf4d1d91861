// Single lines and short logs of every release's wording: completion errors of NCCL 2.4 to 2.29,
// every ibv_wc_status with its own meaning, prefixes of launchers and log shippers, one-node
// jobs, benign traces, what NCCL chose, and advice that fits the hardware and the era.
#include <gtest/gtest.h>

#include <set>

#include "core/value_format.h"
#include "nccl/log_parse.h"
#include "nccl/log_verdict.h"

namespace fabricwatch::nccl {
namespace {

struct Judged {
  LogSummary s;
  Verdict v;
};

Judged parse(const std::string& text) {
  Judged p{parseNcclLog(text), {}};
  p.v = judge(p.s);
  return p;
}

const Problem* problem(const Verdict& v, const std::string& code) {
  for (const auto& p : v.problems)
    if (p.code == code) return &p;
  return nullptr;
}

bool has(const std::string& s, const std::string& w) { return s.find(w) != std::string::npos; }

std::string dump(const Judged& p) { return core::toJson(summaryValue(p.s, p.v), 2); }

TEST(NcclLogLinesTest, CompletionErrorsInTheWordingOfEveryRelease) {
  struct Case {
    const char* release;
    const char* line;
    int status;
    int64_t vendor;
    const char* peer;
    const char* hca;
    const char* remote_gid;
  };
  const Case cases[] = {
      {"2.4", "NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129", 12, 129, "",
       "", ""},
      {"2.12",
       "NET/IB : Got completion from peer 10.0.0.2<4242> with error 4, opcode 32564, len 32564, "
       "vendor err 81",
       4, 81, "10.0.0.2<4242>", "", ""},
      {"2.18",
       "NET/IB : Got completion from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor "
       "err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2",
       12, 129, "10.0.0.2<4242>", "", "::ffff:10.0.0.2"},
      {"2.21",
       "NET/IB : Got completion from peer 10.0.0.2<4242> with status=12 opcode=129 len=65536 "
       "vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2",
       12, 129, "10.0.0.2<4242>", "", "::ffff:10.0.0.2"},
      {"2.23",
       "NET/IB: Got completion from peer 10.0.0.2<4242> with status=10 opcode=1 len=0 vendor err "
       "136 (Send) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_3",
       10, 136, "10.0.0.2<4242>", "mlx5_3", "::ffff:10.0.0.2"},
      {"2.28",
       "NET/IB: Got completion from peer 10.0.0.2<4242> with status=IBV_WC_RETRY_EXC_ERR(12) "
       "opcode=IBV_WC_SEND(0) reqSize=0 vendor_err=129 req_type=Send localGid ::ffff:10.0.0.1 "
       "remoteGids::ffff:10.0.0.2 hca mlx5_0",
       12, 129, "10.0.0.2<4242>", "mlx5_0", "::ffff:10.0.0.2"},
      {"2.29",
       "NET/IB: Got completion from peer 10.0.0.2<4242> with status=IBV_WC_REM_ACCESS_ERR(10) "
       "opcode=IBV_WC_RDMA_WRITE(1) vendor_err=136  localGid ::ffff:10.0.0.1 "
       "remoteGids::ffff:10.0.0.2 hca mlx5_1",
       10, 136, "10.0.0.2<4242>", "mlx5_1", "::ffff:10.0.0.2"},
      {"2.28 GIN",
       "NET/IB/GIN: Got completion from peer 10.0.0.2<4242> with status=13 opcode=0 len=0 vendor "
       "err 0 (GIN) hca mlx5_2",
       13, 0, "10.0.0.2<4242>", "mlx5_2", ""},
  };
  for (const auto& c : cases) {
    auto p = parse(std::string("a:1:2 [0] transport/net_ib.cc:1 NCCL WARN ") + c.line + "\n");
    ASSERT_EQ(p.s.completions.size(), 1u) << c.release;
    const Completion& e = p.s.completions[0];
    EXPECT_EQ(e.status, c.status) << c.release;
    EXPECT_EQ(e.vendor_err, c.vendor) << c.release;
    EXPECT_EQ(e.peer, c.peer) << c.release;
    EXPECT_EQ(e.hca, c.hca) << c.release;
    EXPECT_EQ(e.remote_gid, c.remote_gid) << c.release;
    EXPECT_EQ(e.line, 1u);
    EXPECT_EQ(p.v.status, "problem") << c.release;
  }
}

TEST(NcclLogLinesTest, EveryCompletionStatusHasItsOwnMeaningAndAdvice) {
  std::set<std::string> codes, messages;
  for (int status = 1; status <= 21; ++status) {
    auto p = parse(
        "a:1:2 [0] x.cc:1 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<1> "
        "with status=" +
        std::to_string(status) + " opcode=0 len=0 vendor err 0 (Send) hca mlx5_0\n");
    ASSERT_EQ(p.v.problems.size(), 1u) << status << dump(p);
    const Problem& pr = p.v.problems[0];
    EXPECT_EQ(pr.severity, "critical") << status;
    EXPECT_TRUE(has(pr.message, "IBV_WC_")) << pr.message;
    EXPECT_TRUE(has(pr.message, "peer 10.0.0.2<1>") && has(pr.message, "mlx5_0")) << pr.message;
    EXPECT_EQ(pr.line, 1u);
    codes.insert(pr.code);
    messages.insert(pr.message);
  }
  EXPECT_EQ(codes.size(), 21u) << "each status has its own code";
  EXPECT_EQ(messages.size(), 21u);
  auto lpe = parse(
      "a:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion with error 4, opcode 0, "
      "len 0, vendor err 81\n");
  EXPECT_EQ(lpe.v.problems[0].code, "ib_local_protection");
  EXPECT_TRUE(has(lpe.v.problems[0].message, "GPUDirect RDMA"));
}

TEST(NcclLogLinesTest, RetryExceededAdviceFitsWhatTheLogShows) {
  const std::string warn =
      "a:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer "
      "10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129 (Send)";
  auto routable = parse(warn + " localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2\n");
  const Problem* r = problem(routable.v, "ib_retry_exceeded");
  ASSERT_TRUE(r);
  EXPECT_TRUE(has(r->message, "drops packets"));
  EXPECT_FALSE(has(r->message, "NCCL_IB_GID_INDEX")) << "the GIDs are fine: not a GID problem";

  auto running = parse(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    58.21   18.01   33.77      0\n" +
      warn + "\n");
  const Problem* m = problem(running.v, "ib_retry_exceeded");
  ASSERT_TRUE(m);
  EXPECT_TRUE(has(m->message, "Traffic flowed before"));
  EXPECT_FALSE(has(m->message, "NCCL_IB_GID_INDEX"));

  auto unknown = parse(warn + "\n");
  const Problem* u = problem(unknown.v, "ib_retry_exceeded");
  ASSERT_TRUE(u);
  EXPECT_TRUE(has(u->message, "NCCL_IB_GID_INDEX") && has(u->message, "drops packets"));

  auto ll = parse(warn + " localGid ::ffff:10.0.0.1 remoteGidsfe80::a288:c2ff:fe1b:3a40\n");
  EXPECT_TRUE(has(problem(ll.v, "ib_retry_exceeded")->message, "on the peer's node"));
}

TEST(NcclLogLinesTest, FlushErrorsAreTheConsequenceOfTheFirst) {
  auto p = parse(
      "a:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 "
      "opcode=0 len=0 vendor err 129 (Recv)\n"
      "a:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=5 "
      "opcode=0 len=0 vendor err 249 (Recv)\n"
      "a:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=5 "
      "opcode=0 len=0 vendor err 249 (Recv)\n");
  ASSERT_EQ(p.s.completions.size(), 2u);
  EXPECT_EQ(p.s.completions[1].count, 2u);
  EXPECT_EQ(problem(p.v, "ib_retry_exceeded")->severity, "critical");
  EXPECT_EQ(problem(p.v, "ib_flushed")->severity, "info");
}

TEST(NcclLogLinesTest, LogShipperAndLauncherPrefixes) {
  auto p = parse(
      "  | 2025-05-16T16:39:51.208-07:00ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using "
      "eth0:10.36.29.253<0> | ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using "
      "eth0:10.36.29.253<0>\n"
      "[rank3]:twshared1016:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set to eth2\n"
      "node01: VM-0-14-centos:106:196 [0] NCCL INFO cudaDriverVersion 12040\n"
      "[1,4]<stdout>:gpu7:4105:4372 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB "
      "ib0:1.2.3.4<0>\n"
      "(RayTrainWorker pid=950, ip=10.67.132.202) worker-p5:950:3034 [0] NCCL INFO comm 0x1 rank 0 "
      "nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n");
  EXPECT_EQ(p.s.garbled_lines, 0u) << "CloudWatch's 'msg | msg' is one line";
  EXPECT_EQ(p.s.hosts, (std::set<std::string>{"ip-10-36-29-253", "twshared1016", "VM-0-14-centos",
                                              "gpu7", "worker-p5"}));
  EXPECT_EQ(p.s.oob, "eth0:10.36.29.253");
  EXPECT_EQ(p.s.env.at("NCCL_SOCKET_IFNAME"), "eth2");
  EXPECT_EQ(p.s.nodes, 2);
  EXPECT_EQ(p.s.local_ranks, 8);
  // Two ranks' writes mixed are still skipped.
  auto mixed = parse("a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via a:1:1 [1] NCCL INFO x\n");
  EXPECT_EQ(mixed.s.garbled_lines, 1u);
}

TEST(NcclLogLinesTest, OldBootstrapInterfacesAndWordingEras) {
  auto p = parse(
      "[155] crow-19:5330:5330 [3] NCCL INFO Bootstrap : Using [0]eth0:10.100.62.64<0>\n"
      "crow-19:5330:7970 [3] NCCL INFO Ring 01 : 2[b2000] -> 5[3d000] [receive] via NET/IB/3\n");
  EXPECT_EQ(p.s.oob, "eth0:10.100.62.64");
  EXPECT_EQ(p.s.wording_era, "2.4");
  EXPECT_EQ(parse("h:1:1 [0] NCCL INFO Channel 01 : 9[101d0] -> 0[101c0] [receive] via NET/IB/0\n")
                .s.wording_era,
            "2.7");
  EXPECT_EQ(parse("h:1:1 [0] NCCL INFO Channel 01/0 : 9[1] -> 0[0] [receive] via NET/IB/0\n")
                .s.wording_era,
            "2.12");
}

TEST(NcclLogLinesTest, SingleNodeJobsGetNoInterNodeProblems) {
  const std::string sockets =
      "NCCL INFO NET/IB : No device found.\n"
      "h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      "h:1:1 [0] NCCL INFO Using network Socket\n";
  for (const std::string& tail :
       {std::string("h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 1000\n"),
        std::string("h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8\n"),
        std::string("h:2:2 [1] NCCL INFO cudaDriverVersion 12040\n")}) {
    auto p = parse("h:1:1 [0] " + sockets + tail);
    EXPECT_EQ(p.v.inter_node_transport, "none") << tail;
    EXPECT_EQ(p.v.status, "ok") << dump(p);
  }
  // One host seen, but 16 ranks and one process: a node's view of a bigger job.
  auto part = parse("h:1:1 [0] " + sockets +
                    "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0 busId 1000\n");
  EXPECT_NE(part.v.inter_node_transport, "none");
  EXPECT_EQ(part.v.status, "problem");
  // Two hosts over sockets: the classic fallback.
  auto two = parse("h:1:1 [0] " + sockets + "g:1:1 [0] NCCL INFO Using network Socket\n");
  EXPECT_EQ(two.v.inter_node_transport, "socket");
  EXPECT_EQ(problem(two.v, "socket_transport")->severity, "critical");
}

TEST(NcclLogLinesTest, ATraceIsAFailureOnlyWithAWarnOrAnAbort) {
  auto benign = parse(
      "h:1:1 [0] NCCL INFO Could not find real path of /sys/class/net/eth0/device\n"
      "h:1:1 [0] NCCL INFO include/net.h:19 -> 2\n"
      "h:1:1 [0] NCCL INFO CUDA Dev 0[3], Socket NIC distance :  SYS\n"
      "h:1:1 [0] NCCL INFO Abort COMPLETE\n");
  EXPECT_EQ(problem(benign.v, "nccl_trace"), nullptr) << dump(benign);
  auto alone = parse("h:1:1 [0] NCCL INFO init.cc:1263 -> 2\n");
  EXPECT_EQ(alone.v.status, "ok") << "no WARN, no abort: NCCL carried on";
  auto aborted = parse(
      "h:1:1 [0] NCCL INFO init.cc:1263 -> 2\n"
      "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 - Abort COMPLETE\n");
  ASSERT_TRUE(problem(aborted.v, "nccl_trace"));
  EXPECT_TRUE(has(problem(aborted.v, "nccl_trace")->message, "ncclSystemError"));
  auto warned = parse(
      "h:1:1 [0] misc/socket.cc:1 NCCL WARN Net : Connection closed by remote "
      "peer 10.0.0.2<1>\nh:1:1 [0] NCCL INFO misc/socket.cc:2 -> 6\n"
      "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Abort COMPLETE\n");
  EXPECT_EQ(problem(warned.v, "nccl_trace"), nullptr) << "the WARN is the cause";
  EXPECT_TRUE(has(problem(warned.v, "socket_remote")->evidence, "line 2: misc/socket.cc:2 -> 6"));
}

TEST(NcclLogLinesTest, GpuDirectRdmaOnlyWhereItApplies) {
  auto socket = parse(
      "h:1:1 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n"
      "g:1:1 [0] NCCL INFO Using network IB\n");
  EXPECT_EQ(socket.v.gdr, "unknown");
  EXPECT_EQ(problem(socket.v, "gdr_off"), nullptr);
  const std::string ib =
      "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:1.2.3.4<0>\n"
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n";
  auto old = parse("NCCL version 2.10.3+cuda11.3\n" + ib);
  EXPECT_TRUE(has(problem(old.v, "gdr_off")->message, "nv_peer_mem"));
  EXPECT_FALSE(has(problem(old.v, "gdr_off")->message, "DMA-BUF"));
  auto recent = parse("NCCL version 2.21.5+cuda12.4\n" + ib);
  EXPECT_TRUE(has(problem(recent.v, "gdr_off")->message, "DMA-BUF"));
  auto far = parse(ib +
                   "h:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 42000 / HCA 0 "
                   "(distance 6 > 4)\n");
  EXPECT_TRUE(has(problem(far.v, "gdr_off")->message, "NCCL_NET_GDR_LEVEL"));
  EXPECT_FALSE(has(problem(far.v, "gdr_off")->message, "nvidia_peermem"));
  auto efa = parse(
      "h:1:1 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n"
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0\n");
  EXPECT_EQ(efa.v.inter_node_transport, "efa");
  EXPECT_TRUE(has(problem(efa.v, "gdr_off")->message, "FI_EFA_USE_DEVICE_RDMA"));
  EXPECT_FALSE(has(problem(efa.v, "gdr_off")->message, "nvidia_peermem"));
}

TEST(NcclLogLinesTest, WhatNcclChoseWithoutChannelLines) {
  auto roce = parse(
      "a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:1.2.3.4<0>\n"
      "a:1:1 [0] NCCL INFO Using network IB\nb:1:1 [0] NCCL INFO Using network IB\n");
  EXPECT_EQ(roce.v.inter_node_transport, "roce");
  auto ext = parse("a:1:1 [0] NCCL INFO Using network IBext_v8\nb:1:1 [0] NCCL INFO x\n");
  EXPECT_EQ(ext.v.inter_node_transport, "ib");
  auto nvls = parse(
      "a:1:1 [0] NCCL INFO 16 coll channels, 0 collnet channels, 16 nvls channels, "
      "16 p2p channels, 2 p2p channels per peer\n");
  EXPECT_EQ(nvls.v.nvls, "on");
  EXPECT_EQ(nvls.v.collnet, "unknown") << "the collnet count is the coll count, used or not";
  auto sharp = parse("a:1:1 [5] NCCL INFO CollNet 05/0 : 5 [receive] via COLLNET/SHARP/5/GDRDMA\n");
  EXPECT_EQ(sharp.v.collnet, "on");
  EXPECT_EQ(sharp.v.inter_node_transport, "collnet");
  auto sharp_ports = parse("a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/IB/SHARP [RO]; OOB x\n");
  ASSERT_EQ(sharp_ports.s.nics.size(), 1u);
  EXPECT_EQ(sharp_ports.s.nics[0].link, "IB");
  EXPECT_TRUE(sharp_ports.s.nics[0].sharp);
}

TEST(NcclLogLinesTest, SetUpMistakesNameTheVariableAndTheLine) {
  auto gid = parse(
      "h:1:1 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 0.\n"
      "h:1:1 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 7 mtu 5 GID 0 (80FE/1A8A41FE)\n");
  const Problem* g = problem(gid.v, "gid_link_local");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->severity, "critical");
  EXPECT_TRUE(has(g->message, "NCCL_IB_GID_INDEX=0") && has(g->evidence, "line 2:"));
  auto unset =
      parse("h:1:1 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 7 mtu 5 GID 1 (80FE/1A8A41FE)\n");
  EXPECT_EQ(problem(unset.v, "gid_link_local")->severity, "warning");
  auto ifname = parse(
      "h:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth9\n"
      "h:1:1 [0] misc/socket.cc:1 NCCL WARN Bootstrap : no socket interface found\n");
  EXPECT_TRUE(has(problem(ifname.v, "socket_interface")->message, "NCCL_SOCKET_IFNAME=eth9"));
  auto efa = parse(
      "libfabric:85:1747438790::core:core:fi_getinfo_():1392<warn> fi_getinfo: provider "
      "efa output empty list\n");
  EXPECT_EQ(problem(efa.v, "efa_not_usable")->line, 1u);
}

TEST(NcclLogLinesTest, PyTorchReportsOfEveryEra) {
  auto old = parse(
      "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran "
      "for 1802212 milliseconds before timing out.\n");
  EXPECT_EQ(old.s.watchdog.ranks, (std::set<int64_t>{1}));
  EXPECT_EQ(old.s.watchdog.seq_max, 469508);
  EXPECT_EQ(old.s.watchdog.timeout_ms, 1800000);
  EXPECT_EQ(old.v.status, "problem");
  auto recent = parse(
      "[rank4]:[E1206 18:44:12.755262105 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog "
      "caught collective operation timeout: WorkNCCL(SeqNum=7753, "
      "OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, "
      "Timeout(ms)=600000) ran for 600099 milliseconds before timing out.\n");
  EXPECT_EQ(*recent.s.watchdog.ops.begin(), "_REDUCE_SCATTER_BASE");
  EXPECT_TRUE(has(problem(recent.v, "pytorch_watchdog")->message, "on rank 4 within 600 s"));
  // One line: the report, its class and NCCL's last error, as PyTorch 2.0 printed them.
  auto one = parse(
      "what(): NCCL error: remote process exited or there was a network error, NCCL version 2.14.3 "
      "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
      "prematurely. Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error "
      "12, opcode 0, len 0, vendor err 129\n");
  EXPECT_EQ(one.s.nccl_version, "2.14.3");
  ASSERT_EQ(one.s.completions.size(), 1u);
  EXPECT_EQ(problem(one.v, "ib_retry_exceeded")->severity, "critical");
  EXPECT_EQ(problem(one.v, "framework_error")->severity, "info");
  auto alone = parse(
      "[rank1]: torch.distributed.DistBackendError: NCCL error in: x.cpp:1, remote "
      "process exited or there was a network error, NCCL version 2.18.5\n"
      "[rank1]: ncclRemoteError: A call failed possibly due to a network error\n");
  const Problem* f = problem(alone.v, "framework_error");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, "critical") << "without NCCL's own lines the report is all there is";
  EXPECT_TRUE(has(f->message, "rank1 reports ncclRemoteError"));
}

}  // namespace
}  // namespace fabricwatch::nccl
