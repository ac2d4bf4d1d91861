#pragma once
// Version values for semver("2.34"): glibc, NCCL ("2.21.5+cuda12.4"), libfabric ("1.22.0amzn1.0")
// and firmware ("28.39.1002") versions. Leading dotted numeric components compare numerically
// (missing ones count as 0, so "2.34" == "2.34.0" < "2.34.1"), then the remaining text lexically.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::policy::expr {

struct Semver {
  std::string text;              // as written
  std::vector<int64_t> numbers;  // leading numeric components
  std::string rest;              // what follows them ("+cuda12.4", "amzn1.0")
};

// nullopt when the text does not start with a number (an optional leading 'v' is skipped).
std::optional<Semver> parseSemver(std::string_view text);
int compareSemver(const Semver& a, const Semver& b);

}  // namespace fabricwatch::policy::expr
