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

// Issue 20, item 1: the rails list per resource group, and subnets as rail names.
TEST(FabricConfigTest, RailsByGroupPicksTheGroupsListEachProblemPositioned) {
  // A group with a dot (or none) cannot be a key: the loader says which key it does not know.
  EXPECT_EQ(configProblem("[probes.fabric.rails_by_group]\n\"efa.p5\" = [\"x\"]\n"),
            "2:1: unknown key \"probes.fabric.rails_by_group.efa.p5\"");
  EXPECT_EQ(configProblem("[probes.fabric.rails_by_group]\n\"\" = [\"eth1\"]\n"),
            "2:1: unknown key \"probes.fabric.rails_by_group.\"");
  auto r = config::loadConfig(
      "[probes.fabric]\nrails = [\"subnet:10.1.0.0/24\", \"mlx5_1|subnet:10.1.1.0/24\"]\n"
      "rails_by_group = { roce-a = [\"eth1\", \"eth2\"], ib-pci = [] }\n",
      "t.toml", kindLoadOptions());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  const auto& f = fabricConfig(r.config);
  EXPECT_EQ(f.rails_by_group.size(), 2u);
  bool by_group = false;
  EXPECT_EQ(railsOfGroup(f, "roce-a", &by_group), (std::vector<std::string>{"eth1", "eth2"}));
  EXPECT_TRUE(by_group);
  // An empty list: the default (PCI order) for that group, whatever `rails` says.
  EXPECT_TRUE(railsOfGroup(f, "ib-pci", &by_group).empty());
  EXPECT_TRUE(by_group);
  EXPECT_EQ(railsOfGroup(f, "roce-b", &by_group), f.rails);  // exact names, no globbing
  EXPECT_FALSE(by_group);
  EXPECT_EQ(railsOfGroup(f, "", &by_group), f.rails);
  EXPECT_FALSE(by_group);
  EXPECT_TRUE(FabricConfig{}.rails_by_group.empty());
  // The same table written as a table of its own.
  r = config::loadConfig("[probes.fabric.rails_by_group]\nroce-a = [\"subnet:fd00:1::/64\"]\n",
                         "t.toml", kindLoadOptions());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  EXPECT_EQ(fabricConfig(r.config).rails_by_group.at("roce-a"),
            (std::vector<std::string>{"subnet:fd00:1::/64"}));

  // Each problem where it is, with the group's key named.
  EXPECT_EQ(configProblem("[probes.fabric]\nrails_by_group = { a = [\"subnet:10.1.0.5/24\"] }\n"),
            "2:24: rail name \"subnet:10.1.0.5/24\": subnet \"10.1.0.5/24\" has bits set past its "
            "/24: the network is 10.1.0.0/24");
  EXPECT_EQ(
      configProblem("[probes.fabric]\nrails = [\"subnet:10.1.0.0/16\", \"subnet:10.1.3.0/24\"]\n"),
      "2:9: probes.fabric.rails rail 1's subnet:10.1.3.0/24 overlaps rail 0's "
      "subnet:10.1.0.0/16: an address in both would be on two rails");
  EXPECT_EQ(configProblem("[probes.fabric.rails_by_group]\nb = [\"eth1\"]\n"
                          "a = [\"subnet:10.1.0.0/24\", \"eth9|subnet:10.1.0.128/25\"]\n"),
            "3:5: probes.fabric.rails_by_group.a rail 1's subnet:10.1.0.128/25 overlaps rail 0's "
            "subnet:10.1.0.0/24: an address in both would be on two rails");
  EXPECT_EQ(configProblem("[probes.fabric.rails_by_group]\na = [\"eth1\", \"eth1\"]\n"),
            "2:5: probes.fabric.rails_by_group.a names \"eth1\" on two rails");
  EXPECT_EQ(configProblem("[probes.fabric]\ndomain = \"mlx5_0\"\n"
                          "rails_by_group = { g = [\"mlx5_1\"] }\n"),
            "3:24: probes.fabric.rails_by_group.g and probes.fabric.domain exclude each other: "
            "name the domain in rails");
  EXPECT_EQ(configProblem("[probes.fabric]\nrails_by_group = { g = \"eth1\" }\n"),
            "2:24: expected an array of strings, got string");
  EXPECT_EQ(configProblem("[probes.fabric]\nrails_by_group = { g = { h = [] } }\n").substr(0, 14),
            "2:20: unknown ");
  EXPECT_EQ(configProblem("[probes.fabric]\nrails_by_group = [\"g=eth1\"]\n"),
            "2:1: unknown key \"probes.fabric.rails_by_group\"");
  EXPECT_EQ(configProblem("[probes.fabric.rails_by_group]\n\"a b\" = [\"eth1\"]\n"),
            "2:9: resource group \"a b\" in probes.fabric.rails_by_group must be 1-128 printable "
            "characters without spaces or quotes");
  std::string many = "[probes.fabric.rails_by_group]\ng = [";
  for (int i = 0; i < 33; ++i) many += "\"e" + std::to_string(i) + "\", ";
  many += "]\n";
  EXPECT_EQ(configProblem(many), "2:5: probes.fabric.rails_by_group.g lists 33 rails: at most 32");
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
