#include "core/own_environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace fabricwatch::core {
namespace {

TEST(OwnEnvironmentTest, AnUnsetVariableIsSetAndRecordedAsOurs) {
  ::unsetenv("FW_OWN_ENV_TEST_UNSET");
  EXPECT_FALSE(isOwnVariable("FW_OWN_ENV_TEST_UNSET"));
  EXPECT_TRUE(setOwnVariable("FW_OWN_ENV_TEST_UNSET", "64"));
  ASSERT_NE(::getenv("FW_OWN_ENV_TEST_UNSET"), nullptr);
  EXPECT_STREQ(::getenv("FW_OWN_ENV_TEST_UNSET"), "64");
  EXPECT_TRUE(isOwnVariable("FW_OWN_ENV_TEST_UNSET"));
  ::setenv("FW_OWN_ENV_TEST_UNSET", "128", 1);  // set over since: no longer ours
  EXPECT_FALSE(isOwnVariable("FW_OWN_ENV_TEST_UNSET"));
  ::unsetenv("FW_OWN_ENV_TEST_UNSET");
  EXPECT_FALSE(isOwnVariable("FW_OWN_ENV_TEST_UNSET"));
}

TEST(OwnEnvironmentTest, TheOperatorsValueStaysAndIsNotOurs) {
  ::setenv("FW_OWN_ENV_TEST_SET", "1024", 1);
  EXPECT_FALSE(setOwnVariable("FW_OWN_ENV_TEST_SET", "64"));
  EXPECT_STREQ(::getenv("FW_OWN_ENV_TEST_SET"), "1024");
  EXPECT_FALSE(isOwnVariable("FW_OWN_ENV_TEST_SET"));
}

}  // namespace
}  // namespace fabricwatch::core
