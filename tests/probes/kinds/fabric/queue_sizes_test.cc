// Queue depths for the probe and the provider variables set before libfabric loads: only where
// the operator left them unset.
#include "probes/kinds/fabric/queue_sizes.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/own_environment.h"

namespace fabricwatch::probes::fabric {
namespace {

TEST(QueueSizesTest, DepthHoldsTwoBandwidthWindows) {
  EXPECT_EQ(probeQueueDepth(16), kProbeQueueDepth);
  EXPECT_EQ(probeQueueDepth(1), kProbeQueueDepth);
  EXPECT_EQ(probeQueueDepth(100), 200u);
}

TEST(QueueSizesTest, LoweredOnRxmOnly) {
  EXPECT_EQ(queueDepthFor("tcp;ofi_rxm", 64), 64u);
  EXPECT_EQ(queueDepthFor("verbs;ofi_rxm", 64), 64u);
  EXPECT_EQ(queueDepthFor("udp;ofi_rxd", 64), 0u);
  EXPECT_EQ(queueDepthFor("efa", 64), 0u);
  EXPECT_EQ(queueDepthFor("tcp", 64), 0u);
  EXPECT_EQ(queueDepthFor("ofi_rxm", 64), 0u);
}

TEST(QueueSizesTest, OnlyUnsetVariablesAreSetAndTheOperatorsStay) {
  std::map<std::string, std::string> env = {{"FI_OFI_RXM_BUFFER_SIZE", "16384"},
                                            {"FI_OFI_RXM_MSG_RX_SIZE", ""}};
  auto lookup = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  // Set, even to "", is the operator's.
  EXPECT_EQ(unsetProviderVariables(lookup),
            (std::vector<std::string>{"FI_OFI_RXM_MSG_TX_SIZE=32", "FI_UNIVERSE_SIZE=64"}));
  env.clear();
  EXPECT_EQ(unsetProviderVariables(lookup),
            (std::vector<std::string>{"FI_OFI_RXM_BUFFER_SIZE=256", "FI_OFI_RXM_MSG_TX_SIZE=32",
                                      "FI_OFI_RXM_MSG_RX_SIZE=32", "FI_UNIVERSE_SIZE=64"}));
}

TEST(QueueSizesTest, ApplyNeverOverwritesTheEnvironment) {
  ::setenv("FI_OFI_RXM_BUFFER_SIZE", "8192", 1);
  ::unsetenv("FI_OFI_RXM_MSG_TX_SIZE");
  ::setenv("FI_OFI_RXM_MSG_RX_SIZE", "64", 1);
  ::setenv("FI_UNIVERSE_SIZE", "2048", 1);
  auto set = applyProbeProviderVariables();
  EXPECT_EQ(set, std::vector<std::string>{"FI_OFI_RXM_MSG_TX_SIZE=32"});
  EXPECT_STREQ(::getenv("FI_OFI_RXM_BUFFER_SIZE"), "8192");
  EXPECT_STREQ(::getenv("FI_OFI_RXM_MSG_TX_SIZE"), "32");
  EXPECT_STREQ(::getenv("FI_OFI_RXM_MSG_RX_SIZE"), "64");
  EXPECT_STREQ(::getenv("FI_UNIVERSE_SIZE"), "2048");
  // What it set is the daemon's own (the NCCL probe's child drops it); the operator's is not.
  EXPECT_TRUE(core::isOwnVariable("FI_OFI_RXM_MSG_TX_SIZE"));
  EXPECT_FALSE(core::isOwnVariable("FI_OFI_RXM_BUFFER_SIZE"));
  for (const char* n : {"FI_OFI_RXM_BUFFER_SIZE", "FI_OFI_RXM_MSG_TX_SIZE",
                        "FI_OFI_RXM_MSG_RX_SIZE", "FI_UNIVERSE_SIZE"})
    ::unsetenv(n);
}

}  // namespace
}  // namespace fabricwatch::probes::fabric
