// The NCCL kind's payloads: every message round-trips; a payload cut anywhere, with a byte too
// many, or with a value the child would refuse, does not decode; text from the peer is bounded
// and made valid UTF-8.
#include "probes/kinds/nccl/nccl_messages.h"

#include <gtest/gtest.h>

#include <limits>

namespace fabricwatch::probes::nccl {
namespace {

std::string hexId(char c) { return std::string(256, c); }

NcclRunRequest request() {
  NcclRunRequest r;
  r.session = 0x0123456789abcdefULL;
  r.prober = "node-a";
  r.unique_id = "0123456789abcdef" + hexId('e').substr(16);
  r.operation = "send_recv";
  r.nranks = 2;
  r.rank = 1;
  r.device = 7;
  r.rotate_device = true;
  r.timeout_ms = 180000;
  r.warmup = 5;
  r.iterations = 20;
  r.sizes = {1 << 20, 256 << 20};
  return r;
}

// Every strict prefix of a payload, and the payload with one byte more, fail to decode.
template <typename Decode>
void rejectsCutsAndTrailingBytes(const std::string& payload, Decode decode) {
  for (size_t n = 0; n < payload.size(); ++n)
    EXPECT_FALSE(decode(std::string_view(payload).substr(0, n))) << "prefix of " << n << " bytes";
  EXPECT_FALSE(decode(payload + "x"));
}

TEST(NcclMessagesTest, RunRequestRoundTripsAndIsStrict) {
  NcclRunRequest r = request();
  std::string p = encodeNcclRunRequest(r);
  auto back = decodeNcclRunRequest(p);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->session, r.session);
  EXPECT_EQ(back->prober, "node-a");
  EXPECT_EQ(back->unique_id, r.unique_id);  // 128 bytes on the wire, hex again
  EXPECT_EQ(back->operation, "send_recv");
  EXPECT_EQ(back->rank, 1);
  EXPECT_EQ(back->device, 7);
  EXPECT_TRUE(back->rotate_device);
  EXPECT_EQ(back->timeout_ms, 180000u);
  EXPECT_EQ(back->iterations, 20u);
  EXPECT_EQ(back->sizes, r.sizes);
  rejectsCutsAndTrailingBytes(p, decodeNcclRunRequest);

  // Values the child would refuse are refused here, before a child is started for nothing.
  auto bad = [](auto mutate) {
    NcclRunRequest x = request();
    mutate(x);
    return decodeNcclRunRequest(encodeNcclRunRequest(x)).has_value();
  };
  EXPECT_FALSE(bad([](auto& x) { x.operation = "broadcast"; }));
  EXPECT_FALSE(bad([](auto& x) { x.rank = 0; }));  // the prober is rank 0
  EXPECT_FALSE(bad([](auto& x) { x.rank = 2; }));
  EXPECT_FALSE(bad([](auto& x) { x.device = 1024; }));
  EXPECT_FALSE(bad([](auto& x) { x.timeout_ms = 0; }));
  EXPECT_FALSE(bad([](auto& x) { x.iterations = 0; }));
  EXPECT_FALSE(bad([](auto& x) { x.iterations = 10001; }));
  EXPECT_FALSE(bad([](auto& x) { x.sizes = {}; }));
  EXPECT_FALSE(bad([](auto& x) { x.sizes = {2}; }));
  EXPECT_FALSE(bad([](auto& x) { x.sizes = {uint64_t{17} << 30}; }));
  EXPECT_TRUE(bad([](auto& x) { x.sizes = std::vector<uint64_t>(16, 4); }));
}

TEST(NcclMessagesTest, StatusReplyCarriesTheOtherSide) {
  NcclStatusReply r;
  r.session = 42;
  r.known = true;
  r.side.state = "unavailable";
  r.side.reason = "cudaGetDeviceCount: no CUDA-capable device is detected (cudaError 100)";
  r.side.nccl_version = "2.28.9";
  r.side.cuda_runtime_version = "13.0";
  r.side.gpus = 0;
  r.side.device = -1;
  r.side.id = "ec54db2734d0cd2f";
  r.side.inter_node_transport = "roce";
  r.side.gdr = "on";
  r.side.network = "IB";
  r.side.log_status = "ok";
  r.side.seconds = 1.5;
  r.side.results = {{268435456, 10982.1, 24.44, 24.44}};
  std::string p = encodeNcclStatusReply(r);
  auto back = decodeNcclStatusReply(p);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->known);
  EXPECT_EQ(back->side.state, "unavailable");
  EXPECT_EQ(back->side.reason, r.side.reason);
  EXPECT_EQ(back->side.gpus, 0);
  EXPECT_EQ(back->side.device, -1);
  EXPECT_EQ(back->side.inter_node_transport, "roce");
  EXPECT_DOUBLE_EQ(back->side.seconds, 1.5);
  ASSERT_EQ(back->side.results.size(), 1u);
  EXPECT_DOUBLE_EQ(back->side.results[0].busbw_gbps, 24.44);
  rejectsCutsAndTrailingBytes(p, decodeNcclStatusReply);

  NcclStatusReply unknown;
  unknown.session = 7;
  auto u = decodeNcclStatusReply(encodeNcclStatusReply(unknown));
  ASSERT_TRUE(u);
  EXPECT_FALSE(u->known);
}

TEST(NcclMessagesTest, TextFromThePeerIsBoundedAndValidUtf8) {
  NcclStatusReply r;
  r.known = true;
  r.side.state = "failed\xff";
  r.side.reason = std::string(5000, 'x') + "\n";
  auto back = decodeNcclStatusReply(encodeNcclStatusReply(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->side.state, "failed?");
  EXPECT_EQ(back->side.reason.size(), 1024u);

  // A number that is not a time or a bandwidth (NaN, negative) makes the reply malformed.
  r.side.reason.clear();
  r.side.seconds = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(decodeNcclStatusReply(encodeNcclStatusReply(r)));
  r.side.seconds = -1;
  EXPECT_FALSE(decodeNcclStatusReply(encodeNcclStatusReply(r)));
}

TEST(NcclMessagesTest, SmallMessagesRoundTrip) {
  auto run = decodeNcclRunReply(encodeNcclRunReply({9, "node-b"}));
  ASSERT_TRUE(run);
  EXPECT_EQ(run->session, 9u);
  EXPECT_EQ(run->node, "node-b");
  rejectsCutsAndTrailingBytes(encodeNcclRunReply({9, "node-b"}), decodeNcclRunReply);
  auto st = decodeNcclStatusRequest(encodeNcclStatusRequest({11}));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->session, 11u);
  rejectsCutsAndTrailingBytes(encodeNcclStatusRequest({11}), decodeNcclStatusRequest);
  auto c = decodeNcclCancelRequest(encodeNcclCancelRequest({12}));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->session, 12u);
  auto cr = decodeNcclCancelReply(encodeNcclCancelReply({12, true}));
  ASSERT_TRUE(cr);
  EXPECT_TRUE(cr->cancelled);
  rejectsCutsAndTrailingBytes(encodeNcclCancelReply({12, true}), decodeNcclCancelReply);
}

}  // namespace
}  // namespace fabricwatch::probes::nccl
