// core/host_port: splitting HOST:PORT, numeric addresses, and what a peer's endpoint may be
// (the one rule that probe.peers, the peers file and the mesh share).
#include "core/host_port.h"

#include <gtest/gtest.h>

#include <string>

namespace fabricwatch::core {
namespace {

using namespace std::string_literals;

TEST(HostPortTest, SplitsHostsPortsAndBracketedAddresses) {
  auto v4 = splitHostPort("10.0.0.1:19737");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->host, "10.0.0.1");
  EXPECT_EQ(v4->port, 19737);
  auto v6 = splitHostPort("[fd00::1]:80");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "fd00::1");
  EXPECT_EQ(joinHostPort(v6->host, v6->port), "[fd00::1]:80");
  EXPECT_EQ(splitHostPort(":80")->host, "");
  for (const char* bad : {"fd00::1:80", "node", "node:", "node:65536", "node:999999999999"})
    EXPECT_FALSE(splitHostPort(bad)) << bad;
}

// inet_pton reads a C string: without the check, "10.0.0.1\0x" was an IP literal, so the mesh
// took the name for an address and never resolved it.
TEST(HostPortTest, AHostWithANulIsNoIpLiteral) {
  EXPECT_TRUE(isIpLiteral("10.0.0.1"));
  EXPECT_TRUE(isIpLiteral("::1"));
  EXPECT_FALSE(isIpLiteral("10.0.0.1\0x"s));
  EXPECT_FALSE(isIpLiteral("::1\0"s));
  EXPECT_FALSE(isIpLiteral("node-1"));
}

TEST(HostPortTest, APeerEndpointHasAHostToReachAndAPortAbove0) {
  for (const char* ok :
       {"10.0.0.1:1", "[fe80::1]:65535", "node_1.rack-2.example.:19737", "i-bp1abcdefghij:19737"})
    EXPECT_TRUE(isPeerEndpoint(ok)) << ok;
  for (const std::string& bad : {"10.0.0.1:0"s, "[]:80"s, ":80"s, "[node-1]:80"s, "[1.2.3.4]:80"s,
                                 "a b:80"s, "-node:80"s, "n\x01-de:80"s, "h\xc3\xa9:80"s,
                                 "10.0.0.1\0x:80"s, "[::1\0x]:80"s, std::string(254, 'a') + ":80"})
    EXPECT_FALSE(isPeerEndpoint(bad)) << bad;
}

}  // namespace
}  // namespace fabricwatch::core
