// The verdict on real NCCL logs as people paste them: every excerpt in
// tests/fixtures/nccl_logs/real/ comes from a public issue thread (NAME.expected.json names it) and
// carries the verdict an NCCL engineer gives, with the reason. A log is judged right when the
// verdict's fields match, every expected problem is there (its severity, a citation of its line,
// the words it must say and none it must not) and no other critical or warning problem is. The
// test prints how many are judged right, so that
//   build/tests/nccl/nccl_test --gtest_filter='NcclRealLogs*'
// is the count (docs/nccl.md, "The corpus of real logs").
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/value_format.h"
#include "nccl/log_parse.h"
#include "nccl/log_verdict.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace fabricwatch::nccl {
namespace {

using nlohmann::json;
using testing::readFile;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool contains(const std::string& hay, const std::string& needle) {
  return lower(hay).find(lower(needle)) != std::string::npos;
}

// Whether the evidence cites line n ("line 7: ..." or "...; line 7: ...").
bool citesLine(const std::string& evidence, int64_t n) {
  std::string key = "line " + std::to_string(n);
  for (size_t p = evidence.find(key); p != std::string::npos; p = evidence.find(key, p + 1)) {
    size_t end = p + key.size();
    bool starts = p == 0 || evidence[p - 1] == ' ';
    bool ends = end == evidence.size() || !std::isdigit(static_cast<unsigned char>(evidence[end]));
    if (starts && ends) return true;
  }
  return false;
}

bool matches(const json& want, const json& got) {
  if (got.value("severity", "") != want["severity"].get<std::string>()) return false;
  std::string message = got.value("message", ""), evidence = got.value("evidence", "");
  if (!citesLine(evidence, want["line"].get<int64_t>())) return false;
  for (const auto& w : want["says"])
    if (!contains(message + " " + evidence, w.get<std::string>())) return false;
  if (want.contains("not_says"))
    for (const auto& w : want["not_says"])
      if (contains(message, w.get<std::string>())) return false;
  return true;
}

// Empty when the verdict is the expected one, else what differs.
std::string misjudged(const json& expected, const json& verdict) {
  std::string why;
  for (const auto& [key, want] : expected["verdict"].items()) {
    std::string got = verdict.contains(key) ? verdict[key].get<std::string>() : "(not reported)";
    if (got != want.get<std::string>())
      why += "  " + key + ": " + got + ", expected " + want.get<std::string>() + "\n";
  }
  std::vector<bool> used(verdict["problems"].size(), false);
  for (const auto& want : expected["problems"]) {
    bool found = false;
    for (size_t i = 0; i < verdict["problems"].size() && !found; ++i) {
      if (!used[i] && matches(want, verdict["problems"][i])) found = used[i] = true;
    }
    if (!found) why += "  missing: " + want.dump() + "\n";
  }
  for (size_t i = 0; i < verdict["problems"].size(); ++i) {
    const auto& p = verdict["problems"][i];
    std::string sev = p.value("severity", "");
    if (!used[i] && (sev == "critical" || sev == "warning"))
      why += "  unexpected " + sev + ": " + p.value("message", "").substr(0, 160) + " [" +
             p.value("evidence", "").substr(0, 120) + "]\n";
  }
  return why;
}

TEST(NcclRealLogsTest, EveryRealLogIsJudgedAsAnNcclEngineerWould) {
  std::filesystem::path dir = testing::fixture("nccl_logs/real");
  std::vector<std::filesystem::path> logs;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".log") logs.push_back(e.path());
  std::sort(logs.begin(), logs.end());
  int right = 0;
  std::string report;
  for (const auto& log : logs) {
    std::filesystem::path exp = log.parent_path() / (log.stem().string() + ".expected.json");
    ASSERT_TRUE(std::filesystem::exists(exp)) << exp;
    json expected = json::parse(readFile(exp));
    ASSERT_TRUE(expected.contains("source") && expected.contains("reason")) << exp;
    LogSummary s = parseNcclLog(readFile(log));
    json doc = json::parse(core::toJson(summaryValue(s, judge(s))));
    std::string why = misjudged(expected, doc["verdict"]);
    if (why.empty()) {
      ++right;
    } else {
      report += log.stem().string() + " (" + expected["source"].get<std::string>() + "):\n" + why;
    }
  }
  std::cout << "real NCCL logs judged right: " << right << " of " << logs.size() << "\n" << report;
  EXPECT_GE(logs.size(), 30u);
  EXPECT_EQ(right, static_cast<int>(logs.size())) << report;
}

}  // namespace
}  // namespace fabricwatch::nccl
