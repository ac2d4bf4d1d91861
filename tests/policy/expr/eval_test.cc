#include <gtest/gtest.h>

#include "policy/expr/expr.h"
#include "tests/policy/expr/expr_test_util.h"

namespace fabricwatch::policy::expr {
namespace {

using testing::ExprTest;

TEST_F(ExprTest, Literals) {
  EXPECT_EQ(eval("1"), core::Value(1));
  EXPECT_EQ(eval("-9223372036854775808"), core::Value(INT64_MIN));
  EXPECT_EQ(eval("0x10"), core::Value(16));
  EXPECT_EQ(eval("1.5"), core::Value(1.5));
  EXPECT_EQ(eval("1e3"), core::Value(1000.0));
  EXPECT_EQ(eval("'a\\n'"), core::Value("a\n"));
  EXPECT_EQ(eval("r'a\\n'"), core::Value("a\\n"));
  EXPECT_EQ(eval("'''x'y'''"), core::Value("x'y"));
  EXPECT_EQ(eval("\"\\u00e9\""), core::Value("\xc3\xa9"));
  EXPECT_EQ(eval("true"), core::Value(true));
  EXPECT_EQ(eval("null"), core::Value());
  EXPECT_EQ(eval("[1, 'a', [true]]"),
            core::Value(core::Value::List{1, "a", core::Value(core::Value::List{true})}));
  EXPECT_EQ(eval("{'a': 1, 'b': [2]}"),
            core::Value::map({{"a", 1}, {"b", core::Value(core::Value::List{2})}}));
  EXPECT_EQ(eval("[1, 2,]"), core::Value(core::Value::List{1, 2}));
}

TEST_F(ExprTest, FieldSelectionOverFacts) {
  EXPECT_EQ(eval("size(rdma.devices)"), core::Value(4));
  EXPECT_EQ(eval("rdma.devices[0].name"), core::Value("efa_0"));
  EXPECT_EQ(eval("memory.hugepages['2048kB'].total"), core::Value(2560));
  EXPECT_EQ(evalError("rdma.nothing"), "1:6: no such key: 'nothing'");
  EXPECT_EQ(evalError("nope.x"), "1:1: undeclared reference to 'nope'");
}

}  // namespace
}  // namespace fabricwatch::policy::expr
