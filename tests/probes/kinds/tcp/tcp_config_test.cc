// [probes.tcp] and [probes.dns]: the tcp and dns kinds' keys, in their own tables, declared
// with the kinds (tcp_config.cc, dns_config.cc) and loaded by the binary's schema.
#include "probes/kinds/tcp/tcp_config.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "probes/kinds/dns/dns_config.h"
#include "tests/support/registry.h"

namespace fabricwatch::probes::tcp {
namespace {

using testing::kindLoadOptions;

TEST(TcpConfigTest, EachKindsOwnKeysLiveInItsTable) {
  auto r = config::loadConfig(
      "[probes.tcp]\nsamples = 3\nconnect_timeout = \"300ms\"\necho_timeout = \"200ms\"\n"
      "[probes.dns]\ntimeout = \"700ms\"\n",
      "t.toml", kindLoadOptions());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  EXPECT_EQ(tcpConfig(r.config).samples, 3);
  EXPECT_EQ(tcpConfig(r.config).connect_timeout.count(), 300);
  EXPECT_EQ(tcpConfig(r.config).echo_timeout.count(), 200);
  EXPECT_EQ(dns::dnsConfig(r.config).timeout.count(), 700);
  // Where they used to be, they are unknown now: there is one place for each key.
  for (const char* old : {"samples_per_peer = 3", "connect_timeout = \"1s\"",
                          "echo_timeout = \"1s\"", "dns_timeout = \"1s\""}) {
    auto o = config::loadConfig(std::string("[probe]\n") + old + "\n", "t.toml", kindLoadOptions());
    ASSERT_EQ(o.problems.size(), 1u) << old;
    EXPECT_NE(o.problems[0].message.find("unknown key"), std::string::npos) << old;
  }
}

}  // namespace
}  // namespace fabricwatch::probes::tcp
