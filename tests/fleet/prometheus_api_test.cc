// fleet/prometheus_api: Prometheus's answers are read as hostile JSON.
#include "fleet/prometheus_api.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/utf8.h"

namespace fabricwatch::fleet {
namespace {

TEST(PrometheusApiTest, AVectorAnswerGivesItsSamples) {
  auto r = parseVectorAnswer(
      R"({"status":"success","data":{"resultType":"vector","result":[)"
      R"({"metric":{"__name__":"x","peer_node":"n4"},"value":[1733230000.1,"5"]},)"
      R"({"metric":{"rail":"1"},"value":[1733230000.1,"NaN"]}]}})");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].labels.at("peer_node"), "n4");
  EXPECT_EQ((*r)[0].value, 5);
  EXPECT_TRUE(std::isnan((*r)[1].value));
}

// prometheus_answer_fuzz found it: json::value() throws when the member is there with another
// type, and diagnose ended with an uncaught type_error.
TEST(PrometheusApiTest, AMemberOfAnotherTypeIsRefusedNotThrown) {
  EXPECT_EQ(parseVectorAnswer(R"({"status":"success","data":{"resultType":[]}})").error().message,
            "the answer is no instant vector");
  EXPECT_EQ(parseVectorAnswer(R"({"status":"error","errorType":{},"error":7})").error().message,
            "Prometheus: : ");
}

TEST(PrometheusApiTest, AnErrorAnswerSaysWhy) {
  auto r = parseVectorAnswer(
      R"({"status":"error","errorType":"bad_data","error":"parse error at char 4"})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "Prometheus: bad_data: parse error at char 4");
}

TEST(PrometheusApiTest, WhatIsNoVectorAnswerIsRefused) {
  for (
      const char* bad :
      {"", "<html>", "[]", R"({"data":{}})", R"({"status":"success"})",
       R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{}}]}})",
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]}]}})",
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,5]}]}})"})
    EXPECT_FALSE(parseVectorAnswer(bad)) << bad;
}

// nlohmann's parser recurses per level: a deep answer would take the stack, so it is refused
// before parsing.
TEST(PrometheusApiTest, ADeepAnswerIsRefusedBeforeParsing) {
  std::string deep(size_t{1} << 20, '[');
  auto r = parseVectorAnswer(deep);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "the answer nests deeper than 64");
  // Brackets inside strings do not count.
  std::string quoted = R"({"status":"success","data":{"resultType":"vector","result":[)"
                       R"({"metric":{"a":")" +
                       std::string(1000, '[') + R"("},"value":[1,"1"]}]}})";
  EXPECT_TRUE(parseVectorAnswer(quoted));
}

TEST(PrometheusApiTest, LabelsAreCutAndMadePrintable) {
  std::string long_value(5000, 'a');
  auto r = parseVectorAnswer(
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"n":")" +
      long_value + R"(","c":"a\u0007b\u001b[31m"},"value":[1,"1"]}]}})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_LE((*r)[0].labels.at("n").size(), kMaxLabelBytes);
  EXPECT_EQ((*r)[0].labels.at("c"), "a?b?[31m");
  EXPECT_TRUE(core::isValidUtf8((*r)[0].labels.at("c")));
}

TEST(PrometheusApiTest, RuleGroupsAreNamed) {
  auto r = parseRuleGroups(
      R"({"status":"success","data":{"groups":[{"name":"fabricwatch-localisation","rules":[]},)"
      R"({"name":"other"}]}})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, (std::vector<std::string>{"fabricwatch-localisation", "other"}));
}

}  // namespace
}  // namespace fabricwatch::fleet
