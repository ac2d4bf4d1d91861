#include "exporter/config_flags.h"

#include <gtest/gtest.h>

#include "probes/mesh/probe_kind.h"

namespace fabricwatch::exporter {
namespace {

config::LoadResult load(const std::vector<std::string>& args) {
  FlagSet flags("usage: test");
  addConfigFlags(flags, {.web = true});
  if (auto err = flags.parse(args)) {
    config::LoadResult r;
    r.problems.push_back({"flags", 0, 0, *err, ""});
    return r;
  }
  return loadConfigWithFlags(flags);
}

TEST(ConfigFlagsTest, EveryProbeKindIsTurnedOnAndOffByItsOwnFlag) {
  auto r = load({"--probe.dns.enabled=false", "--probe.tcp.enabled", "true"});
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  EXPECT_FALSE(r.config.probes.enabled("dns", true));
  EXPECT_TRUE(r.config.probes.enabled("tcp", false));

  auto bad = load({"--probe.dns.enabled=maybe"});
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_EQ(bad.problems[0].file, "flag --probe.dns.enabled");
  EXPECT_EQ(bad.problems[0].message, "expected true or false, got \"maybe\"");

  // A kind registered at run time gets its flag without anyone writing it.
  EXPECT_EQ(load({"--probe.extra.enabled=true"}).problems[0].message,
            "unknown flag --probe.extra.enabled");
  probes::registerProbeKind({"extra", false, [](const probes::KindSetup&) {
                               return core::Result<std::shared_ptr<probes::ProbeKind>>(
                                   core::Error{"test only"});
                             }});
  auto extra = load({"--probe.extra.enabled=true"});
  ASSERT_TRUE(extra.ok()) << core::formatAll(extra.problems);
  EXPECT_TRUE(extra.config.probes.enabled("extra", false));
}

}  // namespace
}  // namespace fabricwatch::exporter
