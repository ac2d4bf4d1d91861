#include "probes/mesh/frame.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "probes/mesh/messages.h"
#include "tests/support/with_openssl.h"

namespace fabricwatch::probes {
namespace {

const std::string kFrameSecret = "0123456789abcdef0123456789abcdef";

Frame sample() {
  Frame f;
  f.type = FrameType::kEchoRequest;
  f.timestamp_ms = 1700000000123;
  f.nonce = 0x1122334455667788ull;
  f.payload = encodeEchoRequest({7, "node-a"});
  return f;
}

// The codec's HMAC is libcrypto's, loaded as the mesh loads it.
class FrameTest : public testing::WithOpenSsl {};

TEST_F(FrameTest, RoundTrip) {
  std::string wire = encodeFrame(sample(), kFrameSecret);
  EXPECT_EQ(wire.size(), kHeaderSize + sample().payload.size() + kMacSize);
  DecodeResult r = decodeFrame(wire + "next", kFrameSecret);
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

TEST_F(FrameTest, EveryTamperedByteFailsAuthentication) {
  std::string wire = encodeFrame(sample(), kFrameSecret);
  // Bytes 4 (version) and 8..11 (length) are judged before the MAC; all others reach it.
  for (size_t i = 0; i < wire.size(); ++i) {
    std::string t = wire;
    t[i] = static_cast<char>(t[i] ^ 0x01);
    DecodeResult r = decodeFrame(t, kFrameSecret);
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

TEST_F(FrameTest, WrongSecretFails) {
  std::string wire = encodeFrame(sample(), kFrameSecret);
  EXPECT_EQ(decodeFrame(wire, "another-secret-of-some-length").status, DecodeStatus::kBadMac);
}

TEST_F(FrameTest, TruncatedFramesNeedMore) {
  std::string wire = encodeFrame(sample(), kFrameSecret);
  for (size_t n = 0; n < wire.size(); ++n)
    EXPECT_EQ(decodeFrame(wire.substr(0, n), kFrameSecret).status, DecodeStatus::kNeedMore) << n;
}

TEST_F(FrameTest, OversizedLengthIsRefusedFromTheHeaderAlone) {
  std::string wire = encodeFrame(sample(), kFrameSecret).substr(0, kHeaderSize);
  uint32_t big = static_cast<uint32_t>(kMaxPayload + 1);
  for (int i = 0; i < 4; ++i) wire[8 + i] = static_cast<char>(big >> (24 - 8 * i));
  EXPECT_EQ(decodeFrame(wire, kFrameSecret).status, DecodeStatus::kOversized);
  wire[8] = '\xff';
  EXPECT_EQ(decodeFrame(wire, kFrameSecret).status, DecodeStatus::kOversized);
}

TEST_F(FrameTest, WrongVersionAndGarbage) {
  std::string wire = encodeFrame(sample(), kFrameSecret);
  wire[4] = 2;
  EXPECT_EQ(decodeFrame(wire, kFrameSecret).status, DecodeStatus::kBadVersion);
  EXPECT_EQ(decodeFrame("GET / HTTP/1.1\r\n\r\n", kFrameSecret).status, DecodeStatus::kBadMagic);
  EXPECT_EQ(decodeFrame("G", kFrameSecret).status, DecodeStatus::kBadMagic);
  EXPECT_EQ(decodeFrame("FW", kFrameSecret).status, DecodeStatus::kNeedMore);
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

TEST(ReplayGuardTest, WhatItHasNoRoomToRememberIsRefusedNeverAcceptedBlind) {
  ReplayGuard g(30000, 4, 4);
  const uint64_t now = 1700000000000;
  for (uint64_t i = 0; i < 4; ++i) EXPECT_TRUE(g.accept(now + i, 100 + i, now + 10));
  EXPECT_EQ(g.check(now + 5, 200, now + 10), ReplayVerdict::kFull);
  EXPECT_EQ(g.check(now, 100, now + 10), ReplayVerdict::kReplay);
  EXPECT_EQ(g.size(), 4u);
  // Once those timestamps have left the window, their room is free again, and a frame from the
  // forgotten second stays refused even if the clock steps back.
  EXPECT_TRUE(g.accept(now + 40000, 300, now + 40000));
  EXPECT_EQ(g.size(), 1u);
  EXPECT_EQ(g.check(now + 1, 101, now + 20000), ReplayVerdict::kStale);
}

TEST(ReplayGuardTest, OneSendersShareIsBounded) {
  ReplayGuard g(30000, 64, 2);
  const uint64_t now = 1700000000000;
  EXPECT_TRUE(g.accept(now, 1, now, "10.0.0.1"));
  EXPECT_TRUE(g.accept(now, 2, now, "10.0.0.1"));
  EXPECT_EQ(g.check(now, 3, now, "10.0.0.1"), ReplayVerdict::kSenderFull);
  EXPECT_TRUE(g.accept(now, 3, now, "10.0.0.2"));
}

// Issue 13: a member stamped 65,536 valid frames 29 s ahead; they filled the window, and every
// genuine frame was refused as a replay for about 25 s. A flood stamped anywhere in the window
// must use up only its sender's share: others' frames are accepted, now and when the flood's
// timestamps come due.
TEST(ReplayGuardTest, AFutureStampedFloodDoesNotLockOthersOut) {
  ReplayGuard g;  // 30 s skew, 65,536 nonces
  const uint64_t now = 1700000000000;
  uint64_t flood = 0;
  for (uint64_t i = 0; i < 65536; ++i)
    flood += g.accept(now + 29000, 1000000 + i, now, "10.0.0.66");
  EXPECT_LT(flood, 65536u) << "one sender may not hold the whole window";
  for (uint64_t t = 0; t <= 31000; t += 500) {
    EXPECT_TRUE(g.accept(now + t, 7 + t, now + t, "10.0.0.2"))
        << "a genuine frame at +" << t << " ms";
  }
  // Even the flooding member gets room again once its timestamps have left the window.
  EXPECT_TRUE(g.accept(now + 60000, 3, now + 60000, "10.0.0.66"));
}

// Any sequence of timestamps within the window, from several senders, replays mixed in: a frame
// is never accepted twice while its timestamp is inside the window, and memory stays bounded.
TEST(ReplayGuardTest, NeverAcceptsAReplayAndStaysBoundedUnderAnySequence) {
  const size_t kMax = 512;
  ReplayGuard g(30000, kMax, kMax / 2);  // two busy senders can fill it
  std::mt19937_64 rng(42);
  uint64_t now = 1700000000000;
  std::map<std::pair<uint64_t, uint64_t>, int> accepted;  // (ts, nonce) -> times
  std::vector<std::pair<uint64_t, uint64_t>> sent;
  const char* senders[] = {"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.66"};
  for (int i = 0; i < 200000; ++i) {
    now += rng() % 5;                     // about 400 s in all: frames enter and leave the window
    if (rng() % 20000 == 0) now -= 5000;  // the clock steps back now and then
    uint64_t ts, nonce;
    if (!sent.empty() && rng() % 4 == 0) {
      std::tie(ts, nonce) = sent[rng() % sent.size()];  // a replay of something sent
    } else {
      ts = now - 30000 + rng() % 60001;
      nonce = rng() % 4096;  // nonces repeat across timestamps too
      sent.emplace_back(ts, nonce);
    }
    if (g.accept(ts, nonce, now, senders[rng() % 5])) {
      EXPECT_EQ(++accepted[std::make_pair(ts, nonce)], 1)
          << "replay of ts " << ts << " nonce " << nonce;
    }
    ASSERT_LE(g.size(), kMax);
  }
  EXPECT_GT(accepted.size(), 2000u) << "the guard must still accept fresh frames";
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
}  // namespace fabricwatch::probes
