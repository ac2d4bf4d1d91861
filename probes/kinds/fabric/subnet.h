#pragma once
// IP networks as a rail's configuration names them ("subnet:10.1.3.0/24", "subnet:fd00:3::/64"):
// a RoCE NIC or a socket provider's interface is on the rail whose subnet holds its address.
// Pure functions: text in, a network or the reason it is none out.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabricwatch::probes::fabric {

struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4: the first 4
  bool operator==(const IpAddress&) const = default;
};

struct Subnet {
  IpAddress base;  // host bits zero
  int prefix = 0;  // 1-32 (IPv4), 1-128 (IPv6)
  bool contains(const IpAddress& a) const;
  // Whether some address lies in both (one holds the other: networks are aligned blocks).
  bool overlaps(const Subnet& o) const;
  bool operator==(const Subnet&) const = default;
};

// A numeric IPv4 or IPv6 address ("10.1.3.5", "fd00::5"); nullopt for anything else (a name, a
// scope "%eth1", a NUL inside, leading zeros in an IPv4 octet).
std::optional<IpAddress> parseIpAddress(std::string_view text);

// "10.1.3.0/24", "fd00:1:3::/64": the prefix is required (no /0), and bits past it must be zero
// (a NIC's own address "10.1.3.5/24" is refused with the network it belongs to). nullopt with
// `why` otherwise.
std::optional<Subnet> parseSubnet(std::string_view text, std::string* why);

std::string formatIpAddress(const IpAddress& a);
std::string formatSubnet(const Subnet& s);

}  // namespace fabricwatch::probes::fabric
