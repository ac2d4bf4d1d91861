#include "facts/topology_source.h"

#include <unistd.h>

#include "config/topology_labels.h"
#include "core/host_fs.h"
#include "core/snapshot.h"
#include "facts/fact_reader.h"
#include "facts/lldp_client.h"
#include "facts/topology_parse.h"

extern char** environ;

namespace fabricwatch::facts {

TopologyOptions TopologyOptions::from(const config::Config::Topology& t) {
  TopologyOptions o;
  o.labels = t.labels;
  o.labels_file = t.labels_file;
  o.file_label_prefixes = t.file_label_prefixes;
  o.lldpd_socket = t.lldpd_socket;
  o.lldp_timeout = t.lldp_timeout;
  for (char** e = environ; e && *e; ++e)
    if (std::string_view(*e).rfind(config::kTopologyEnvPrefix, 0) == 0) o.environment.push_back(*e);
  return o;
}

namespace {

// Every RDMA port: its link layer, and for InfiniBand its subnet prefix, LID and SM LID, for
// Ethernet (RoCE) the interface that carries it (GID 0's netdev), which lldpd names.
std::vector<TopologyNic> readRdmaPorts(FactReader& r) {
  std::vector<TopologyNic> out;
  DirReader cls(r, "/sys/class/infiniband");
  if (!cls.isOpen()) return out;
  for (const auto& dev : cls.list()) {
    DirReader ports = cls.sub(dev + "/ports");
    if (!ports.isOpen()) continue;
    for (const auto& p : ports.list()) {
      auto num = parseInteger(p);
      if (!num) continue;
      DirReader port = ports.sub(p);
      if (!port.isOpen()) continue;
      TopologyNic nic;
      nic.device = dev;
      nic.port = *num;
      nic.link_layer = port.line("link_layer").value_or("");
      if (nic.link_layer == "InfiniBand") {
        if (auto gid = port.line("gids/0", true)) nic.subnet_prefix = subnetPrefixOfGid(*gid);
        nic.lid = port.integer("lid", true);
        nic.sm_lid = port.integer("sm_lid", true);
      } else if (nic.link_layer == "Ethernet") {
        nic.interface = port.line("gid_attrs/ndevs/0", true).value_or("");
      }
      out.push_back(std::move(nic));
    }
  }
  return out;
}

}  // namespace

bool topologyCanFindAnything(const TopologyOptions& options, const std::string& rootfs) {
  if (!options.labels.empty() || !options.environment.empty() || !options.labels_file.empty())
    return true;
  core::HostFs fs(rootfs);
  if (!options.lldpd_socket.empty() && fs.exists(options.lldpd_socket)) return true;
  core::Collection scratch;
  FactReader r(fs, scratch);
  for (const auto& nic : readRdmaPorts(r))
    if (nic.link_layer == "InfiniBand" || nic.link_layer == "Ethernet") return true;
  return false;
}

core::Collection TopologySource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  core::Value topology = core::Value::map();

  std::vector<std::pair<std::string, std::string>> from_file;
  if (!options_.labels_file.empty()) {
    // A path of this machine (a volume of the pod), read on every collection: a regular file
    // of at most 64 KiB (a FIFO is refused, so it never blocks).
    auto read = core::readRegularFile(options_.labels_file, 64 * 1024);
    if (read) {
      std::vector<std::string> problems;
      from_file = topologyLabelsFromFile(*read, options_.file_label_prefixes, &problems);
      for (auto& p : problems) c.addError(options_.labels_file + ": " + p);
    } else {
      c.addError(options_.labels_file + ": " + read.error().message);
    }
  }
  TopologyLabels labels = resolveTopologyLabels(options_.labels, options_.environment, from_file);
  for (auto& p : labels.problems) c.addError(std::move(p));
  core::Value lm = core::Value::map();
  for (const auto& [k, v] : labels.labels) lm[k] = v;
  topology["labels"] = std::move(lm);

