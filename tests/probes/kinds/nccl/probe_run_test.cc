// The NCCL probe's child stands in for a training job: it inherits the daemon's environment,
// less what the daemon set for itself (the fabric probe's provider sizes) and NCCL's log
// settings, which are the probe's own.
#include "probes/kinds/nccl/probe_run.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/own_environment.h"

namespace fabricwatch::probes::nccl {
namespace {

bool has(const std::vector<std::string>& env, const std::string& kv) {
  return std::find(env.begin(), env.end(), kv) != env.end();
}

bool hasName(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& kv) { return kv.rfind(name + "=", 0) == 0; });
}

TEST(ProbeRunTest, TheChildDropsTheDaemonsOwnVariablesAndKeepsTheOperators) {
  ::unsetenv("FW_PROBE_RUN_TEST_OWN");
  ASSERT_TRUE(core::setOwnVariable("FW_PROBE_RUN_TEST_OWN", "64"));
  ::setenv("FW_PROBE_RUN_TEST_OPERATOR", "1024", 1);
  ::setenv("NCCL_DEBUG", "WARN", 1);
  RunSettings s;
  s.env = {{"NCCL_IB_HCA", "mlx5_0"}};
  auto env = childEnvironment(s, "/tmp/nccl.log");
  EXPECT_FALSE(hasName(env, "FW_PROBE_RUN_TEST_OWN"));
  EXPECT_TRUE(has(env, "FW_PROBE_RUN_TEST_OPERATOR=1024"));
  EXPECT_TRUE(has(env, "NCCL_IB_HCA=mlx5_0"));
  EXPECT_TRUE(has(env, "NCCL_DEBUG=INFO"));
  EXPECT_FALSE(has(env, "NCCL_DEBUG=WARN"));
  EXPECT_TRUE(has(env, "NCCL_DEBUG_FILE=/tmp/nccl.log"));
  for (const char* n : {"FW_PROBE_RUN_TEST_OWN", "FW_PROBE_RUN_TEST_OPERATOR", "NCCL_DEBUG"})
    ::unsetenv(n);
}

}  // namespace
}  // namespace fabricwatch::probes::nccl
