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
  EXPECT_EQ(stats, (std::set<std::string>{"retrans_pkts", "rx_drops", "rx_pkts", "tx_pkts",
                                          "unresponsive_remote_events"}));
  EXPECT_EQ(family(m, "fabricwatch_rdma_port_hw_stat_total")->metric.size(), 32u * 5);

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
  EXPECT_EQ(family(all, "fabricwatch_rdma_port_hw_stat_total")->metric.size(), 32u * 6);
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
       {"out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err",
        "np_cnp_sent", "np_ecn_marked_roce_packets", "roce_slow_restart", "duplicate_request",
        "roce_adp_retrans", "req_cqe_error", "resp_cqe_error"})
    EXPECT_TRUE(defaultHwCounter("mlx5", on)) << on;
  for (const char* off : {"rx_read_requests", "rx_write_requests", "rx_atomic_requests"})
    EXPECT_FALSE(defaultHwCounter("mlx5", off)) << off;
  // EFA: a known set, within the p5 budget.
  for (const char* on :
       {"tx_pkts", "rx_pkts", "retrans_pkts", "rx_drops", "unresponsive_remote_events"})
    EXPECT_TRUE(defaultHwCounter("efa", on)) << on;
  for (const char* off : {"tx_bytes", "rx_bytes", "rdma_read_bytes", "send_wrs", "retrans_bytes",
                          "retrans_timeout_events", "rdma_read_wr_err", "rdma_write_wr_err",
                          "impaired_remote_conn_events", "cmds_err", "submitted_cmds"})
    EXPECT_FALSE(defaultHwCounter("efa", off)) << off;
}

// The counters each driver has (the kernel's efa driver in 6.x, mlx5 as gpud's H100 testdata
// lists them, the IBA PortCounters and PortCountersExtended, mlx4's counters_ext).
const std::vector<std::string> kEfaPort = {"tx_bytes",
                                           "tx_pkts",
                                           "rx_bytes",
                                           "rx_pkts",
                                           "rx_drops",
                                           "send_bytes",
                                           "send_wrs",
                                           "recv_bytes",
                                           "recv_wrs",
                                           "rdma_read_wrs",
                                           "rdma_read_bytes",
                                           "rdma_read_wr_err",
                                           "rdma_read_resp_bytes",
                                           "rdma_write_wrs",
                                           "rdma_write_bytes",
                                           "rdma_write_wr_err",
                                           "rdma_write_recv_bytes",
                                           "retrans_bytes",
                                           "retrans_pkts",
                                           "retrans_timeout_events",
                                           "unresponsive_remote_events",
                                           "impaired_remote_conn_events"};
const std::vector<std::string> kMlx5 = {"duplicate_request",
                                        "implied_nak_seq_err",
                                        "local_ack_timeout_err",
                                        "out_of_buffer",
                                        "out_of_sequence",
                                        "packet_seq_err",
                                        "req_cqe_error",
                                        "req_cqe_flush_error",
                                        "req_remote_access_errors",
                                        "req_remote_invalid_request",
                                        "resp_cqe_error",
                                        "resp_cqe_flush_error",
                                        "resp_local_length_error",
                                        "resp_remote_access_errors",
                                        "rnr_nak_retry_err",
                                        "roce_adp_retrans",
                                        "roce_adp_retrans_to",
                                        "roce_slow_restart",
                                        "roce_slow_restart_cnps",
                                        "roce_slow_restart_trans",
                                        "rx_atomic_requests",
                                        "rx_dct_connect",
                                        "rx_icrc_encapsulated",
                                        "rx_read_requests",
                                        "rx_write_requests",
                                        "np_cnp_sent",
                                        "rp_cnp_handled",
                                        "np_ecn_marked_roce_packets"};
const std::vector<std::string> kStandard = {"VL15_dropped",
                                            "excessive_buffer_overrun_errors",
                                            "link_downed",
                                            "link_error_recovery",
                                            "local_link_integrity_errors",
                                            "multicast_rcv_packets",
                                            "multicast_xmit_packets",
                                            "port_rcv_constraint_errors",
                                            "port_rcv_data",
                                            "port_rcv_errors",
                                            "port_rcv_packets",
                                            "port_rcv_remote_physical_errors",
                                            "port_rcv_switch_relay_errors",
                                            "port_xmit_constraint_errors",
                                            "port_xmit_data",
                                            "port_xmit_discards",
                                            "port_xmit_packets",
                                            "port_xmit_wait",
                                            "symbol_error",
                                            "unicast_rcv_packets",
                                            "unicast_xmit_packets",
                                            "port_rcv_discards",
                                            "port_xmit_data_64",
                                            "port_rcv_data_64",
                                            "port_xmit_packets_64",
                                            "port_rcv_packets_64",
                                            "port_unicast_xmit_packets",
                                            "port_unicast_rcv_packets",
                                            "port_multicast_xmit_packets",
                                            "port_multicast_rcv_packets"};