  core::Value lldp = core::Value::map();
  LldpAnswer answer;
  if (!options_.lldpd_socket.empty()) {
    LldpLimits limits;
    limits.timeout = options_.lldp_timeout;
    answer = queryLldpd(fs.path(options_.lldpd_socket), limits);
    lldp["socket"] = options_.lldpd_socket;
  }
  lldp["status"] = lldpStatusName(answer.status);
  if (!answer.error.empty()) {
    lldp["error"] = answer.error;
    c.addError("lldpd (" + options_.lldpd_socket + "): " + answer.error);
  }
  if (answer.truncated)
    c.addTruncated(options_.lldpd_socket, "more LLDP interfaces or neighbours than are kept");
  bool answered = answer.status == LldpAnswer::Status::kOk;
  if (answered) lldp["interfaces"] = static_cast<int64_t>(answer.interfaces.size());
  topology["lldp"] = std::move(lldp);

  core::Value nics = core::Value::list();
  for (const auto& nic : joinLldp(readRdmaPorts(r), answered ? &answer : nullptr))
    nics.push(nicFacts(nic));
  topology["nics"] = std::move(nics);
  c.facts["topology"] = std::move(topology);
  return c;
}

namespace {

std::string text(const core::Value& m, std::string_view key) {
  const core::Value* v = m.find(key);
  if (!v) return "";
  if (v->isString()) return v->asString();
  if (v->isInt()) return std::to_string(v->asInt());
  return "";
}

}  // namespace

void TopologySource::renderMetrics(const core::Snapshot& snapshot,
                                   core::MetricFamilies& out) const {
  if (const core::Value* labels = snapshot.facts.findPath("topology.labels");
      labels && labels->isMap() && labels->size() > 0) {
    auto f = core::gaugeFamily(
        "fabricwatch_topology_info",
        "Where the node sits, as the operator labels it ([topology.labels], "
        "FABRICWATCH_TOPOLOGY_<NAME>; constant 1): one label per topology label.");
    core::LabelPairs pairs;
    for (const auto& [k, v] : labels->asMap())
      if (v.isString()) pairs.emplace_back(k, v.asString());
    core::addSample(f, pairs, 1);
    out.push_back(std::move(f));
  }
  if (const core::Value* status = snapshot.facts.findPath("topology.lldp.status");
      status && status->isString() && status->asString() != "absent") {
    auto f = core::gaugeFamily("fabricwatch_topology_lldpd_up",
                               "1 when the host's lldpd answered, 0 when its socket exists but "
                               "it did not (timeout, refused answer, no liblldpctl here); absent "
                               "without lldpd.");
    core::addSample(f, {}, status->asString() == "ok");
    out.push_back(std::move(f));
  }
  const core::Value* nics = snapshot.facts.findPath("topology.nics");
  if (!nics || !nics->isList()) return;
  auto f = core::gaugeFamily(
      "fabricwatch_topology_nic_info",
      "Where a NIC is plugged in (constant 1): the LLDP neighbour of an Ethernet or RoCE NIC "
      "(one series per neighbour), or an InfiniBand port's subnet prefix, LID and SM LID; only "
      "for NICs where one of them is known.");
  for (const auto& nic : nics->asList()) {
    core::LabelPairs base = {{"device", text(nic, "device")},
                             {"port", nic.find("device") ? text(nic, "port") : ""},
                             {"interface", text(nic, "interface")}};
    auto sample = [&](const core::Value* n) {
      core::LabelPairs l = base;
      l.emplace_back("switch", n ? text(*n, "switch") : "");
      l.emplace_back("switch_id", n ? text(*n, "switch_id") : "");
      l.emplace_back("switch_port", n ? text(*n, "switch_port") : "");
      l.emplace_back("switch_port_descr", n ? text(*n, "switch_port_descr") : "");
      l.emplace_back("subnet_prefix", text(nic, "subnet_prefix"));
      l.emplace_back("lid", text(nic, "lid"));
      l.emplace_back("sm_lid", text(nic, "sm_lid"));
      core::addSample(f, l, 1);
    };
    const core::Value* neighbors = nic.find("neighbors");
    if (neighbors && neighbors->isList() && !neighbors->asList().empty())
      for (const auto& n : neighbors->asList()) sample(&n);
    else if (nic.find("subnet_prefix"))
      sample(nullptr);
  }
  if (!f.metric.empty()) out.push_back(std::move(f));
}

}  // namespace fabricwatch::facts
