#include "nccl/log_verdict.h"

#include <algorithm>
#include <sstream>

namespace fabricwatch::nccl {
namespace {

bool startsWith(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

// The network most processes chose ("Using network X").
std::string mainNetwork(const LogSummary& s) {
  std::string best;
  uint64_t n = 0;
  for (const auto& [name, count] : s.networks) {
    if (count > n) best = name, n = count;
  }
  return best;
}

// NET/<name> or a network name -> the transport class.
std::string classify(const std::string& name, const LogSummary& s) {
  std::string n = startsWith(name, "NET/") ? name.substr(4) : name;
  if (startsWith(name, "COLLNET/")) return "collnet";
  if (n == "Socket") return "socket";
  if (startsWith(n, "IB")) {  // IB, IBext, IBext_v8 (HPC-X's plugin drives verbs too)
    bool ib = false, roce = false;
    for (const auto& nic : s.nics) {
      if (nic.net != "IB") continue;
      (nic.link == "RoCE" ? roce : ib) = true;
    }
    return roce && !ib ? "roce" : "ib";
  }
  if (n.find("Libfabric") != std::string::npos || startsWith(n, "OFI"))
    return s.ofi_provider == "efa" ? "efa" : "ofi";
  return "other";
}

std::string join(const std::set<std::string>& items, size_t max) {
  std::string out;
  size_t i = 0;
  for (const auto& it : items) {
    if (i++ == max) return out + ", ...";
    out += (out.empty() ? "" : ", ") + it;
  }
  return out;
}

// Why NCCL may have fallen back to sockets, from what the log says.
std::string fallbackHints(const LogSummary& s) {
  std::string hints;
  for (const auto& f : s.findings) {
    if (f.kind == "ibverbs_missing")
      hints +=
          " libibverbs could not be loaded (no rdma-core in the image, or not on the library "
          "path).";
    if (f.kind == "ib_no_device")
      hints +=
          " NCCL found no usable RDMA device (no /dev/infiniband in the container, NCCL_IB_HCA "
          "naming no device, or ports down).";
    if (f.kind == "symbol_version")
      hints += " A library version mismatch stopped a provider from loading (" + f.text + ").";
    if (f.kind == "ofi_init") hints += " aws-ofi-nccl failed to initialize (" + f.text + ").";
  }
  if (s.net_plugin_state == "not_found" && s.ofi_provider.empty() && s.nics.size() > 0 &&
      std::all_of(s.nics.begin(), s.nics.end(), [](const Nic& n) { return n.net == "Socket"; }))
    hints += " No net plugin was loaded (" + s.net_plugin +
             "): on EFA nodes aws-ofi-nccl was not found.";
  if (s.env.count("NCCL_IB_DISABLE") && s.env.at("NCCL_IB_DISABLE") == "1")
    hints += " NCCL_IB_DISABLE=1 is set.";
  return hints;
}

Problem findingProblem(const Finding& f) {
  std::string count = f.count > 1 ? " (" + std::to_string(f.count) + " lines)" : "";
  std::string ev = "line " + std::to_string(f.line) + count + ": " + f.text;
  if (f.kind == "ibv_call")
    return {f.severity,
            "an RDMA verbs call failed, so NCCL could not connect over the fabric: check that "
            "NCCL_IB_GID_INDEX selects the RoCE v2 GID of a routable address on every port, that "
            "NCCL_IB_HCA names ports that are up, and that the NICs can reach each other (rails, "
            "switch configuration; NCCL_CROSS_NIC=0 on rail-only fabrics)",
            ev};
  if (f.kind == "symbol_version")
    return {f.severity,
            "a library version mismatch: the container's libraries do not match the providers "
            "loaded with them (rdma-core's IBVERBS_PRIVATE_*, libefa's EFA_*, glibc); use the "
            "rdma-core/EFA stack that matches the host, or the one the platform mounts",
            ev};
  if (f.kind == "ofi_init")
    return {f.severity,
            "aws-ofi-nccl failed to initialize, so NCCL cannot use EFA: check that the EFA "
            "devices are in the container (/dev/infiniband/uverbs*, vpc.amazonaws.com/efa), that "
            "libfabric is 1.22 or later and FI_PROVIDER is efa",
            ev};
  if (f.kind == "cuda") return {f.severity, "a CUDA call failed inside NCCL", ev};
  if (f.kind == "nccl_error")
    return {f.severity, "an NCCL call failed (the first error in the log is the cause)", ev};
  if (f.kind == "ib_no_device")
    return {f.severity, "NCCL found no usable RDMA device and could only use sockets", ev};
  if (f.kind == "ibverbs_missing")
    return {f.severity, "libibverbs could not be loaded: NCCL cannot use InfiniBand or RoCE", ev};
  if (f.kind == "ibverbs_driver")
    return {"info", "libibverbs could not load a provider (harmless unless it is the NIC's own)",
            ev};
  return {f.severity, "NCCL warned", ev};
}

}  // namespace

Verdict judge(const LogSummary& s) {
  Verdict v;
  if (s.empty()) {
    v.status = "unknown";
    v.inter_node_transport = "unknown";
    v.gdr = "unknown";
    v.problems.push_back({"critical",
                          "no NCCL log lines: run with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS "
                          "including INIT,NET) so that NCCL says what it chose",
                          std::to_string(s.lines) + " lines read"});
    return v;
  }
  // The transport of inter-node connections, from the channel lines.
  std::map<std::string, uint64_t> classes;
  std::string socket_evidence;
  for (const auto& [key, count] : s.transports) {
    if (!startsWith(key, "NET/") && !startsWith(key, "COLLNET/")) continue;
    std::string c = classify(key, s);
    classes[c] += count;
    if (c == "socket") socket_evidence = std::to_string(count) + " channel connections via " + key;
  }
  if (!classes.empty()) {
    if (classes.count("socket")) {
      v.inter_node_transport = "socket";
    } else {
      auto best = std::max_element(classes.begin(), classes.end(),
                                   [](auto& a, auto& b) { return a.second < b.second; });
      v.inter_node_transport = best->first;
    }
  } else if (!s.transports.empty() || s.nodes == 1) {
    v.inter_node_transport = "none";
  } else if (s.nodes > 1 && !s.networks.empty()) {
    v.inter_node_transport = classify(mainNetwork(s), s);
    if (v.inter_node_transport == "socket")
      socket_evidence =
          "Using network " + mainNetwork(s) + " (" + std::to_string(s.nodes) + " nodes)";
  } else {
    v.inter_node_transport = "unknown";
  }

  if (s.net_channels > 0) {
    v.gdr = s.net_channels_gdr == s.net_channels ? "on"
            : s.net_channels_gdr == 0            ? "off"
                                                 : "partial";
  } else if (!s.gdr_disabled.empty()) {
    v.gdr = "off";
  } else if (s.gdr_enabled_lines > 0) {
    v.gdr = "on";
  } else {
    v.gdr = "unknown";
  }

  if (v.inter_node_transport == "socket") {
    v.problems.push_back({"critical",
                          "inter-node traffic used TCP sockets (NET/Socket), not RDMA: expect "
                          "5-10x lower bandwidth." +
                              fallbackHints(s),
                          socket_evidence});
  } else if (s.networks.count("Socket") && s.networks.size() == 1) {
    v.problems.push_back({"warning",
                          "NCCL chose the Socket network: traffic between nodes would use TCP, "
                          "not RDMA." +
                              fallbackHints(s),
                          "Using network Socket"});
  }
  if (s.networks.size() > 1) {
    std::string list;
    for (const auto& [n, c] : s.networks)
      list += (list.empty() ? "" : ", ") + n + " (" + std::to_string(c) + ")";
    v.problems.push_back({"critical",
                          "processes chose different networks; the job runs at the speed of the "
                          "slowest: compare the environment and devices of the nodes",
                          "Using network: " + list});
  }
  // GPUDirect RDMA is a property of RDMA transports: over sockets the problem above says it all.
  if ((v.gdr == "off" || v.gdr == "partial") && v.inter_node_transport != "socket") {
    std::string ev = s.net_channels > 0 ? std::to_string(s.net_channels_gdr) + " of " +
                                              std::to_string(s.net_channels) +
                                              " NET channel connections with /GDRDMA"
                                        : "";
    if (!s.gdr_disabled.empty())
      ev += (ev.empty() ? "" : "; ") + std::string("GPU Direct RDMA Disabled for ") +
            join(s.gdr_disabled, 4);
    v.problems.push_back({"warning",
                          "GPUDirect RDMA was " + v.gdr +
                              ": NIC traffic is staged through host memory. Load nvidia_peermem "
                              "(or use DMA-BUF with the open GPU kernel modules), keep GPUs and "
                              "NICs under one PCIe switch, and check NCCL_NET_GDR_LEVEL",
                          ev});
  }
  for (const auto& f : s.findings) v.problems.push_back(findingProblem(f));
  if (s.truncated)
    v.problems.push_back({"info", "the log was longer than the parser reads; the rest was skipped",
                          std::to_string(s.lines) + " lines read"});
  v.status = "ok";
  for (const auto& p : v.problems) {
    if (p.severity == "critical" || p.severity == "warning") v.status = "problem";
  }
  return v;
}

namespace {

core::Value nicValue(const Nic& n) {
  core::Value m = core::Value::map({{"net", n.net}, {"device", n.device}});
  if (n.net == "IB") {
    m["port"] = n.port;
    m["link"] = n.link;
  }
  if (!n.address.empty()) m["address"] = n.address;
  return m;
}

std::string nicName(const Nic& n) {
  return n.net == "IB" ? n.device + ":" + std::to_string(n.port) + "/" + n.link : n.device;
}

core::Value problemsValue(const Verdict& v) {
  core::Value list = core::Value::list();
  for (const auto& p : v.problems)
    list.push(core::Value::map(
        {{"severity", p.severity}, {"message", p.message}, {"evidence", p.evidence}}));
  return list;
}

void setIf(core::Value& m, const char* key, const std::string& s) {
  if (!s.empty()) m[key] = s;
}

}  // namespace

core::Value summaryValue(const LogSummary& s, const Verdict& v) {
  core::Value m = core::Value::map();
  setIf(m, "nccl_version", s.nccl_version);
  setIf(m, "nccl_cuda_version", s.nccl_cuda_version);
  setIf(m, "cuda_driver_version", s.cuda_driver_version);
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
  m["gdr"] = core::Value::map({{"net_connections", s.net_channels},
                               {"net_connections_gdr", s.net_channels_gdr},
                               {"disabled", std::move(disabled)}});
  core::Value tr = core::Value::map();
  for (const auto& [k, c] : s.transports) tr[k] = c;
  m["transports"] = std::move(tr);
  m["channels"] = s.channels;
  m["tree_channels"] = s.tree_channels;
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
  core::Value findings = core::Value::list();
  for (const auto& f : s.findings)
    findings.push(core::Value::map({{"severity", f.severity},
                                    {"kind", f.kind},
                                    {"text", f.text},
                                    {"line", f.line},
                                    {"count", f.count}}));
  m["findings"] = std::move(findings);
  m["input"] = core::Value::map({{"lines", s.lines},
                                 {"nccl_lines", s.nccl_lines},
                                 {"long_lines", s.long_lines},
                                 {"garbled_lines", s.garbled_lines},
                                 {"truncated", s.truncated},
                                 {"findings_dropped", s.findings_dropped}});
  m["verdict"] = core::Value::map({{"status", v.status},
                                   {"inter_node_transport", v.inter_node_transport},
                                   {"gdr", v.gdr},
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
  if (s.truncated) o << " (truncated)";
  o << "\n";
  std::string version = s.nccl_version.empty() ? "" : s.nccl_version;
  if (!s.nccl_cuda_version.empty()) version += " (built for CUDA " + s.nccl_cuda_version + ")";
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
  row("Graph", graph);
  std::string env;
  for (const auto& [k, val] : s.env) env += (env.empty() ? "" : " ") + k + "=" + val;
  row("Environment", env);
  o << "\nVerdict: "
    << (v.status == "ok"        ? "OK"
        : v.status == "problem" ? "PROBLEM"
                                : "UNKNOWN")
    << "\n  inter-node transport: " << v.inter_node_transport
    << "\n  GPUDirect RDMA:       " << v.gdr << "\n";
  for (const auto& p : v.problems) {
    o << "  " << p.severity << ": " << p.message << "\n";
    if (!p.evidence.empty()) o << "      " << p.evidence << "\n";
  }
  return o.str();
}

}  // namespace fabricwatch::nccl
