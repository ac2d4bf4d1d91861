// The summary and verdict of an NCCL log as documents (`nccl-log --format json`, the facts) and
// as text (`nccl-log`).
#include <algorithm>
#include <sstream>

#include "nccl/log_advice.h"
#include "nccl/log_verdict.h"

namespace fabricwatch::nccl {
namespace {

std::string join(const std::set<std::string>& items, size_t max) {
  std::string out;
  size_t i = 0;
  for (const auto& it : items) {
    if (i++ == max) return out + ", ...";
    out += (out.empty() ? "" : ", ") + it;
  }
  return out;
}

core::Value nicValue(const Nic& n) {
  core::Value m = core::Value::map({{"net", n.net}, {"device", n.device}});
  if (n.net == "IB") {
    m["port"] = n.port;
    m["link"] = n.link;
    if (n.sharp) m["sharp"] = true;
  }
  if (!n.address.empty()) m["address"] = n.address;
  return m;
}

std::string nicName(const Nic& n) {
  return n.net == "IB" ? n.device + ":" + std::to_string(n.port) + "/" + n.link : n.device;
}

core::Value problemsValue(const Verdict& v) {
  core::Value list = core::Value::list();
  for (const auto& p : v.problems) {
    core::Value m = core::Value::map({{"severity", p.severity},
                                      {"code", p.code},
                                      {"message", p.message},
                                      {"evidence", p.evidence}});
    if (p.line > 0) m["line"] = p.line;
    list.push(std::move(m));
  }
  return list;
}

void setIf(core::Value& m, const char* key, const std::string& s) {
  if (!s.empty()) m[key] = s;
}

core::Value completionsValue(const LogSummary& s) {
  core::Value list = core::Value::list();
  for (const auto& c : s.completions) {
    core::Value m = core::Value::map({{"status", c.status},
                                      {"status_name", ibStatusName(c.status)},
                                      {"line", c.line},
                                      {"count", c.count}});
    if (c.vendor_err >= 0) m["vendor_err"] = c.vendor_err;
    setIf(m, "peer", c.peer);
    setIf(m, "hca", c.hca);
    setIf(m, "direction", c.direction);
    setIf(m, "local_gid", c.local_gid);
    setIf(m, "remote_gid", c.remote_gid);
    list.push(std::move(m));
  }
  return list;
}

}  // namespace

core::Value summaryValue(const LogSummary& s, const Verdict& v) {
  core::Value m = core::Value::map();
  setIf(m, "nccl_version", s.nccl_version);
  setIf(m, "nccl_cuda_version", s.nccl_cuda_version);
  setIf(m, "cuda_driver_version", s.cuda_driver_version);
  setIf(m, "wording_era", s.wording_era);
  core::Value hosts = core::Value::list();
  for (const auto& h : s.hosts) hosts.push(h);
  m["hosts"] = std::move(hosts);
  m["processes"] = s.processes.size();
  if (s.ranks > 0) m["ranks"] = s.ranks;
  if (s.nodes > 0) m["nodes"] = s.nodes;
  core::Value nets = core::Value::map();
  for (const auto& [n, c] : s.networks) nets[n] = c;
  m["networks"] = std::move(nets);
  if (!s.net_plugin_state.empty())
    m["net_plugin"] = core::Value::map({{"state", s.net_plugin_state}, {"name", s.net_plugin}});
  setIf(m, "collnet_plugin", s.collnet_plugin);
  core::Value nics = core::Value::list();
  for (const auto& n : s.nics) nics.push(nicValue(n));
  m["nics"] = std::move(nics);
  setIf(m, "oob", s.oob);
  if (!s.ofi_provider.empty() || !s.ofi_plugin_version.empty()) {
    core::Value ofi = core::Value::map();
    setIf(ofi, "provider", s.ofi_provider);
    setIf(ofi, "fabric", s.ofi_fabric);
    if (s.ofi_nics >= 0) ofi["nics"] = s.ofi_nics;
    setIf(ofi, "plugin", s.ofi_plugin_version);
    setIf(ofi, "libfabric_version", s.libfabric_version);
    m["ofi"] = std::move(ofi);
  }
  core::Value disabled = core::Value::list();
  for (const auto& d : s.gdr_disabled) disabled.push(d);
  core::Value gdr = core::Value::map({{"net_connections", s.net_channels},
                                      {"net_connections_gdr", s.net_channels_gdr},
                                      {"disabled", std::move(disabled)}});
  setIf(gdr, "disabled_reason", s.gdr_disabled_reason);
  if (s.dmabuf) gdr["dmabuf"] = true;
  m["gdr"] = std::move(gdr);
  core::Value tr = core::Value::map();
  for (const auto& [k, c] : s.transports) tr[k] = c;
  m["transports"] = std::move(tr);
  m["channels"] = s.channels;
  m["tree_channels"] = s.tree_channels;
  if (s.nvls_channels >= 0) m["nvls_channels"] = s.nvls_channels;
  m["connected_rings"] = s.connected_rings;
  m["connected_trees"] = s.connected_trees;
  m["init_complete"] = s.init_complete;
  core::Value env = core::Value::map();
  for (const auto& [k, val] : s.env) env[k] = val;
  m["env"] = std::move(env);
  if (!s.allreduce_algorithms.empty()) {
    core::Value algos = core::Value::map();
    for (const auto& [bytes, a] : s.allreduce_algorithms) algos[std::to_string(bytes)] = a;
    m["allreduce_algorithms"] = std::move(algos);
  }
  if (!s.completions.empty()) m["completion_errors"] = completionsValue(s);
  core::Value findings = core::Value::list();
  for (const auto& f : s.findings)
    findings.push(core::Value::map({{"severity", f.severity},
                                    {"kind", f.kind},
                                    {"text", f.text},
                                    {"line", f.line},
                                    {"count", f.count}}));
  m["findings"] = std::move(findings);
  m["input"] = core::Value::map({{"bytes", s.bytes},
                                 {"lines", s.lines},
                                 {"nccl_lines", s.nccl_lines},
                                 {"long_lines", s.long_lines},
                                 {"garbled_lines", s.garbled_lines},
                                 {"truncated", s.truncated},
                                 {"findings_dropped", s.findings_dropped}});
  m["verdict"] = core::Value::map({{"status", v.status},
                                   {"inter_node_transport", v.inter_node_transport},
                                   {"gdr", v.gdr},
                                   {"nvls", v.nvls},
                                   {"collnet", v.collnet},
                                   {"problems", problemsValue(v)}});
  return m;
}

std::string transportLabel(std::string_view t) {
  for (const char* k : {"ib", "roce", "efa", "ofi", "socket", "collnet", "other", "none"})
    if (t == k) return k;
  return "unknown";
}

std::string gdrLabel(std::string_view g) {
  for (const char* k : {"on", "off", "partial"})
    if (g == k) return k;
  return "unknown";
}

core::Value factsValue(const LogSummary& s, const Verdict& v) {
  core::Value m = core::Value::map({{"status", v.status},
                                    {"inter_node_transport", v.inter_node_transport},
                                    {"gdr", v.gdr},
                                    {"nvls", v.nvls},
                                    {"collnet", v.collnet},
                                    {"problems", problemsValue(v)}});
  setIf(m, "nccl_version", s.nccl_version);
  setIf(m, "cuda_driver_version", s.cuda_driver_version);
  setIf(m, "network", mainNetwork(s));
  if (s.net_plugin_state == "loaded") m["net_plugin"] = s.net_plugin;
  setIf(m, "ofi_provider", s.ofi_provider);
  core::Value nics = core::Value::list();
  for (const auto& n : s.nics) nics.push(nicName(n));
  m["nics"] = std::move(nics);
  core::Value tr = core::Value::map();
  for (const auto& [k, c] : s.transports) tr[k] = c;
  m["transports"] = std::move(tr);
  return m;
}

std::string renderText(const LogSummary& s, const Verdict& v) {
  std::ostringstream o;
  auto row = [&](const char* k, const std::string& val) {
    if (!val.empty())
      o << "  " << k << std::string(std::max<size_t>(1, 18 - std::string(k).size()), ' ') << val
        << "\n";
  };
  o << "NCCL log: " << s.lines << " lines, " << s.nccl_lines << " from NCCL";
  if (s.truncated) o << " (truncated: stopped reading after " << s.bytes << " bytes)";
  o << "\n";
  std::string version = s.nccl_version;
  if (!s.nccl_cuda_version.empty()) version += " (built for CUDA " + s.nccl_cuda_version + ")";
  if (version.empty() && !s.wording_era.empty()) version = "wording of " + s.wording_era + "+";
  row("NCCL", version);
  row("CUDA driver", s.cuda_driver_version);
  std::string procs;
  if (!s.processes.empty())
    procs = std::to_string(s.processes.size()) + " processes on " + std::to_string(s.hosts.size()) +
            " hosts (" + join(s.hosts, 8) + ")";
  if (s.ranks > 0) procs += (procs.empty() ? "" : ", ") + std::to_string(s.ranks) + " ranks";
  if (s.nodes > 0) procs += ", " + std::to_string(s.nodes) + " nodes";
  row("Processes", procs);
  std::string nets;
  for (const auto& [n, c] : s.networks)
    nets += (nets.empty() ? "" : ", ") + n + " (" + std::to_string(c) + ")";
  row("Network", nets);
  if (s.net_plugin_state == "loaded") row("Net plugin", "loaded: " + s.net_plugin);
  if (s.net_plugin_state == "not_found") row("Net plugin", "none (" + s.net_plugin + ")");
  row("CollNet plugin", s.collnet_plugin);
  std::set<std::string> nics;
  for (const auto& n : s.nics) nics.insert(nicName(n));
  row("NICs", join(nics, 16));
  row("Bootstrap", s.oob);
  if (!s.ofi_provider.empty() || !s.ofi_plugin_version.empty()) {
    std::string ofi = s.ofi_provider.empty() ? "" : "provider " + s.ofi_provider;
    if (s.ofi_nics >= 0) ofi += " (" + std::to_string(s.ofi_nics) + " NICs)";
    if (!s.ofi_plugin_version.empty()) ofi += (ofi.empty() ? "" : ", ") + s.ofi_plugin_version;
    if (!s.libfabric_version.empty()) ofi += ", libfabric " + s.libfabric_version;
    row("OFI", ofi);
  }
  std::string tr;
  for (const auto& [k, c] : s.transports)
    tr += (tr.empty() ? "" : ", ") + k + " " + std::to_string(c);
  row("Transports", tr);
  if (s.net_channels > 0)
    row("GPUDirect RDMA", std::to_string(s.net_channels_gdr) + " of " +
                              std::to_string(s.net_channels) + " NET connections with GDRDMA");
  if (!s.gdr_disabled.empty()) row("GDR disabled for", join(s.gdr_disabled, 4));
  std::string graph;
  if (s.channels > 0) graph = std::to_string(s.channels) + " ring channels";
  if (s.tree_channels > 0)
    graph += (graph.empty() ? "" : ", ") + std::to_string(s.tree_channels) + " tree channels";
  if (s.nvls_channels >= 0)
    graph += (graph.empty() ? "" : ", ") + std::to_string(s.nvls_channels) + " NVLS channels";
  row("Graph", graph);
  std::string env;
  for (const auto& [k, val] : s.env) env += (env.empty() ? "" : " ") + k + "=" + val;
  row("Environment", env);
  o << "\nVerdict: "
    << (v.status == "ok"        ? "OK"
        : v.status == "problem" ? "PROBLEM"
                                : "UNKNOWN")
    << "\n  inter-node transport: " << v.inter_node_transport
    << "\n  GPUDirect RDMA:       " << v.gdr << "\n  NVLS:                 " << v.nvls
    << "\n  CollNet/SHARP:        " << v.collnet << "\n";
  for (const auto& p : v.problems) {
    o << "  " << p.severity << ": " << p.message << "\n";
    if (!p.evidence.empty()) o << "      " << p.evidence << "\n";
  }
  return o.str();
}

}  // namespace fabricwatch::nccl
