// The fabric kind's channel payloads: round trips, and every truncation or extension of a
// valid payload is refused (a peer's bytes are hostile input).
#include "probes/kinds/fabric/fabric_wire.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace fabricwatch::probes::fabric {
namespace {

// A hello reply of rail 0 of a one-rail node.
FabricHelloReply helloReply(std::string provider, std::string fabric, uint64_t epoch,
                            std::string name) {
  FabricHelloReply r;
  r.provider = std::move(provider);
  r.fabric = std::move(fabric);
  r.epoch = epoch;
  r.name = std::move(name);
  return r;
}

template <typename Decode>
void expectStrict(const std::string& good, Decode decode) {
  ASSERT_TRUE(decode(good));
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(decode(good.substr(0, n))) << n;
  EXPECT_FALSE(decode(good + "x"));
}

// As expectStrict, but a payload cut where the rail fields begin is what a node of before rails
// sends: it decodes, as rail 0.
template <typename Decode>
void expectStrictBut(const std::string& good, size_t legacy, Decode decode) {
  ASSERT_TRUE(decode(good));
  for (size_t n = 0; n < good.size(); ++n) {
    if (n != legacy) {
      EXPECT_FALSE(decode(good.substr(0, n))) << n;
    }
  }
  auto old = decode(good.substr(0, legacy));
  ASSERT_TRUE(old);
  EXPECT_EQ(old->rail, 0u);
  EXPECT_FALSE(decode(good + "x"));
}

TEST(FabricWireTest, RailsTravelAndOldPayloadsMeanRailZero) {
  std::string name("\x02\x00\x9c\x41", 4);
  FabricHelloReply reply{"tcp;ofi_rxm", "10.0.0.0/24", 3, name, 5, 0b101111, "eth5"};
  auto enc = encodeFabricHelloReply(reply);
  auto dec = decodeFabricHelloReply(enc);
  ASSERT_TRUE(dec);
  EXPECT_EQ(dec->rail, 5u);
  EXPECT_EQ(dec->rails, 0b101111u);
  EXPECT_EQ(dec->domain, "eth5");
  size_t legacy = encodeFabricHelloReply(reply).size() - 4 - 8 - 2 - 4;
  expectStrictBut(enc, legacy, decodeFabricHelloReply);
  EXPECT_EQ(decodeFabricHelloReply(enc.substr(0, legacy))->rails, 1u);
  auto hello = encodeFabricHello({"efa", 7});
  EXPECT_EQ(decodeFabricHello(hello)->rail, 7u);
  expectStrictBut(hello, hello.size() - 4, decodeFabricHello);
  FabricSessionRequest r;
  r.spec = {1, fabric::SessionKind::kLatency, 64, 10, 1, 100};
  r.provider = "efa";
  r.name = "n";
  r.rail = 31;
  auto req = encodeFabricSessionRequest(r);
  EXPECT_EQ(decodeFabricSessionRequest(req)->rail, 31u);
  expectStrictBut(req, req.size() - 4, decodeFabricSessionRequest);
}

TEST(FabricWireTest, HelloRoundTrips) {
  std::string name("\x02\x00\x9c\x41\x7f\x00\x00\x01", 8);  // binary, with NULs
  auto enc = encodeFabricHelloReply(helloReply("tcp;ofi_rxm", "127.0.0.1/32", 7, name));
  auto dec = decodeFabricHelloReply(enc);
  ASSERT_TRUE(dec);
  EXPECT_EQ(dec->provider, "tcp;ofi_rxm");
  EXPECT_EQ(dec->fabric, "127.0.0.1/32");
  EXPECT_EQ(dec->epoch, 7u);
  EXPECT_EQ(dec->name, name);
  auto legacy =
      encodeFabricHelloReply(helloReply("tcp;ofi_rxm", "127.0.0.1/32", 7, name)).size() - 14;
  expectStrictBut(enc, legacy, decodeFabricHelloReply);
  expectStrictBut(encodeFabricHello({"efa"}), 5, decodeFabricHello);
  EXPECT_EQ(decodeFabricHello(encodeFabricHello({"efa"}))->provider, "efa");
  // An empty endpoint name is no address.
  EXPECT_FALSE(decodeFabricHelloReply(encodeFabricHelloReply(helloReply("tcp", "f", 1, ""))));
}

TEST(FabricWireTest, SessionRoundTrips) {
  FabricSessionRequest r;
  r.spec = {0x0123456789abcdefull, fabric::SessionKind::kBandwidth, 1 << 20, 32, 16, 1500};
  r.provider = "efa";
  r.name = std::string(32, '\xee');
  auto enc = encodeFabricSessionRequest(r);
  auto dec = decodeFabricSessionRequest(enc);
  ASSERT_TRUE(dec);
  EXPECT_EQ(dec->spec.id, r.spec.id);
  EXPECT_EQ(dec->spec.kind, fabric::SessionKind::kBandwidth);
  EXPECT_EQ(dec->spec.size, 1u << 20);
  EXPECT_EQ(dec->spec.count, 32u);
  EXPECT_EQ(dec->spec.window, 16u);
  EXPECT_EQ(dec->spec.timeout_ms, 1500u);
  EXPECT_EQ(dec->provider, "efa");
  EXPECT_EQ(dec->name, r.name);
  expectStrictBut(enc, enc.size() - 4, decodeFabricSessionRequest);
  expectStrict(encodeFabricSessionReply({42}), decodeFabricSessionReply);
  EXPECT_EQ(decodeFabricSessionReply(encodeFabricSessionReply({42}))->epoch, 42u);
}

TEST(FabricWireTest, ResponderChecksTheSpecItIsSent) {
  using fabric::checkSpec;
  using fabric::SessionKind;
  fabric::SessionSpec ok{1, SessionKind::kLatency, 64, 100, 1, 1000};
  EXPECT_FALSE(checkSpec(ok, 1 << 30));
  auto bad = ok;
  bad.size = 8;  // no room for the header
  EXPECT_TRUE(checkSpec(bad, 1 << 30));
  bad = ok;
  bad.size = 4096;
  EXPECT_TRUE(checkSpec(bad, 1024));  // over the provider's max_msg_size
  bad = ok;
  bad.kind = static_cast<SessionKind>(9);
  EXPECT_TRUE(checkSpec(bad, 1 << 30));
  bad = ok;
  bad.timeout_ms = 0;
  EXPECT_TRUE(checkSpec(bad, 1 << 30));
  fabric::SessionSpec huge{1, SessionKind::kBandwidth, 64 << 20, 100000, 256, 1000};
  EXPECT_EQ(
      *checkSpec(huge, SIZE_MAX),
      "session of " + std::to_string(uint64_t{64 << 20} * 100000 * 256) + " bytes over 4 GiB");
}

}  // namespace
}  // namespace fabricwatch::probes::fabric
