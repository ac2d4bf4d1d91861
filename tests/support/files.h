#pragma once
// A whole file's bytes, for tests that compare against golden files and fixtures ("" when it
// cannot be read: the comparison then fails and says what was expected).

#include <fstream>
#include <sstream>
#include <string>

namespace fabricwatch::testing {

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace fabricwatch::testing
