// The pack compiler's output: string literals that keep every byte, and the data's shape.
#include "policy/pack_codegen.h"

#include <gtest/gtest.h>

#include "policy/pack_loader.h"
#include "tests/support/registry.h"

namespace fabricwatch::policy {
namespace {

TEST(PackCodegenTest, StringsKeepEveryByte) {
  EXPECT_EQ(cppStringView("plain text"), "std::string_view(\"plain text\", 10)");
  EXPECT_EQ(cppStringView("a\"b\\c"), "std::string_view(\"a\\\"b\\\\c\", 5)");
  EXPECT_EQ(cppStringView("l1\nl2"), "std::string_view(\"l1\\nl2\", 5)");
  // Octal escapes are always three digits, so a digit after one is not taken into it.
  EXPECT_EQ(cppStringView(std::string("\0"
                                      "1",
                                      2)),
            "std::string_view(\"\\0001\", 2)");
  EXPECT_EQ(cppStringView("\t\x7f"), "std::string_view(\"\\011\\177\", 2)");
  // UTF-8 bytes are escaped one by one (the length counts bytes).
  EXPECT_EQ(cppStringView("\xc2\xb5s"), "std::string_view(\"\\302\\265s\", 3)");
  EXPECT_EQ(cppStringView("??="), "std::string_view(\"\\077\\077=\", 3)");
}

TEST(PackCodegenTest, WritesEveryPackWithItsPositions) {
  auto r = loadPackText(R"(apiVersion: fabricwatch.io/v1
kind: PolicyPack
metadata: {name: demo, description: "a \"demo\""}
spec:
  match:
    resourceGroups: ["efa-*"]
  variables:
    - name: n
      expression: 'size(rdma.devices)'
  rules:
    - id: one
      severity: critical
      expression: 'variables.n > 0'
      messageExpression: '"found " + string(variables.n)'
      unknownWhen: '!has(rdma.devices)'
      unknownMessage: no devices listed
      remediation: add devices
    - id: per-workload
      severity: info
      subject: workload
      expression: 'has(workload.env)'
      remediation: set it
)",
                        "config/policies/demo.yaml", testing::factRoots());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  std::string src = packSetSource(r.packs);
  EXPECT_NE(
      src.find("constexpr std::string_view kGroups0[] = {\n    std::string_view(\"efa-*\", 5),"),
      std::string::npos)
      << src;
  EXPECT_NE(src.find("{std::string_view(\"n\", 1), {true, std::string_view(\"size(rdma.devices)\", "
                     "18), {9, 19}}}"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("Severity::kCritical, Subject::kNode"), std::string::npos) << src;
  EXPECT_NE(src.find("Severity::kInfo, Subject::kWorkload"), std::string::npos) << src;
  // The unknown condition and its message travel with the rule; absent ones are empty.
  EXPECT_NE(src.find("{true, std::string_view(\"!has(rdma.devices)\", 18), {15, 20}},\n     "
                     "std::string_view(\"no devices listed\", 17),\n     {},"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("std::string_view(\"a \\\"demo\\\"\", 8)"), std::string::npos) << src;
  EXPECT_NE(src.find("return std::span<const EmbeddedPack>(kPacks, 1);"), std::string::npos) << src;
}

TEST(PackCodegenTest, NoPacksIsAnEmptySpan) {
  std::string src = packSetSource({});
  EXPECT_NE(src.find("return std::span<const EmbeddedPack>(kPacks, 0);"), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::policy
