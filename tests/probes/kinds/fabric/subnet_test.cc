// Subnets of rail entries (subnet.h): what parses, what is refused and why, containment and
// overlap, IPv4 and IPv6.
#include "probes/kinds/fabric/subnet.h"

#include <gtest/gtest.h>

namespace fabricwatch::probes::fabric {
namespace {

Subnet net(const std::string& text) {
  std::string why;
  auto s = parseSubnet(text, &why);
  EXPECT_TRUE(s) << text << ": " << why;
  return s.value_or(Subnet{});
}
IpAddress ip(const std::string& text) {
  auto a = parseIpAddress(text);
  EXPECT_TRUE(a) << text;
  return a.value_or(IpAddress{});
}
std::string why(const std::string& text) {
  std::string w;
  EXPECT_FALSE(parseSubnet(text, &w)) << text;
  return w;
}

TEST(SubnetTest, ParsesIpv4AndIpv6NetworksAndTellsWhatTheyHold) {
  Subnet a = net("10.1.3.0/24");
  EXPECT_FALSE(a.base.v6);
  EXPECT_EQ(a.prefix, 24);
  EXPECT_EQ(formatSubnet(a), "10.1.3.0/24");
  EXPECT_TRUE(a.contains(ip("10.1.3.5")));
  EXPECT_TRUE(a.contains(ip("10.1.3.255")));
  EXPECT_FALSE(a.contains(ip("10.1.4.5")));
  EXPECT_FALSE(a.contains(ip("::ffff:10.1.3.5")));  // another family
  Subnet odd = net("10.1.2.128/25");
  EXPECT_TRUE(odd.contains(ip("10.1.2.200")));
  EXPECT_FALSE(odd.contains(ip("10.1.2.100")));
  EXPECT_TRUE(net("10.1.3.7/32").contains(ip("10.1.3.7")));
  EXPECT_FALSE(net("10.1.3.7/32").contains(ip("10.1.3.6")));
  Subnet v6 = net("fd00:1:3::/64");
  EXPECT_TRUE(v6.base.v6);
  EXPECT_EQ(formatSubnet(v6), "fd00:1:3::/64");
  EXPECT_TRUE(v6.contains(ip("fd00:1:3::5")));
  EXPECT_TRUE(v6.contains(ip("FD00:1:3:0:ffff::1")));
  EXPECT_FALSE(v6.contains(ip("fd00:1:4::5")));
  EXPECT_FALSE(v6.contains(ip("10.1.3.5")));
  EXPECT_TRUE(net("fd00::/8").contains(ip("fdff::1")));
  EXPECT_TRUE(net("128.0.0.0/1").contains(ip("200.1.1.1")));
}

TEST(SubnetTest, OverlapIsOneHoldingTheOther) {
  EXPECT_TRUE(net("10.1.0.0/16").overlaps(net("10.1.3.0/24")));
  EXPECT_TRUE(net("10.1.3.0/24").overlaps(net("10.1.0.0/16")));
  EXPECT_TRUE(net("10.1.3.0/24").overlaps(net("10.1.3.0/24")));
  EXPECT_FALSE(net("10.1.3.0/24").overlaps(net("10.1.4.0/24")));
  EXPECT_FALSE(net("10.1.2.0/25").overlaps(net("10.1.2.128/25")));
  EXPECT_FALSE(net("10.0.0.0/8").overlaps(net("fd00::/8")));
  EXPECT_TRUE(net("fd00:1::/32").overlaps(net("fd00:1:3::/64")));
}

TEST(SubnetTest, BadPrefixesAndHostileTextAreRefusedWithTheReason) {
  EXPECT_EQ(why("10.1.3.0"),
            "subnet \"10.1.3.0\" needs a prefix length: an address and /bits, e.g. "
            "\"10.1.3.0/24\" or \"fd00:1:3::/64\"");
  EXPECT_EQ(why("10.1.3.5/24"),
            "subnet \"10.1.3.5/24\" has bits set past its /24: the network is 10.1.3.0/24");
  EXPECT_EQ(why("fd00:1:3::5/64"),
            "subnet \"fd00:1:3::5/64\" has bits set past its /64: the network is fd00:1:3::/64");
  EXPECT_EQ(why("0.0.0.0/0"),
            "subnet \"0.0.0.0/0\": prefix /0 is not 1-32 (/0 would put every address on this "
            "rail)");
  EXPECT_EQ(why("10.0.0.0/33"), "subnet \"10.0.0.0/33\": prefix /33 is not 1-32");
  EXPECT_EQ(why("fd00::/129"), "subnet \"fd00::/129\": prefix /129 is not 1-128");
  EXPECT_EQ(why("10.0.0.0/"), "subnet \"10.0.0.0/\" has no prefix length 1-32 after the /");
  for (const char* bad : {"10.0.0.0/024", "10.0.0.0/+8", "10.0.0.0/-8", "10.0.0.0/8/8",
                          "10.0.0.0/ 8", "10.0.0.0/99999999999999999999", "fd00::/0x40"})
    EXPECT_NE(why(bad).find("no prefix length"), std::string::npos) << bad;
  for (const char* bad :
       {"/24", "10.1.3/24", "10.1.3.0.0/24", "010.1.3.0/24", "10.1.3.256/24", " 10.1.3.0/24",
        "fd00::1%eth1/64", "fd00:::/64", "host.example/24", "1e100/8"})
    EXPECT_NE(why(bad).find("does not start with a numeric IPv4 or IPv6 address"),
              std::string::npos)
        << bad;
  // A NUL would end the address for inet_pton; the message escapes what it shows.
  std::string nul("10.1.3.0\0x/24", 13);
  EXPECT_EQ(why(nul),
            "subnet \"10.1.3.0\\x00x/24\" does not start with a numeric IPv4 or IPv6 "
            "address");
  EXPECT_EQ(why("10.1.3.0\n/24").substr(0, 20), "subnet \"10.1.3.0\\n/2");
  EXPECT_LT(why(std::string(5000, '1') + "/24").size(), 200u);
  EXPECT_FALSE(parseIpAddress(""));
  EXPECT_FALSE(parseIpAddress("eth1"));
  EXPECT_FALSE(parseIpAddress(std::string(46, '1')));
}

}  // namespace
}  // namespace fabricwatch::probes::fabric
