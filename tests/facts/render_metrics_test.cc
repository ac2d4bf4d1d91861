// The metric families that the node sources render from a fixture's facts: values, label sets,
// and that no two sources emit the same family (the exposition would be invalid).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "facts/rdma_source.h"
#include "tests/facts/fixture_facts.h"

namespace fabricwatch::facts {
namespace {

// Renders with the default series, or with `extra` turned on (selectors as in extra_metrics).
core::MetricFamilies renderAll(const core::Value& facts,
                               const std::vector<std::string>& extra = {}) {
  core::Snapshot snap;
  snap.facts = facts;
  if (!extra.empty()) {
    auto sel = std::make_shared<core::MetricSelection>();
    for (const auto& e : extra) sel->add(*core::parseSelector(e, nullptr));
    snap.metric_selection = sel;
  }
  core::MetricFamilies out;
  for (auto& s : probes::makeNodeSources()) s->renderMetrics(snap, out);
  return out;
}

const prometheus::MetricFamily* family(const core::MetricFamilies& fs, const std::string& name) {
  for (const auto& f : fs) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// The value of the sample whose labels include all of `want`; NaN when there is none.
double value(const core::MetricFamilies& fs, const std::string& name,
             const core::LabelPairs& want) {
  const auto* f = family(fs, name);
  if (!f) return NAN;
  for (const auto& m : f->metric) {
    bool all = true;
    for (const auto& [k, v] : want) {
      bool found = false;
      for (const auto& l : m.label) found = found || (l.name == k && l.value == v);
      all = all && found;
    }
    if (all) {
      return f->type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  return NAN;
}

TEST(RenderMetricsTest, FamiliesAreUniqueOnEveryFixture) {
  for (const auto& name : fixtureRoots()) {
    std::set<std::string> seen;
    for (const auto& f : renderAll(collectFixture(name).facts)) {
      EXPECT_TRUE(seen.insert(f.name).second) << name << ": " << f.name << " twice";
      EXPECT_FALSE(f.metric.empty()) << name << ": " << f.name << " has no samples";
    }
  }
}

TEST(RenderMetricsTest, WorkloadNcclVerdictsPerNodeNotPerProcess) {
  // roce_v2's job fell back to sockets: one series says so, without the job's PID.
  auto m = renderAll(collectFixture("roce_v2").facts);
  EXPECT_EQ(value(m, "fabricwatch_workload_nccl_logs",
                  {{"inter_node_transport", "socket"}, {"gdr", "off"}}),
            1);
  const auto* f = family(m, "fabricwatch_workload_nccl_logs");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->metric.size(), 1u);
  EXPECT_EQ(f->metric[0].label.size(), 2u);
  // Labels only ever carry the verdict's own values.
  core::Value facts = collectFixture("roce_v2").facts;
  facts["workloads"].asList()[0]["nccl_log"]["inter_node_transport"] = "a\nmade-up value";
  auto odd = renderAll(facts);
  EXPECT_EQ(value(odd, "fabricwatch_workload_nccl_logs", {{"inter_node_transport", "unknown"}}), 1);
  // Without logs (the broken fixture), no family at all.
  EXPECT_EQ(family(renderAll(collectFixture("broken").facts), "fabricwatch_workload_nccl_logs"),
            nullptr);
}

// Interfaces that carry the fabric's traffic get the up / MTU / speed series, virtual or not:
// a bond (with its mode and slaves), the VLAN an RDMA port's GIDs sit on; per-pod veths and
// docker0 do not.
TEST(RenderMetricsTest, BondsAndRdmaVlansGetInterfaceSeries) {
  auto m = renderAll(collectFixture("legacy_bond").facts);
  EXPECT_EQ(value(m, "fabricwatch_net_interface_up", {{"interface", "bond0"}}), 1);
  EXPECT_EQ(value(m, "fabricwatch_net_interface_mtu_bytes", {{"interface", "bond0"}}), 9000);
  EXPECT_EQ(value(m, "fabricwatch_net_interface_speed_bytes_per_second", {{"interface", "bond0"}}),
            20000e6 / 8);
  EXPECT_EQ(value(m, "fabricwatch_net_interface_info",
                  {{"interface", "bond0"}, {"pci_address", ""}, {"operstate", "up"}}),
            1);
  EXPECT_EQ(value(m, "fabricwatch_net_bond_info", {{"interface", "bond0"}, {"mode", "802.3ad"}}),
            1);
  EXPECT_EQ(value(m, "fabricwatch_net_bond_slaves", {{"interface", "bond0"}}), 2);
  EXPECT_EQ(value(m, "fabricwatch_net_bond_slaves_up", {{"interface", "bond0"}}), 2);
  EXPECT_EQ(value(m, "fabricwatch_net_interface_up", {{"interface", "ens5p2.100"}}), 1);
  EXPECT_EQ(value(m, "fabricwatch_net_interface_up", {{"interface", "eno1"}}), 1);
  for (const char* virt : {"veth3f2a1c9", "docker0", "lo", "bonding_masters"}) {
    EXPECT_TRUE(std::isnan(value(m, "fabricwatch_net_interface_up", {{"interface", virt}})))
        << virt;
  }
  // The legacy counters are reported as node_exporter reports them; an N/A counter is absent.
  EXPECT_EQ(value(m, "fabricwatch_rdma_port_stat_total",
                  {{"device", "mlx4_0"}, {"port", "1"}, {"stat", "port_xmit_data_64"}}),
            3733440);
  EXPECT_TRUE(std::isnan(value(m, "fabricwatch_rdma_port_stat_total",
                               {{"device", "i40iw0"}, {"stat", "symbol_error"}})));
  EXPECT_EQ(value(m, "fabricwatch_memlock_limit_bytes", {{"limit", "soft"}}),
            18446744073708503040.0);
}

// A virtual interface named by an effective NCCL_SOCKET_IFNAME (the node's /etc/nccl.conf or a
// workload's) gets the series; an exclusion list names none.
TEST(RenderMetricsTest, InterfacesNamedByNcclSocketIfname) {
  auto facts = collectFixture("no_rdma").facts;
  facts.setPath("nccl.settings.NCCL_SOCKET_IFNAME",
                core::Value::map({{"value", "=docker0"}, {"source", "/etc/nccl.conf:1"}}));
  auto m = renderAll(facts);
  EXPECT_EQ(value(m, "fabricwatch_net_interface_up", {{"interface", "docker0"}}), 0);
  EXPECT_TRUE(std::isnan(value(m, "fabricwatch_net_interface_up", {{"interface", "lo"}})));

  auto wl = collectFixture("no_rdma").facts;
  core::Value w = core::Value::map();
  w["pid"] = 7;
  w["nccl"]["NCCL_SOCKET_IFNAME"] =
      core::Value::map({{"value", "lo"}, {"source", "workload 7 environment"}});
  wl["workloads"] = core::Value::list();
  wl["workloads"].push(std::move(w));
  wl.setPath("nccl.settings.NCCL_SOCKET_IFNAME",
             core::Value::map({{"value", "^docker"}, {"source", "/etc/nccl.conf:1"}}));
  m = renderAll(wl);
  EXPECT_EQ(value(m, "fabricwatch_net_interface_mtu_bytes", {{"interface", "lo"}}), 65536);
  EXPECT_TRUE(std::isnan(value(m, "fabricwatch_net_interface_up", {{"interface", "docker0"}})));
}

TEST(RenderMetricsTest, P5Node) {
  auto m = renderAll(collectFixture("p5_efa").facts);
  EXPECT_EQ(value(m, "fabricwatch_rdma_devices", {}), 32);
  EXPECT_EQ(value(m, "fabricwatch_gpus", {}), 8);
  EXPECT_EQ(value(m, "fabricwatch_workloads", {}), 1);
  // The job's own NCCL log: EFA with GPUDirect RDMA.
  EXPECT_EQ(
      value(m, "fabricwatch_workload_nccl_logs", {{"inter_node_transport", "efa"}, {"gdr", "on"}}),
      1);
  EXPECT_EQ(
      value(m, "fabricwatch_memory_hugepages", {{"size_bytes", "2097152"}, {"state", "total"}}),
      5128);
  EXPECT_EQ(
      value(m, "fabricwatch_memory_hugepages", {{"size_bytes", "2097152"}, {"state", "reserved"}}),
      16);
  EXPECT_TRUE(std::isinf(value(m, "fabricwatch_memlock_limit_bytes", {{"limit", "soft"}})));
  EXPECT_EQ(value(m, "fabricwatch_software_info",
                  {{"component", "libfabric"}, {"version", "1.22.0amzn4.0"}}),
            1);
  EXPECT_EQ(value(m, "fabricwatch_software_info",
                  {{"component", "efa_installer"}, {"version", "1.34.0"}}),
            1);
  EXPECT_EQ(value(m, "fabricwatch_rdma_port_hw_stat_total",
                  {{"device", "rdmap19s0"}, {"port", "1"}, {"stat", "retrans_pkts"}}),
            312);
  EXPECT_EQ(value(m, "fabricwatch_rdma_port_state", {{"device", "rdmap19s0"}}), 4);
  EXPECT_EQ(family(m, "fabricwatch_pcie_link_degraded")->metric.size(), 40u);      // 32 + 8
  EXPECT_EQ(family(m, "fabricwatch_pcie_link_current_width")->metric.size(), 8u);  // GPUs
  EXPECT_EQ(value(m, "fabricwatch_pcie_link_max_width", {{"function", "gpu"}, {"device", "gpu0"}}),
            16);
  // Only the hardware interface: loopback (and any veth) stay out of the metrics.
  const auto* up = family(m, "fabricwatch_net_interface_up");
  ASSERT_TRUE(up);
  ASSERT_EQ(up->metric.size(), 1u);
  EXPECT_EQ(up->metric[0].label[0].value, "enp0s5");
  EXPECT_EQ(value(m, "fabricwatch_net_interface_mtu_bytes", {{"interface", "enp0s5"}}), 9001);
}

// The series budget on the p5 root (32 EFA devices): the EFA driver's constant port gauges,
// the byte and packet totals among its counters and the NICs' PCIe details are optional; the
// error and retransmit counters stay.
TEST(RenderMetricsTest, P5LongTailsAreOptIn) {
  auto facts = collectFixture("p5_efa").facts;
  auto m = renderAll(facts);
  for (const char* f :
       {"fabricwatch_rdma_device_info", "fabricwatch_rdma_port_info",
        "fabricwatch_rdma_port_phys_state", "fabricwatch_rdma_port_rate_bytes_per_second",
        "fabricwatch_pcie_link_current_speed_transfers_per_second",
        "fabricwatch_pcie_link_max_speed_transfers_per_second"})
    EXPECT_EQ(family(m, f), nullptr) << f;
  std::set<std::string> stats;
  for (const auto& s : family(m, "fabricwatch_rdma_port_hw_stat_total")->metric)
    stats.insert(s.label.back().value);
  EXPECT_EQ(stats, (std::set<std::string>{"impaired_remote_conn_events", "retrans_pkts",
                                          "retrans_timeout_events", "rx_drops", "tx_pkts",
                                          "unresponsive_remote_events"}));
  EXPECT_EQ(family(m, "fabricwatch_rdma_port_hw_stat_total")->metric.size(), 32u * 6);

  auto all = renderAll(
      facts, {"fabricwatch_rdma_device_info", "fabricwatch_rdma_port_info",
              "fabricwatch_rdma_port_phys_state", "fabricwatch_rdma_port_rate_bytes_per_second",
              "fabricwatch_rdma_port_hw_stat_total{stat=\"tx_bytes\"}",
              "fabricwatch_pcie_link_current_width",
              "fabricwatch_pcie_link_max_speed_transfers_per_second"});
  EXPECT_EQ(value(all, "fabricwatch_rdma_port_rate_bytes_per_second", {{"device", "rdmap19s0"}}),
            100e9 / 8);
  EXPECT_EQ(value(all, "fabricwatch_rdma_port_phys_state", {{"device", "rdmap19s0"}}), 5);
  EXPECT_EQ(family(all, "fabricwatch_rdma_device_info")->metric.size(), 32u);
  EXPECT_EQ(family(all, "fabricwatch_rdma_port_info")->metric.size(), 32u);
  EXPECT_EQ(family(all, "fabricwatch_rdma_port_hw_stat_total")->metric.size(), 32u * 7);
  EXPECT_GT(value(all, "fabricwatch_rdma_port_hw_stat_total",
                  {{"device", "rdmap19s0"}, {"stat", "tx_bytes"}}),
            0);
  EXPECT_EQ(family(all, "fabricwatch_pcie_link_current_width")->metric.size(), 40u);
  EXPECT_EQ(family(all, "fabricwatch_pcie_link_max_width")->metric.size(), 8u);
  EXPECT_EQ(value(all, "fabricwatch_pcie_link_max_speed_transfers_per_second",
                  {{"function", "gpu"}, {"device", "gpu0"}}),
            32e9);
}

// On InfiniBand and RoCE ports the port gauges are real signals and stay by default, as do the
// standard and driver error counters; unicast/multicast packet counts are the long tail.
TEST(RenderMetricsTest, InfiniBandKeepsPortGaugesAndErrorCounters) {
  auto m = renderAll(collectFixture("ib_ndr").facts);
  EXPECT_EQ(value(m, "fabricwatch_rdma_port_phys_state", {{"device", "mlx5_0"}}), 5);
  EXPECT_GT(value(m, "fabricwatch_rdma_port_rate_bytes_per_second", {{"device", "mlx5_0"}}), 0);
  EXPECT_FALSE(std::isnan(value(m, "fabricwatch_rdma_port_info", {{"device", "mlx5_0"}})));
  for (const char* stat : {"symbol_error", "link_downed", "port_rcv_errors", "port_xmit_wait",
                           "port_xmit_data", "port_rcv_packets"})
    EXPECT_FALSE(std::isnan(
        value(m, "fabricwatch_rdma_port_stat_total", {{"device", "mlx5_0"}, {"stat", stat}})))
        << stat;
  EXPECT_FALSE(std::isnan(value(m, "fabricwatch_rdma_port_hw_stat_total",
                                {{"device", "mlx5_0"}, {"stat", "out_of_sequence"}})));
}

TEST(RenderMetricsTest, DefaultCounterNames) {
  for (const char* on :
       {"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
        "port_xmit_discards", "VL15_dropped", "port_xmit_wait", "port_xmit_data_64",
        "port_rcv_packets", "excessive_buffer_overrun_errors"})
    EXPECT_TRUE(defaultPortCounter(on)) << on;
  for (const char* off : {"unicast_xmit_packets", "port_multicast_rcv_packets"})
    EXPECT_FALSE(defaultPortCounter(off)) << off;
  for (const char* on :
       {"retrans_pkts", "retrans_bytes", "rx_drops", "tx_pkts", "unresponsive_remote_events",
        "impaired_remote_conn_events", "rdma_read_wr_err", "out_of_sequence", "packet_seq_err",
        "local_ack_timeout_err", "rnr_nak_retry_err", "np_cnp_sent", "np_ecn_marked_roce_packets",
        "roce_slow_restart", "duplicate_request"})
    EXPECT_TRUE(defaultHwCounter(on)) << on;
  for (const char* off :
       {"tx_bytes", "rx_bytes", "rx_pkts", "rdma_read_bytes", "send_wrs", "submitted_cmds"})
    EXPECT_FALSE(defaultHwCounter(off)) << off;
}

TEST(RenderMetricsTest, AbsentFactsRenderNoSeries) {
  auto m = renderAll(core::Value::map());
  EXPECT_TRUE(m.empty());
}

}  // namespace
}  // namespace fabricwatch::facts
