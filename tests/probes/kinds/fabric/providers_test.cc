// Provider names, the `auto` ranking, the choice by flag, configuration and resource group, and
// the names of libfabric's mode bits: the pure half of provider selection.
#include "probes/kinds/fabric/providers.h"

#include <gtest/gtest.h>
#include <rdma/fabric.h>

namespace fabricwatch::probes::fabric {
namespace {

TEST(ProvidersTest, KnownNamesAndLayeredOnes) {
  for (const char* ok : {"auto", "efa", "verbs;ofi_rxm", "tcp", "tcp;ofi_rxm", "udp;ofi_rxd", "shm",
                         "sockets", "psm3", "cxi"})
    EXPECT_FALSE(checkProviderName(ok)) << ok;
  for (const char* bad : {"", "EFA", "verbs;", ";ofi_rxm", "verbs;ofi_rxm;ofi_rxd", "tcp;shm",
                          "verbs ;ofi_rxm", "rxm"})
    EXPECT_TRUE(checkProviderName(bad)) << bad;
  EXPECT_NE(checkProviderName("vrebs")->find("use auto, efa, verbs, tcp"), std::string::npos);
}

TEST(ProvidersTest, AutoPrefersTheFabricOverSockets) {
  EXPECT_EQ(pickAuto({"udp;ofi_rxd", "tcp;ofi_rxm", "shm"}), 1u);
  EXPECT_EQ(pickAuto({"tcp;ofi_rxm", "verbs;ofi_rxm", "efa"}), 2u);
  EXPECT_EQ(pickAuto({"sockets", "udp;ofi_rxd"}), 1u);
  EXPECT_FALSE(pickAuto({"shm", "psm2"}));  // never across nodes, or not ranked
  EXPECT_FALSE(pickAuto({}));
}

TEST(ProvidersTest, ACoreNameIsAnsweredByItsLayeredProvider) {
  EXPECT_TRUE(providerMatches("tcp", "tcp;ofi_rxm"));
  EXPECT_TRUE(providerMatches("tcp;ofi_rxm", "tcp;ofi_rxm"));
  EXPECT_FALSE(providerMatches("tcp", "tcpx"));
  EXPECT_FALSE(providerMatches("tcp;ofi_rxm", "tcp"));
  EXPECT_FALSE(providerMatches("verbs", "tcp;ofi_rxm"));
  EXPECT_TRUE(isSocketProvider("tcp;ofi_rxm"));
  EXPECT_TRUE(isSocketProvider("udp;ofi_rxd"));
  EXPECT_FALSE(isSocketProvider("efa"));
  EXPECT_FALSE(isSocketProvider("verbs;ofi_rxm"));
}

TEST(ProvidersTest, FlagThenConfigurationThenGroupThenAuto) {
  std::vector<GroupProvider> table = {{"efa*", "efa"}, {"ib-*", "verbs;ofi_rxm"}};
  auto c = chooseProvider("tcp", true, table, "efa-p5");
  EXPECT_EQ(c.provider, "tcp");
  EXPECT_EQ(c.origin, "flag");
  c = chooseProvider("shm", false, table, "efa-p5");
  EXPECT_EQ(c.origin, "config");
  c = chooseProvider("auto", false, table, "efa-p5");
  EXPECT_EQ(c.provider, "efa");
  EXPECT_EQ(c.origin, "group");
  c = chooseProvider("auto", false, table, "ib-hdr");
  EXPECT_EQ(c.provider, "verbs;ofi_rxm");
  c = chooseProvider("auto", false, table, "cpu");
  EXPECT_EQ(c.provider, "auto");
  EXPECT_EQ(c.origin, "auto");
  c = chooseProvider("auto", false, table, "");  // derived later: auto decides
  EXPECT_EQ(c.origin, "auto");
  // The flag wins even when it says auto.
  EXPECT_EQ(chooseProvider("auto", true, table, "efa-p5").origin, "flag");
}

TEST(ProvidersTest, GroupRows) {
  std::string why;
  auto g = parseGroupProvider("lingjun-*=verbs;ofi_rxm", &why);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->glob, "lingjun-*");
  EXPECT_EQ(g->provider, "verbs;ofi_rxm");
  EXPECT_FALSE(parseGroupProvider("=efa", &why));
  EXPECT_FALSE(parseGroupProvider("efa-*=", &why));
  EXPECT_FALSE(parseGroupProvider("efa-*=auto", &why));
  EXPECT_EQ(why, "group provider \"efa-*=auto\" must name a provider, not auto");
  EXPECT_FALSE(parseGroupProvider("efa-*=efx", &why));
  EXPECT_EQ(why.rfind("unknown libfabric provider \"efx\"", 0), 0u);
}

TEST(ProvidersTest, BitNames) {
  EXPECT_EQ(mrModeBitNames(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY),
            (std::vector<std::string>{"FI_MR_LOCAL", "FI_MR_VIRT_ADDR", "FI_MR_ALLOCATED",
                                      "FI_MR_PROV_KEY"}));
  EXPECT_EQ(modeBitNames(FI_CONTEXT | (uint64_t{1} << 3)),
            (std::vector<std::string>{"FI_CONTEXT", "0x8"}));
  EXPECT_TRUE(modeBitNames(0).empty());
  EXPECT_EQ(versionString(FI_VERSION(1, 17)), "1.17");
  EXPECT_EQ(versionString(FI_VERSION(117, 0)), "117.0");
}

}  // namespace
}  // namespace fabricwatch::probes::fabric
