#include "core/own_environment.h"

#include <stdlib.h>

#include <mutex>
#include <utility>
#include <vector>

namespace fabricwatch::core {
namespace {

std::mutex& ownMutex() {
  static std::mutex m;
  return m;
}

// NAME=VALUE as set; a handful, so a linear search is enough.
std::vector<std::pair<std::string, std::string>>& ownVariables() {
  static std::vector<std::pair<std::string, std::string>> vars;
  return vars;
}

}  // namespace

bool setOwnVariable(const std::string& name, const std::string& value) {
  std::lock_guard<std::mutex> lock(ownMutex());
  if (::getenv(name.c_str())) return false;
  if (::setenv(name.c_str(), value.c_str(), 0) != 0) return false;
  ownVariables().emplace_back(name, value);
  return true;
}

bool isOwnVariable(std::string_view name) {
  std::lock_guard<std::mutex> lock(ownMutex());
  for (const auto& [n, v] : ownVariables()) {
    if (n != name) continue;
    const char* now = ::getenv(n.c_str());
    return now && v == now;  // set over since (by the operator's tooling, a test): not ours
  }
  return false;
}

}  // namespace fabricwatch::core
