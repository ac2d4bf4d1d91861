#include "probes/kinds/fabric/subnet.h"

#include <arpa/inet.h>

#include <algorithm>

#include "core/utf8.h"

namespace fabricwatch::probes::fabric {
namespace {

// Whether the first `bits` bits of a and b agree.
bool samePrefix(const std::array<uint8_t, 16>& a, const std::array<uint8_t, 16>& b, int bits) {
  int whole = bits / 8;
  for (int i = 0; i < whole; ++i)
    if (a[i] != b[i]) return false;
  int rest = bits % 8;
  if (rest == 0) return true;
  auto mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (a[whole] & mask) == (b[whole] & mask);
}

std::array<uint8_t, 16> masked(const std::array<uint8_t, 16>& a, int bits, int width) {
  std::array<uint8_t, 16> out{};
  for (int i = 0; i < width / 8; ++i) {
    int keep = std::clamp(bits - 8 * i, 0, 8);
    out[i] = keep == 0 ? 0 : static_cast<uint8_t>(a[i] & (0xff << (8 - keep)));
  }
  return out;
}

}  // namespace

bool Subnet::contains(const IpAddress& a) const {
  return a.v6 == base.v6 && samePrefix(a.bytes, base.bytes, prefix);
}

bool Subnet::overlaps(const Subnet& o) const {
  return base.v6 == o.base.v6 && samePrefix(base.bytes, o.base.bytes, std::min(prefix, o.prefix));
}

std::optional<IpAddress> parseIpAddress(std::string_view text) {
  // inet_pton reads a C string and takes more than it should be given (a NUL ends it early);
  // only the characters of a numeric address get that far.
  if (text.empty() || text.size() > 45 ||
      text.find_first_not_of("0123456789abcdefABCDEF.:") != std::string_view::npos)
    return std::nullopt;
  std::string s(text);
  IpAddress a;
  if (s.find(':') == std::string::npos) {
    if (::inet_pton(AF_INET, s.c_str(), a.bytes.data()) != 1) return std::nullopt;
    return a;
  }
  a.v6 = true;
  if (::inet_pton(AF_INET6, s.c_str(), a.bytes.data()) != 1) return std::nullopt;
  return a;
}

std::optional<Subnet> parseSubnet(std::string_view text, std::string* why) {
  auto fail = [&](std::string msg) -> std::optional<Subnet> {
    if (why) *why = std::move(msg);
    return std::nullopt;
  };
  std::string shown = core::quoteForDisplay(text, 64);
  auto slash = text.find('/');
  if (slash == std::string_view::npos)
    return fail("subnet " + shown +
                " needs a prefix length: an address and /bits, e.g. \"10.1.3.0/24\" or "
                "\"fd00:1:3::/64\"");
  auto addr = parseIpAddress(text.substr(0, slash));
  if (!addr) return fail("subnet " + shown + " does not start with a numeric IPv4 or IPv6 address");
  std::string_view bits = text.substr(slash + 1);
  int width = addr->v6 ? 128 : 32;
  if (bits.empty() || bits.size() > 3 || bits.find_first_not_of("0123456789") != bits.npos ||
      (bits.size() > 1 && bits[0] == '0'))
    return fail("subnet " + shown + " has no prefix length 1-" + std::to_string(width) +
                " after the /");
  int prefix = std::stoi(std::string(bits));
  if (prefix < 1 || prefix > width)
    return fail("subnet " + shown + ": prefix /" + std::to_string(prefix) + " is not 1-" +
                std::to_string(width) +
                (prefix == 0 ? " (/0 would put every address on this rail)" : ""));
  Subnet s{*addr, prefix};
  s.base.bytes = masked(addr->bytes, prefix, width);
  if (s.base != *addr)
    return fail("subnet " + shown + " has bits set past its /" + std::to_string(prefix) +
                ": the network is " + formatSubnet(s));
  return s;
}

std::string formatIpAddress(const IpAddress& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (!::inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.bytes.data(), buf, sizeof(buf))) return "";
  return buf;
}

std::string formatSubnet(const Subnet& s) {
  return formatIpAddress(s.base) + "/" + std::to_string(s.prefix);
}

}  // namespace fabricwatch::probes::fabric
