#pragma once
// Kubernetes resource quantities for quantity("5Gi"): a signed decimal number followed by a binary
// suffix (Ki Mi Gi Ti Pi Ei), a decimal suffix (n u m k M G T P E) or a decimal exponent (1e3).

#include <string>
#include <string_view>
#include <variant>

namespace fabricwatch::policy::expr {

// The value in base units: an int when it is a whole number within int64, else a double
// ("500m" -> 0.5). A std::string holds the error message on bad input.
std::variant<int64_t, double, std::string> parseQuantity(std::string_view text);

}  // namespace fabricwatch::policy::expr
