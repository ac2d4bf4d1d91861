#pragma once
// Tests that need what a machine may lack (libnccl, network namespaces, a libfabric provider, a
// tool such as promtool or chromium, a locale) skip where it is missing, saying why. Where the
// environment variable FW_REQUIRE names the need (a comma-separated list, or "all"), the same
// test fails instead: CI sets FW_REQUIRE=nccl,netns,fabric,tools,locale (.ci/run), so a CI
// machine that lacked one of them could not pass without running the tests that need it.
//
//   if (!haveNccl()) FW_UNAVAILABLE("nccl") << "libnccl.so.2 is not installed here";

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace fabricwatch::testing {

inline bool required(std::string_view need) {
  const char* env = std::getenv("FW_REQUIRE");
  if (!env) return false;
  std::string_view list(env);
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    if (item == need || item == "all") return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

inline std::string unavailableNote(std::string_view need) {
  return required(need) ? "FW_REQUIRE names \"" + std::string(need) + "\", but it is missing: "
                        : "";
}

}  // namespace fabricwatch::testing

// Skips the test (or fails it, when FW_REQUIRE names `need`) with the message streamed after it.
// As GTEST_SKIP(), it returns from the test body.
#define FW_UNAVAILABLE(need)                                                                   \
  return ::testing::internal::AssertHelper(                                                    \
             ::fabricwatch::testing::required(need) ? ::testing::TestPartResult::kFatalFailure \
                                                    : ::testing::TestPartResult::kSkip,        \
             __FILE__, __LINE__, ::fabricwatch::testing::unavailableNote(need).c_str()) =      \
             ::testing::Message()
