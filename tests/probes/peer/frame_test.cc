#include "probes/peer/frame.h"

#include <gtest/gtest.h>

#include "probes/peer/messages.h"

namespace fabricwatch::probes::peer {
namespace {

const std::string kSecret = "0123456789abcdef0123456789abcdef";

Frame sample() {
  Frame f;
  f.type = FrameType::kEchoRequest;
  f.timestamp_ms = 1700000000123;
  f.nonce = 0x1122334455667788ull;
  f.payload = encodeEchoRequest({7, "node-a"});
  return f;
}

TEST(FrameTest, RoundTrip) {
  std::string wire = encodeFrame(sample(), kSecret);
  EXPECT_EQ(wire.size(), kHeaderSize + sample().payload.size() + kMacSize);
  DecodeResult r = decodeFrame(wire + "next", kSecret);
  ASSERT_EQ(r.status, DecodeStatus::kOk);
  EXPECT_EQ(r.consumed, wire.size());
  EXPECT_EQ(r.frame.type, FrameType::kEchoRequest);
  EXPECT_EQ(r.frame.timestamp_ms, 1700000000123u);
  EXPECT_EQ(r.frame.nonce, 0x1122334455667788ull);
  auto req = decodeEchoRequest(r.frame.payload);
  ASSERT_TRUE(req);
  EXPECT_EQ(req->seq, 7u);
  EXPECT_EQ(req->sender, "node-a");
}

TEST(FrameTest, EveryTamperedByteFailsAuthentication) {
  std::string wire = encodeFrame(sample(), kSecret);
  // Bytes 4 (version) and 8..11 (length) are judged before the MAC; all others reach it.
  for (size_t i = 0; i < wire.size(); ++i) {
    std::string t = wire;
    t[i] = static_cast<char>(t[i] ^ 0x01);
    DecodeResult r = decodeFrame(t, kSecret);
    if (i < 4) {
      EXPECT_EQ(r.status, DecodeStatus::kBadMagic) << i;
    } else if (i == 4) {
      EXPECT_EQ(r.status, DecodeStatus::kBadVersion) << i;
    } else if (i >= 8 && i < 12) {
      EXPECT_NE(r.status, DecodeStatus::kOk) << i;
    } else {
      EXPECT_EQ(r.status, DecodeStatus::kBadMac) << i;
    }
  }
}

TEST(FrameTest, WrongSecretFails) {
  std::string wire = encodeFrame(sample(), kSecret);
  EXPECT_EQ(decodeFrame(wire, "another-secret-of-some-length").status, DecodeStatus::kBadMac);
}

TEST(FrameTest, TruncatedFramesNeedMore) {
  std::string wire = encodeFrame(sample(), kSecret);
  for (size_t n = 0; n < wire.size(); ++n)
    EXPECT_EQ(decodeFrame(wire.substr(0, n), kSecret).status, DecodeStatus::kNeedMore) << n;
}

TEST(FrameTest, OversizedLengthIsRefusedFromTheHeaderAlone) {
  std::string wire = encodeFrame(sample(), kSecret).substr(0, kHeaderSize);
  uint32_t big = static_cast<uint32_t>(kMaxPayload + 1);
  for (int i = 0; i < 4; ++i) wire[8 + i] = static_cast<char>(big >> (24 - 8 * i));
  EXPECT_EQ(decodeFrame(wire, kSecret).status, DecodeStatus::kOversized);
  wire[8] = '\xff';
  EXPECT_EQ(decodeFrame(wire, kSecret).status, DecodeStatus::kOversized);
}

TEST(FrameTest, WrongVersionAndGarbage) {
  std::string wire = encodeFrame(sample(), kSecret);
  wire[4] = 2;
  EXPECT_EQ(decodeFrame(wire, kSecret).status, DecodeStatus::kBadVersion);
  EXPECT_EQ(decodeFrame("GET / HTTP/1.1\r\n\r\n", kSecret).status, DecodeStatus::kBadMagic);
  EXPECT_EQ(decodeFrame("G", kSecret).status, DecodeStatus::kBadMagic);
  EXPECT_EQ(decodeFrame("FW", kSecret).status, DecodeStatus::kNeedMore);
}

TEST(ReplayGuardTest, RefusesRepeatsAndStaleOrFutureTimestamps) {
  ReplayGuard g(30000);
  const uint64_t now = 1700000000000;
  EXPECT_TRUE(g.accept(now, 1, now));
  EXPECT_FALSE(g.accept(now, 1, now));          // same nonce again
  EXPECT_FALSE(g.accept(now, 1, now + 10000));  // ... later, still inside the window
  EXPECT_TRUE(g.accept(now, 2, now));
  EXPECT_FALSE(g.accept(now - 30001, 3, now));  // too old
  EXPECT_FALSE(g.accept(now + 30001, 4, now));  // from the future
  EXPECT_TRUE(g.accept(now - 29000, 5, now));
}

TEST(ReplayGuardTest, BoundedMemoryNeverReopensTheWindow) {
  ReplayGuard g(30000, 4);
  const uint64_t now = 1700000000000;
  for (uint64_t i = 0; i < 4; ++i) EXPECT_TRUE(g.accept(now + i, 100 + i, now + 10));
  // A fifth nonce evicts the oldest; replaying the evicted frame must still fail.
  EXPECT_TRUE(g.accept(now + 5, 200, now + 10));
  EXPECT_FALSE(g.accept(now, 100, now + 10));
  EXPECT_FALSE(g.accept(now + 1, 101, now + 10));
}

TEST(MessagesTest, EchoReplyRoundTripAndRejectsTrailingBytes) {
  EchoReply r{3, "node-b", "rack-7", 0x1234};
  std::string p = encodeEchoReply(r);
  auto d = decodeEchoReply(p);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->seq, 3u);
  EXPECT_EQ(d->node, "node-b");
  EXPECT_EQ(d->group, "rack-7");
  EXPECT_EQ(d->instance, 0x1234u);
  EXPECT_FALSE(decodeEchoReply(p + "x"));
  EXPECT_FALSE(decodeEchoReply(p.substr(0, p.size() - 1)));
  EXPECT_FALSE(decodeEchoRequest("\x01"));
  // A reply from before instance IDs still decodes, with an unknown instance.
  auto old = decodeEchoReply(p.substr(0, p.size() - 8));
  ASSERT_TRUE(old);
  EXPECT_EQ(old->instance, 0u);
}

TEST(MessagesTest, DeclinedCarriesItsReason) {
  EXPECT_EQ(decodeDeclined(encodeDeclined("busy")), "busy");
  EXPECT_FALSE(decodeDeclined(encodeDeclined("busy") + "x"));
  EXPECT_EQ(decodeDeclined(encodeDeclined(std::string(1000, 'r')))->size(), 253u);
}

}  // namespace
}  // namespace fabricwatch::probes::peer
