#pragma once
// Where tests find the source tree (fixtures) and the fabricwatch binary: CTest passes both in
// the environment (tests/CMakeLists.txt).

#include <cstdlib>
#include <string>

namespace fabricwatch::testing {

inline std::string sourceDir() {
  const char* d = std::getenv("FW_SOURCE_DIR");
  return d ? d : FW_DEFAULT_SOURCE_DIR;
}

inline std::string binaryPath() {
  const char* b = std::getenv("FW_BINARY");
  return b ? b : FW_DEFAULT_BINARY;
}

inline std::string fixture(const std::string& rel) {
  return sourceDir() + "/tests/fixtures/" + rel;
}

}  // namespace fabricwatch::testing