// The other counter of a send/receive pair, when the name has one side's word.
std::vector<std::string> partners(const std::string& name) {
  static const std::pair<const char*, const char*> kSides[] = {
      {"tx_", "rx_"}, {"xmit", "rcv"}, {"send", "recv"}, {"read", "write"}, {"req_", "resp_"}};
  std::vector<std::string> out;
  for (auto [a, b] : kSides) {
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      size_t at = name.find(from);
      if (at == std::string::npos) continue;
      std::string other = name;
      other.replace(at, std::string(from).size(), to);
      out.push_back(other);
    }
  }
  return out;
}

// Issue 25: EFA's tx_pkts was served by default and its rx_pkts not. Counters that dashboards
// draw against each other are on or off together, for every driver.
TEST(RenderMetricsTest, DefaultCountersComeInPairs) {
  auto check = [](const std::vector<std::string>& names, auto is_default, const char* what) {
    std::set<std::string> known(names.begin(), names.end());
    size_t pairs = 0;
    for (const auto& n : names) {
      for (const auto& other : partners(n)) {
        if (!known.count(other)) continue;
        ++pairs;
        EXPECT_EQ(is_default(n), is_default(other)) << what << ": " << n << " and " << other;
      }
    }
    return pairs;
  };
  EXPECT_GE(check(
                kEfaPort, [](const std::string& n) { return defaultHwCounter("efa", n); }, "efa"),
            10u);
  EXPECT_GE(check(
                kMlx5, [](const std::string& n) { return defaultHwCounter("mlx5", n); }, "mlx5"),
            4u);
  EXPECT_GE(check(
                kStandard, [](const std::string& n) { return defaultPortCounter(n); }, "counters"),
            10u);
}

// A p5's 32 EFA devices within the 400-series budget, with every EFA counter the kernel has:
// the default EFA counters are five per port.
TEST(RenderMetricsTest, EfaDefaultsPerPortAndDeviceCountersOptIn) {
  core::Value facts = collectFixture("p5_efa").facts;
  auto m = renderAll(facts);
  const auto* hw = family(m, "fabricwatch_rdma_port_hw_stat_total");
  ASSERT_NE(hw, nullptr);
  EXPECT_EQ(hw->metric.size(), 32u * 5);
  for (const char* stat : {"tx_pkts", "rx_pkts"})
    EXPECT_FALSE(std::isnan(
        value(m, "fabricwatch_rdma_port_hw_stat_total", {{"device", "rdmap19s0"}, {"stat", stat}})))
        << stat;
  EXPECT_EQ(family(m, "fabricwatch_rdma_device_hw_stat_total"), nullptr);
  // The device-wide counters by name, or all of them.
  auto one = renderAll(facts, {"fabricwatch_rdma_device_hw_stat_total{stat=\"cmds_err\"}"});
  const auto* dev = family(one, "fabricwatch_rdma_device_hw_stat_total");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->type, prometheus::MetricType::Counter);
  EXPECT_EQ(dev->metric.size(), 32u);
  EXPECT_EQ(value(one, "fabricwatch_rdma_device_hw_stat_total",
                  {{"device", "rdmap19s0"}, {"stat", "cmds_err"}}),
            0);
  auto all = renderAll(facts, {"fabricwatch_rdma_device_hw_stat_total"});
  EXPECT_EQ(family(all, "fabricwatch_rdma_device_hw_stat_total")->metric.size(), 32u * 12);
  // Rate-limited remotes, which no alert reads per device, by name.
  auto impaired = renderAll(
      facts, {"fabricwatch_rdma_port_hw_stat_total{stat=\"impaired_remote_conn_events\"}"});
  EXPECT_EQ(family(impaired, "fabricwatch_rdma_port_hw_stat_total")->metric.size(), 32u * 6);
  EXPECT_EQ(value(impaired, "fabricwatch_rdma_port_hw_stat_total",
                  {{"device", "rdmap19s0"}, {"stat", "impaired_remote_conn_events"}}),
            0);
}

TEST(RenderMetricsTest, AbsentFactsRenderNoSeries) {
  auto m = renderAll(core::Value::map());
  EXPECT_TRUE(m.empty());
}

}  // namespace
}  // namespace fabricwatch::facts
