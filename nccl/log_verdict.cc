// The verdict on a parsed NCCL log: what NCCL chose (the inter-node transport, GPUDirect RDMA,
// NVLS, CollNet), stated the same way whatever the log holds, and the problems, causes before
// consequences. The words of each problem are in log_advice.cc.
#include "nccl/log_verdict.h"

#include <algorithm>

#include "nccl/log_advice.h"
#include "nccl/log_text.h"

namespace fabricwatch::nccl {
namespace {

using namespace text;

bool isIb(const std::string& n) { return startsWith(n, "IB"); }

bool hasKind(const LogSummary& s, std::string_view kind) {
  return std::any_of(s.findings.begin(), s.findings.end(),
                     [&](const Finding& f) { return f.kind == kind; });
}

// RoCE when the NICs say so, or when nothing lists NICs but NCCL printed RoCE GIDs.
bool roceOnly(const LogSummary& s) {
  bool ib = false, roce = false;
  for (const auto& nic : s.nics) {
    if (nic.net != "IB") continue;
    (nic.link == "RoCE" ? roce : ib) = true;
  }
  if (ib || roce) return roce && !ib;
  if (!s.gids.empty()) return true;
  for (const auto& c : s.completions)
    if (!c.local_gid.empty()) return true;
  for (const auto& f : s.findings)
    if (f.kind == "ibv_call" && contains(f.text, "GID ::ffff:")) return true;
  return false;
}

// NET/<name> or a network name -> the transport class.
std::string classify(const std::string& name, const LogSummary& s) {
  std::string n = startsWith(name, "NET/") ? name.substr(4) : name;
  if (startsWith(name, "COLLNET/")) return "collnet";
  if (n == "Socket") return "socket";
  if (isIb(n)) return roceOnly(s) ? "roce" : "ib";  // IB, IBext, IBext_v8 drive verbs too
  if (contains(n, "Libfabric") || startsWith(n, "OFI"))
    return s.ofi_provider == "efa" ? "efa" : "ofi";
  return "other";
}

// Signs that traffic crossed (or tried to cross) a network.
bool multiNode(const LogSummary& s) {
  if (s.nodes > 1 || s.net_channels > 0 || s.hosts.size() > 1 || !s.completions.empty())
    return true;
  if (s.local_ranks > 0 && s.ranks > s.local_ranks) return true;
  for (const auto& f : s.findings)
    if (f.kind == "ibv_call" || f.kind == "ofi_request" || f.kind == "ofi_rails") return true;
  return false;
}

// One node: said by NCCL (nNodes 1, nranks 1, all ranks local) or shown by the log (one host
// whose choice of network is in the excerpt, with every rank it names seen there). An excerpt
// of one host's errors or bootstrap alone is not a single-node job: it may be one node's view
// of many.
bool singleNode(const LogSummary& s) {
  if (multiNode(s)) return false;
  if (s.nodes == 1 || s.ranks == 1 || (s.ranks > 0 && s.local_ranks == s.ranks)) return true;
  bool setup_seen =
      !s.networks.empty() || !s.nics.empty() || !s.transports.empty() || hasKind(s, "ib_no_device");
  if (s.hosts.size() != 1 || !setup_seen) return false;
  int64_t seen = static_cast<int64_t>(std::max(s.processes.size(), s.devices.size()));
  return s.ranks == 0 || s.ranks <= seen;
}

std::string decideTransport(const LogSummary& s, bool single, std::string& socket_evidence) {
  std::map<std::string, uint64_t> classes;
  for (const auto& [key, count] : s.transports) {
    if (!startsWith(key, "NET/") && !startsWith(key, "COLLNET/")) continue;
    std::string c = classify(key, s);
    classes[c] += count;
    if (c == "socket")
      socket_evidence = "line " + std::to_string(s.first_net_channel_line) + ": " +
                        std::to_string(count) + " channel connections via " + key;
  }
  if (!classes.empty()) {
    if (classes.count("socket")) return "socket";
    return std::max_element(classes.begin(), classes.end(),
                            [](auto& a, auto& b) { return a.second < b.second; })
        ->first;
  }
  if (!s.transports.empty() || single) return "none";
  if (!s.networks.empty()) {
    std::string t = classify(mainNetwork(s), s);
    if (t == "socket")
      socket_evidence =
          "line " + std::to_string(s.network_line) + ": Using network " + mainNetwork(s);
    return t;
  }
  // NCCL 2.4 said no "Using network": no RDMA device and socket NICs on several hosts is TCP.
  bool socket_nics =
      std::any_of(s.nics.begin(), s.nics.end(), [](const Nic& n) { return n.net == "Socket"; });
  if (socket_nics && s.hosts.size() > 1 && hasKind(s, "ib_no_device") &&
      s.net_plugin_state != "loaded") {
    const Nic& nic =
        *std::find_if(s.nics.begin(), s.nics.end(), [](const Nic& n) { return n.net == "Socket"; });
    socket_evidence = "line " + std::to_string(s.socket_nic_line) + ": NET/Socket : Using " +
                      nic.device + ":" + nic.address + " (no RDMA device found)";
    return "socket";
  }
  // The errors show which network carried the traffic.
  if (!s.completions.empty() || hasKind(s, "ibv_call")) return roceOnly(s) ? "roce" : "unknown";
  for (sv k : {"ofi_request", "ofi_rails", "ofi_mr"})
    if (hasKind(s, k)) return s.ofi_provider == "efa" ? "efa" : "ofi";
  return "unknown";
}

std::string decideGdr(const LogSummary& s) {
  if (s.net_channels > 0)
    return s.net_channels_gdr == s.net_channels ? "on"
           : s.net_channels_gdr == 0            ? "off"
                                                : "partial";
  if (!s.gdr_disabled.empty()) return "off";
  if (s.gdr_enabled_lines > 0) return "on";
  return "unknown";
}

// Why NCCL may have fallen back to sockets, from what the log says.
std::string fallbackHints(const LogSummary& s) {
  std::string hints;
  for (const auto& f : s.findings) {
    if (f.kind == "ibverbs_missing")
      hints +=
          " libibverbs could not be loaded (no rdma-core in the image, or not on the "
          "library path).";
    if (f.kind == "ib_no_device")
      hints +=
          " NCCL found no usable RDMA device (no /dev/infiniband in the container, "
          "NCCL_IB_HCA naming no device, or ports down).";
    if (f.kind == "symbol_version")
      hints += " A library version mismatch stopped a provider from loading (" + f.text + ").";
  }
  if (s.net_plugin_state == "not_found" && s.ofi_provider.empty() &&
      std::all_of(s.nics.begin(), s.nics.end(), [](const Nic& n) { return n.net == "Socket"; }))
    hints += " No net plugin was loaded (" + s.net_plugin +
             "): on EFA nodes aws-ofi-nccl was not found.";
  if (s.env.count("NCCL_IB_DISABLE") && s.env.at("NCCL_IB_DISABLE") == "1")
    hints += " NCCL_IB_DISABLE=1 is set.";
  return hints;
}

// A WARN or completion error on the one kind of port that does not belong: a RoCE port among
// InfiniBand ports. Returns the finding it explains (line), 0 when none.
void roceAmongIb(const LogSummary& s, std::vector<Problem>& out, std::set<uint64_t>& consumed) {
  std::vector<const Nic*> ib, roce;
  for (const auto& n : s.nics) {
    if (n.net != "IB") continue;
    (n.link == "RoCE" ? roce : ib).push_back(&n);
  }
  if (roce.empty() || ib.size() <= roce.size()) return;
  for (const auto* n : roce) {
    for (const auto& f : s.findings) {
      bool on_it =
          (f.net_dev >= 0 && f.net_dev == n->index) || contains(f.text, "dev " + n->device + ":");
      if (!on_it || (f.kind != "ibv_call" && f.kind != "ib_async_event")) continue;
      std::string name = n->device + ":" + std::to_string(n->port);
      std::string ev = evidenceAt(f.line, f.count, f.text);
      if (f.channel_line)
        ev += "; line " + std::to_string(f.channel_line) + ": its channel via NET/IB/" +
              std::to_string(n->index);
      out.push_back({"critical", "roce_port_among_ib",
                     name +
                         " is a RoCE (Ethernet) port among InfiniBand ports, and the "
                         "connection NCCL put on it (NET/IB/" +
                         std::to_string(n->index) +
                         ") failed: RoCE and InfiniBand ports cannot reach each other. Set "
                         "NCCL_IB_HCA to the InfiniBand ports only (or ^" +
                         n->device + " to leave it out)",
                     ev, f.line});
      consumed.insert(f.line);
      return;
    }
  }
  std::string names;
  for (const auto* n : roce)
    names += (names.empty() ? "" : ", ") + n->device + ":" + std::to_string(n->port);
  out.push_back({"warning", "roce_port_among_ib",
                 "NCCL uses RoCE (Ethernet) port" + std::string(roce.size() > 1 ? "s " : " ") +
                     names +
                     " among InfiniBand ports: a ring or tree placed there cannot reach the "
                     "InfiniBand ports of other nodes. Set NCCL_IB_HCA to the InfiniBand ports "
                     "only (or exclude these with ^)",
                 "line " + std::to_string(roce.front()->line) + ": NET/IB : Using ... " + names,
                 roce.front()->line});
}

void gidProblems(const LogSummary& s, std::vector<Problem>& out) {
  for (const auto& g : s.gids) {
    if (lower(g.prefix) != "80fe") continue;
    std::string set = s.env.count("NCCL_IB_GID_INDEX") ? s.env.at("NCCL_IB_GID_INDEX") : "";
    std::string ev = evidenceAt(g.line, 1, g.text);
    if (!set.empty())
      out.push_back({"critical", "gid_link_local",
                     "NCCL_IB_GID_INDEX=" + set + " selects GID " + std::to_string(g.index) +
                         ", a link-local fe80:: address (NCCL prints it byte-swapped as 80FE/...): "
                         "link-local GIDs are not routable, so RoCE v2 traffic between hosts "
                         "fails. Set NCCL_IB_GID_INDEX to the RoCE v2 GID of the port's routable "
                         "address (show_gids; often 3), or leave it unset for NCCL 2.19+ to pick",
                     ev + "; line " + std::to_string(s.env_lines.at("NCCL_IB_GID_INDEX")) +
                         ": NCCL_IB_GID_INDEX set by environment to " + set,
                     g.line});
    else
      out.push_back({"warning", "gid_link_local",
                     "NCCL uses a link-local fe80:: GID (printed byte-swapped as 80FE/...), which "
                     "is not routable between RoCE v2 hosts: the port has no routable address, or "
                     "set NCCL_IB_GID_INDEX to the GID of one (show_gids)",
                     ev, g.line});
    return;
  }
}

Problem traceProblem(const Finding& f, const LogSummary& s) {
  std::string ev = evidenceAt(f.line, f.count, f.text);
  std::string vars;
  for (const char* k : {"NCCL_IB_ADDR_FAMILY", "NCCL_IB_ADDR_RANGE", "NCCL_IB_ROCE_VERSION_NUM",
                        "NCCL_IB_GID_INDEX"})
    if (s.env.count(k)) vars += (vars.empty() ? "" : ", ") + std::string(k) + "=" + s.env.at(k);
  if (contains(f.text, "net_ib.cc") && !vars.empty())
    return {"critical", "ib_gid_selection",
            "NCCL's InfiniBand transport failed choosing a GID right after reading " + vars +
                ": no GID of the port matches them (the address family, the range or the RoCE "
                "version): check show_gids against these settings, or unset them",
            ev, f.line};
  static const char* kCodes[] = {"ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
                                 "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                 "ncclRemoteError",   "ncclInProgress"};
  int64_t code = 0;
  if (size_t a = f.text.find(" -> "); a != std::string::npos)
    code = toInt(sv(f.text).substr(a + 4)).value_or(0);
  std::string name = code >= 0 && code < 8 ? kCodes[code] : "error " + std::to_string(code);
  return {"critical", "nccl_trace",
          "an NCCL call failed with " + name + " at " + f.text.substr(0, f.text.find(" -> ")) +
              " and the job aborted, with no WARN saying why: rerun with NCCL_DEBUG=INFO "
              "NCCL_DEBUG_SUBSYS=INIT,NET to see the failing call",
          ev, f.line};
}

int rank(const std::string& severity) {
  return severity == "critical" ? 3 : severity == "warning" ? 2 : severity == "info" ? 1 : 0;
}

}  // namespace

std::string mainNetwork(const LogSummary& s) {
  std::string best;
  uint64_t n = 0;
  for (const auto& [name, count] : s.networks) {
    if (count > n) best = name, n = count;
  }
  return best;
}

namespace {

// Reading stopped at a bound (4 million lines or 1 GiB, LogLimits): an endless input ends here.
Problem truncatedProblem(const LogSummary& s) {
  return {"info", "truncated",
          "the log was longer than the parser reads (4 million lines or 1 GiB); reading stopped "
          "there and the rest was skipped",
          std::to_string(s.lines) + " lines, " + std::to_string(s.bytes) + " bytes read", 0};
}

}  // namespace

Verdict judge(const LogSummary& s) {
  Verdict v;
  if (s.empty()) {
    v = Verdict{"unknown", "unknown", "unknown", "unknown", "unknown", {}};
    v.problems.push_back(
        {"critical", "no_nccl_lines",
         "no NCCL log lines: run with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS "
         "including INIT,NET) so that NCCL says what it chose",
         std::to_string(s.lines) + " lines, " + std::to_string(s.bytes) + " bytes read", 0});
    if (s.truncated) v.problems.push_back(truncatedProblem(s));
    return v;
  }
  bool single = singleNode(s);
  std::string socket_evidence;
  v.inter_node_transport = decideTransport(s, single, socket_evidence);
  v.gdr = decideGdr(s);
  v.nvls = s.nvls_channels > 0 || s.nvls_lines > 0 ? "on"
           : s.nvls_channels == 0                  ? "off"
                                                   : "unknown";
  v.collnet = s.collnet_lines > 0 ? "on" : "unknown";

  AdviceContext ctx{s, single, v.inter_node_transport, std::nullopt};
  ctx.era = majorMinor(s.nccl_version.empty() ? s.wording_era : s.nccl_version);
  std::vector<Problem>& out = v.problems;
  bool socket = v.inter_node_transport == "socket";
  if (socket) {
    bool sure = multiNode(s);
    out.push_back({sure ? "critical" : "warning", "socket_transport",
                   "inter-node traffic used TCP sockets (NET/Socket), not RDMA: expect 5-10x "
                   "lower bandwidth." +
                       fallbackHints(s),
                   socket_evidence, 0});
    if (auto p = socket_evidence.find("line "); p == 0)
      out.back().line = toInt(sv(socket_evidence).substr(5)).value_or(0);
  }
  if (s.networks.size() > 1) {
    std::string list;
    for (const auto& [n, c] : s.networks)
      list += (list.empty() ? "" : ", ") + n + " (" + std::to_string(c) + ")";
    out.push_back({"critical", "mixed_networks",
                   "processes chose different networks; the job runs at the speed of the "
                   "slowest: compare the environment and devices of the nodes",
                   "Using network: " + list, s.network_line});
  }
  bool network = !single && v.inter_node_transport != "none";
  if ((v.gdr == "off" || v.gdr == "partial") && network && !socket)
    out.push_back(gdrProblem(ctx, v.gdr));
  std::set<uint64_t> consumed;
  roceAmongIb(s, out, consumed);
  gidProblems(s, out);
  bool others = std::any_of(s.completions.begin(), s.completions.end(),
                            [](const Completion& c) { return c.status != 5; });
  for (const auto& c : s.completions) out.push_back(completionProblem(c, ctx, others));
  // One problem per kind of finding: the first line is the evidence, the others are counted.
  std::map<std::string, Finding> kinds;
  std::vector<std::string> order;
  for (const auto& f : s.findings) {
    if (consumed.count(f.line)) continue;
    auto [it, fresh] = kinds.emplace(f.kind, f);
    if (fresh) {
      order.push_back(f.kind);
    } else {
      it->second.count += f.count;
    }
  }
  for (const auto& kind : order) {
    const Finding& f = kinds.at(kind);
    // Folded into the socket problem's hints.
    if (socket && (f.kind == "ib_no_device" || f.kind == "ibverbs_missing")) continue;
    out.push_back(f.kind == "nccl_trace" ? traceProblem(f, s) : findingProblem(f, ctx));
    if (single && (f.kind == "efa_not_usable" || f.kind == "ofi_init") &&
        (s.nodes == 1 || s.ranks == 1))
      out.back().severity = "info";  // nothing crosses a network: harmless
  }
  if (s.watchdog.count > 0) out.push_back(watchdogProblem(s.watchdog));
  for (const auto& e : s.framework_errors) out.push_back(frameworkProblem(e));
  if (s.nvls_channels == 0 && s.env.count("NCCL_ALGO") && contains(s.env.at("NCCL_ALGO"), "NVLS"))
    out.push_back({"info", "nvls_unavailable",
                   "NCCL_ALGO allows NVLS but NCCL built no NVLS channels: NVLink SHARP is not "
                   "available here (it needs NVSwitch systems with the fabric manager, CUDA 12.1+ "
                   "and multicast support)",
                   "NCCL_ALGO=" + s.env.at("NCCL_ALGO"), s.env_lines.at("NCCL_ALGO")});
  if (s.truncated) out.push_back(truncatedProblem(s));

  // Consequences are reported as such when their cause is in the log.
  bool cause = false, peer_cause = false;
  for (const auto& p : out) {
    if (p.severity != "critical") continue;
    Tier t = tierOf(p.code);
    cause = cause || t == Tier::kCause;
    peer_cause = peer_cause || t == Tier::kPeerCause;
  }
  for (auto& p : out) {
    Tier t = tierOf(p.code);
    if (p.severity == "critical" &&
        ((t == Tier::kConsequence && (cause || peer_cause)) || (t == Tier::kPeerCause && cause))) {
      p.severity = "info";
      p.message = "a consequence of the error above: " + p.message;
    }
  }
  // What NCCL chose comes first (rules quote the first problem), then the rest by line.
  auto headline = [](const Problem& p) {
    return p.code == "socket_transport" || p.code == "mixed_networks";
  };
  std::stable_sort(out.begin(), out.end(), [&](const Problem& a, const Problem& b) {
    if (rank(a.severity) != rank(b.severity)) return rank(a.severity) > rank(b.severity);
    if (headline(a) != headline(b)) return headline(a);
    return a.line < b.line;
  });
  v.status = "ok";
  for (const auto& p : out) {
    if (p.severity == "critical" || p.severity == "warning") v.status = "problem";
  }
  return v;
}

}  // namespace fabricwatch::nccl
