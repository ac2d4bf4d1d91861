// [probes.fabric]: the fabric kind's keys, declared with the kind (fabric_config.cc) and loaded
// by the binary's schema, each problem positioned.
#include "probes/kinds/fabric/fabric_config.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "tests/support/registry.h"

namespace fabricwatch::probes::fabric {
namespace {

using testing::configProblem;
using testing::kindLoadOptions;

TEST(FabricConfigTest, KeysDefaultsAndProblems) {
  auto r = config::loadConfig(
      "[probes.fabric]\nprovider = \"udp;ofi_rxd\"\nlatency_size = \"4KiB\"\n"
      "iterations = 1000\nbandwidth_interval = \"0s\"\nregister_buffers = true\n"
      "group_providers = [\"efa-*=efa\", \"ib-*=verbs;ofi_rxm\"]\n",
      "t.toml", kindLoadOptions());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  const auto& f = fabricConfig(r.config);
  EXPECT_EQ(f.provider, "udp;ofi_rxd");
  EXPECT_EQ(f.provider_origin, FabricConfig::Origin::kConfig);
  EXPECT_EQ(f.latency_size, 4096u);
  EXPECT_EQ(f.iterations, 1000);
  EXPECT_EQ(f.bandwidth_interval.count(), 0);
  EXPECT_TRUE(f.register_buffers);
  EXPECT_EQ(f.group_providers.size(), 2u);
  // Defaults: auto, and the shipped groups pinned.
  FabricConfig d;
  EXPECT_EQ(d.provider, "auto");
  EXPECT_EQ(d.provider_origin, FabricConfig::Origin::kDefault);
  EXPECT_EQ(d.group_providers.front(), "efa*=efa");

  // An unknown provider is a positioned error that lists the known ones.
  std::string p = configProblem("[probes.fabric]\nprovider = \"efa;ofi_rxm;x\"\n");
  EXPECT_EQ(p.rfind("2:12: unknown libfabric provider \"efa;ofi_rxm;x\": use auto, efa, verbs", 0),
            0u)
      << p;
  EXPECT_EQ(configProblem("[probes.fabric]\nprovider = \"vrebs\"\n").substr(0, 45),
            "2:12: unknown libfabric provider \"vrebs\": use");
  EXPECT_EQ(configProblem("[probes.fabric]\ngroup_providers = [\"efa-*\"]\n"),
            "2:19: group provider \"efa-*\" must be GLOB=PROVIDER, e.g. \"efa-*=efa\" or "
            "\"ib-*=verbs;ofi_rxm\"");
  EXPECT_EQ(configProblem("[probes.fabric]\nlatency_size = \"8B\"\n"),
            "2:16: size \"8B\" must be 16 bytes to 64 MiB, written as e.g. \"64B\", \"4KiB\" or "
            "\"1MiB\"");
  // Bandwidth needs a warm-up window and a timed one within its byte budget.
  EXPECT_EQ(configProblem("[probes.fabric]\nbandwidth_size = \"1MiB\"\nbandwidth_window = 16\n"
                          "bandwidth_bytes = \"16MiB\"\n"),
            "4:19: probes.fabric.bandwidth_bytes (16777216) must hold at least two windows of "
            "bandwidth_window x bandwidth_size (16777216 bytes each): one to warm up, one to time");
}

TEST(FabricConfigTest, RailsAreDomainsPerRailEachProblemPositioned) {
  auto r = config::loadConfig(
      "[probes.fabric]\nrails = [\"mlx5_0\", \"mlx5_1|mlx5_9\"]\nrails_per_round = 2\n", "t.toml",
      kindLoadOptions());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  const auto& f = fabricConfig(r.config);
  EXPECT_EQ(f.rails, (std::vector<std::string>{"mlx5_0", "mlx5_1|mlx5_9"}));
  EXPECT_EQ(f.rails_per_round, 2);
  EXPECT_TRUE(FabricConfig{}.rails.empty());
  EXPECT_EQ(FabricConfig{}.rails_per_round, 8);
  EXPECT_EQ(configProblem("[probes.fabric]\nrails = [\"mlx5_0\", \"eth 1\"]\n"),
            "2:9: rail name \"eth 1\" may hold only letters, digits and _ - . : @ (a libfabric "
            "domain or interface)");
  EXPECT_EQ(configProblem("[probes.fabric]\nrails = [\"eth1|\"]\n").substr(0, 32),
            "2:9: rail \"eth1|\" must be a doma");
  EXPECT_EQ(configProblem("[probes.fabric]\nrails = [\"eth1\", \"eth2|eth1\"]\n"),
            "2:9: probes.fabric.rails names \"eth1\" on two rails");
  EXPECT_EQ(configProblem("[probes.fabric]\ndomain = \"mlx5_0\"\nrails = [\"mlx5_1\"]\n"),
            "3:9: probes.fabric.rails and probes.fabric.domain exclude each other: name the "
            "domain in rails");
  EXPECT_EQ(configProblem("[probes.fabric]\nrails_per_round = 0\n").substr(0, 5), "2:19:");
  EXPECT_EQ(configProblem("[probes.fabric]\nrails = [\"mlx5_0\", [\"mlx5_1\"]]\n").substr(0, 5),
            "2:9: ");
}

// Issue 20, item 5: bandwidth yields to a job holding the GPUs unless configured otherwise,
// with the monitoring the NCCL probe ignores ignored here too.
TEST(FabricConfigTest, BandwidthYieldsToJobsUnlessConfiguredEachProblemPositioned) {
  FabricConfig d;
  EXPECT_FALSE(d.bandwidth_when_gpus_held);
  EXPECT_EQ(d.ignore_processes, gpu::monitoringProcesses());
  auto r = config::loadConfig(
      "[probes.fabric]\nbandwidth_when_gpus_held = true\nignore_processes = [\"dcgmi\", "
      "\"my-exporter\"]\n",
      "t.toml", kindLoadOptions());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  const auto& f = fabricConfig(r.config);
  EXPECT_TRUE(f.bandwidth_when_gpus_held);
  EXPECT_EQ(f.ignore_processes, (std::vector<std::string>{"dcgmi", "my-exporter"}));
  EXPECT_EQ(configProblem("[probes.fabric]\nbandwidth_when_gpus_held = \"yes\"\n").substr(0, 6),
            "2:28: ");
  EXPECT_EQ(configProblem("[probes.fabric]\nignore_processes = [\"dcgmi\", \"\"]\n"),
            "2:20: process name must not be empty");
  EXPECT_EQ(configProblem("[probes.fabric]\nignore_processes = [\"/usr/bin/dcgmi\"]\n"),
            "2:20: process name \"/usr/bin/dcgmi\" must be a name as /proc/PID/comm shows it (no "
            "'/' or control characters)");
  EXPECT_EQ(configProblem("[probes.fabric]\nignore_processes = \"dcgmi\"\n").substr(0, 6),
            "2:20: ");
  std::string many = "[probes.fabric]\nignore_processes = [";
  for (int i = 0; i < 65; ++i) many += "\"p" + std::to_string(i) + "\", ";
  many += "]\n";
  EXPECT_EQ(configProblem(many),
            "2:20: probes.fabric.ignore_processes lists 65 processes: at most 64");
}

}  // namespace
}  // namespace fabricwatch::probes::fabric
