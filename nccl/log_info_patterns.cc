// NCCL's INFO messages, as a table of patterns: what NCCL chose (version, network, plugin, NICs,
// GPUDirect RDMA, transports per channel, NVLS and CollNet, the settings it read) in the wording
// of NCCL 2.4 to 2.29 and aws-ofi-nccl 1.x. Checked against the format strings of NCCL's
// init.cc, debug.cc, transport/net*.cc, transport/p2p.cc, transport/shm.cc, graph/*, the net
// plugin loader and aws-ofi-nccl's nccl_ofi_net.c.
#include <algorithm>

#include "core/utf8.h"
#include "nccl/log_parse_state.h"
#include "nccl/log_text.h"

namespace fabricwatch::nccl {
namespace {

using namespace text;

// "2.21.5+cuda12.4" at the start of s -> version and CUDA version.
void parseVersion(sv s, LogSummary& out) {
  size_t n = 0;
  while (n < s.size() && (isDigit(s[n]) || s[n] == '.')) ++n;
  if (n == 0 || std::count(s.begin(), s.begin() + n, '.') != 2) return;
  out.nccl_version = std::string(s.substr(0, n));
  size_t c = s.find("+cuda");
  if (c != sv::npos) {
    sv cv = s.substr(c + 5);
    size_t m = 0;
    while (m < cv.size() && (isDigit(cv[m]) || cv[m] == '.')) ++m;
    out.nccl_cuda_version = std::string(cv.substr(0, m));
  }
}

// "NET/IB/0(1)/GDRDMA(PCI)/Shared" -> {"NET/IB", gdr, dev 0}; "P2P/CUMEM/read" -> "P2P/CUMEM";
// "SHM/direct/direct" and 2.4's "direct shared memory" -> "SHM".
std::string transportKey(sv via, bool& net, bool& gdr, int& dev) {
  net = gdr = false;
  dev = -1;
  size_t end = via.find(" [");
  if (end != sv::npos) via = via.substr(0, end);
  via = trimSpace(via);
  if (startsWith(via, "NET/") || startsWith(via, "COLLNET/")) {
    net = true;
    gdr = contains(via, "/GDRDMA");
    // The device index is the first segment that starts with a digit; the name is before it.
    size_t pos = via.find('/') + 1;
    while (pos < via.size()) {
      size_t next = via.find('/', pos);
      if (next == sv::npos) next = via.size();
      if (isDigit(via[pos])) break;
      pos = next + 1;
    }
    if (pos < via.size()) dev = static_cast<int>(toInt(via.substr(pos)).value_or(-1));
    return std::string(via.substr(0, pos > via.size() ? via.size() : pos - 1));
  }
  if (startsWith(via, "P2P/")) {
    sv rest = via.substr(4);
    sv kind = rest.substr(0, rest.find('/'));
    if (startsWith(kind, "direct")) kind = "direct";
    return "P2P/" + std::string(kind);
  }
  if (startsWith(via, "SHM") || contains(via, "shared memory")) return "SHM";
  if (startsWith(via, "direct pointer")) return "P2P/direct";
  return std::string(via.substr(0, via.find('/')));
}

bool onVersion(ParseState& st, sv msg) {
  parseVersion(msg.substr(13), st.s);
  return true;
}

bool onDriver(ParseState& st, sv msg) {
  if (auto v = toInt(trimSpace(msg.substr(18)))) st.s.cuda_driver_version = cudaVersion(*v);
  return true;
}

bool onNetwork(ParseState& st, sv msg) {
  std::string n = core::sanitizeUtf8(trimSpace(msg.substr(14)), 64);
  auto& nets = st.s.networks;
  if (nets.count(n) || nets.size() < st.limits.max_items) ++nets[n];
  if (st.s.network_line == 0) st.s.network_line = st.s.lines;
  return true;
}

bool onPlugin(ParseState& st, sv msg) {
  LogSummary& s = st.s;
  // "Plugin load returned 2 : libefa.so.1: version `EFA_1.4' not found (required by ...)".
  if (contains(msg, "version `") && contains(msg, "' not found"))
    st.add("critical", "symbol_version", msg.substr(msg.find(':') + 1));
  if (size_t c = msg.find("Loaded collnet plugin "); c != sv::npos) {
    sv name = msg.substr(c + 22);
    s.collnet_plugin = core::sanitizeUtf8(trimSpace(name.substr(0, name.find(" ("))), 64);
  } else if (startsWith(msg, "P2P plugin ")) {  // HPC-X's nccl-rdma-sharp plugin
    s.net_plugin_state = "loaded";
    s.net_plugin = core::sanitizeUtf8(trimSpace(msg.substr(11)), 128);
  } else if (size_t p = msg.find("Loaded net plugin "); p != sv::npos) {
    sv name = msg.substr(p + 18);
    if (size_t paren = name.rfind(" ("); paren != sv::npos) name = name.substr(0, paren);
    s.net_plugin_state = "loaded";
    s.net_plugin = core::sanitizeUtf8(trimSpace(name), 128);
  } else if (s.net_plugin_state != "loaded" &&
             (contains(msg, "No plugin found") || contains(msg, "Could not find") ||
              contains(msg, "Plugin load returned") || contains(msg, "Plugin load (") ||
              contains(msg, "Using internal network plugin"))) {
    s.net_plugin_state = "not_found";
    sv what = msg.substr(msg.find(':') + 1);
    if (s.net_plugin.empty() || !contains(msg, "Using internal"))
      s.net_plugin = core::sanitizeUtf8(trimSpace(what), 200);
  }
  return true;
}

// "NET/IB : Using [0]mlx5_0:1/RoCE [1]={[2] mlx5_2:1/IB, [3] mlx5_3:1/IB} [RO]; OOB eth0:..."
bool onIbDevices(ParseState& st, sv msg) {
  sv rest = msg.substr(msg.find("Using") + 5);
  size_t semi = rest.find(';');
  sv devs = rest.substr(0, semi);
  if (size_t oob = rest.find("OOB ", semi == sv::npos ? 0 : semi); oob != sv::npos) {
    sv o = trimSpace(rest.substr(oob + 4));
    if (size_t lt = o.find('<'); lt != sv::npos) o = o.substr(0, lt);
    if (st.s.oob.empty() && !o.empty()) st.s.oob = core::sanitizeUtf8(o, 128);
  } else if (semi != sv::npos && trimSpace(rest.substr(semi)) == "; OOB :") {
    // NCCL 2.4 printed an empty OOB interface when the one it picked had no address.
    st.s.oob_empty = true;
    if (st.s.oob_empty_line == 0) st.s.oob_empty_line = st.s.lines;
  }
  std::string tok;
  int index = -1;
  auto flush = [&] {
    sv t = tok;
    if (size_t lb = t.find('['); lb != sv::npos && t.find(']', lb) != sv::npos) {
      auto i = toInt(t.substr(lb + 1));
      if (i) index = static_cast<int>(*i);
      t = t.substr(t.rfind(']') + 1);
    }
    size_t colon = t.find(':'), slash = t.find('/');
    if (colon != sv::npos && slash != sv::npos && slash > colon) {
      sv link = t.substr(slash + 1);
      bool sharp = contains(link, "/SHARP");
      link = link.substr(0, link.find('/'));
      Nic n{"IB",
            core::sanitizeUtf8(t.substr(0, colon), 64),
            static_cast<int>(toInt(t.substr(colon + 1, slash - colon - 1)).value_or(0)),
            core::sanitizeUtf8(link, 16),
            "",
            index,
            sharp,
            st.s.lines};
      st.addNic(std::move(n));
      index = -1;
    }
    tok.clear();
  };
  for (char c : devs) {
    if (c == ' ' || c == ',' || c == '{' || c == '}' || c == '=') {
      flush();
    } else {
      tok += c;
    }
  }
  flush();
  return true;
}

bool onSocketDevices(ParseState& st, sv msg) {
  sv rest = msg.substr(msg.find("Using") + 5);
  if (st.s.socket_nic_line == 0) st.s.socket_nic_line = st.s.lines;
  size_t pos = 0;
  while ((pos = rest.find('[', pos)) != sv::npos) {
    size_t rb = rest.find(']', pos);
    if (rb == sv::npos) break;
    size_t end = rest.find(' ', rb);
    sv t = rest.substr(rb + 1, end == sv::npos ? sv::npos : end - rb - 1);
    size_t colon = t.find(':');
    sv addr = colon == sv::npos ? sv() : t.substr(colon + 1);
    if (size_t lt = addr.rfind('<'); lt != sv::npos) addr = addr.substr(0, lt);
    st.addNic(Nic{"Socket", core::sanitizeUtf8(t.substr(0, colon), 64), 0, "",
                  core::sanitizeUtf8(addr, 64), -1, false, st.s.lines});
    pos = rb + 1;
  }
  return true;
}

// "Bootstrap : Using eth0:10.0.0.1<0>" (2.4-2.8: "Using [0]eth0:10.0.0.1<0>").
bool onBootstrap(ParseState& st, sv msg) {
  if (!st.s.oob.empty()) return true;
  sv o = trimSpace(msg.substr(msg.find("Using") + 5));
  if (startsWith(o, "[") && o.find(']') != sv::npos) o = o.substr(o.find(']') + 1);
  if (size_t sp = o.find(' '); sp != sv::npos) o = o.substr(0, sp);
  if (size_t lt = o.find('<'); lt != sv::npos) o = o.substr(0, lt);
  st.s.oob = core::sanitizeUtf8(o, 128);
  return true;
}

bool onNoIbDevice(ParseState& st, sv msg) {
  st.add("warning", "ib_no_device", msg);
  return true;
}

bool onNoVerbs(ParseState& st, sv msg) {
  st.add("warning", "ibverbs_missing", msg);
  return true;
}

// "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)", "GPU Direct RDMA Disabled
// for GPU 42000 / HCA 0 (distance 6 > 4)". A socket NIC never has it: "NET/Socket : GPU Direct
// RDMA Disabled for HCA 0 'eth0'" is the normal line, not a finding.
bool onGdrDisabled(ParseState& st, sv msg) {
  if (startsWith(msg, "NET/Socket")) return true;
  LogSummary& s = st.s;
  sv what = msg.substr(msg.find("Disabled for ") + 13);
  if (s.gdr_disabled.size() < st.limits.max_items)
    s.gdr_disabled.insert(core::sanitizeUtf8(trimSpace(what), 160));
  if (s.gdr_disabled_line == 0) s.gdr_disabled_line = s.lines;
  if (s.gdr_disabled_reason.empty()) {
    if (contains(msg, "(distance "))
      s.gdr_disabled_reason = core::sanitizeUtf8(between(msg, "(", ")"), 40);
    else if (contains(msg, "(no module"))
      s.gdr_disabled_reason = "no module";
  }
  return true;
}

bool onGdrEnabled(ParseState& st, sv msg) {
  if (!startsWith(msg, "NET/Socket")) ++st.s.gdr_enabled_lines;
  return true;
}

bool onDmaBuf(ParseState& st, sv) {
  st.s.dmabuf = true;
  return true;
}

bool onOfi(ParseState& st, sv msg) {
  LogSummary& s = st.s;
  sv m = msg.substr(8);
  if (startsWith(m, "Selected Provider is ") || startsWith(m, "Selected provider is ")) {
    sv p = m.substr(21);
    s.ofi_provider = core::sanitizeUtf8(p.substr(0, p.find_first_of(" ,;(")), 64);
    if (size_t f = p.find("fabric is "); f != sv::npos) {
      sv fab = p.substr(f + 10);
      s.ofi_fabric = core::sanitizeUtf8(fab.substr(0, fab.find_first_of(" ,(")), 64);
    }
    if (auto n = intAfter(p, "(found ")) s.ofi_nics = *n;
  } else if (startsWith(m, "Initializing ")) {
    s.ofi_plugin_version = core::sanitizeUtf8(trimSpace(m.substr(13)), 64);
  } else if (startsWith(m, "Using Libfabric version ")) {
    s.libfabric_version = core::sanitizeUtf8(trimSpace(m.substr(24)), 32);
  } else if (startsWith(m, "Using CUDA driver version ")) {
    if (auto v = toInt(trimSpace(m.substr(26))); v && s.cuda_driver_version.empty())
      s.cuda_driver_version = cudaVersion(*v);
  } else if (startsWith(m, "No NIC info for dev")) {
    st.process().benign_next = true;  // the plugin's topology probe; NCCL carries on
  }
  return true;
}

// Connections: "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA", 2.7's "Channel 00 :
// 1[1a000] -> 0[1a000] [receive] via NET/IB/0", 2.4's "Ring 00 : 7 -> 8 [send] via NET/AWS
// Libfabric/0", and CollNet's "CollNet 05/0 : 5 [receive] via COLLNET/SHARP/5/GDRDMA".
bool onConnection(ParseState& st, sv msg) {
  if (!contains(msg, " via ")) return false;
  LogSummary& s = st.s;
  if (s.wording_era.empty()) {
    if (startsWith(msg, "Ring "))
      s.wording_era = "2.4";
    else if (startsWith(msg, "Channel ") && msg.size() > 10 && msg[10] != '/')
      s.wording_era = "2.7";
    else if (startsWith(msg, "Channel "))
      s.wording_era = "2.12";
  }
  bool net = false, gdr = false;
  int dev = -1;
  std::string key =
      core::sanitizeUtf8(transportKey(msg.substr(msg.find(" via ") + 5), net, gdr, dev), 64);
  if (s.transports.count(key) || s.transports.size() < st.limits.max_items) ++s.transports[key];
  if (startsWith(key, "COLLNET/")) ++s.collnet_lines;
  if (net) {
    ++s.net_channels;
    if (s.first_net_channel_line == 0) s.first_net_channel_line = s.lines;
    if (gdr) ++s.net_channels_gdr;
    if (!gdr && s.first_plain_net_channel_line == 0) s.first_plain_net_channel_line = s.lines;
    ProcessState& p = st.process();
    p.net_dev = dev;
    p.net_line = s.lines;
  }
  return true;
}

// The ring order: "Channel 00/04 :    0   1   2   3".
bool onRingOrder(ParseState& st, sv msg) {
  size_t slash = msg.find('/');
  if (slash == sv::npos || slash > 12) return true;
  if (st.s.wording_era.empty()) st.s.wording_era = "2.12";
  sv n = msg.substr(slash + 1);
  if (auto v = toInt(n.substr(0, n.find(' ')))) st.s.channels = std::max(st.s.channels, *v);
  return true;
}

bool onTrees(ParseState& st, sv msg) {
  st.s.tree_channels =
      std::max<int64_t>(st.s.tree_channels, std::count(msg.begin(), msg.end(), '['));
  return true;
}

bool onTuning(ParseState& st, sv msg) {
  if (!contains(msg, " Bytes -> Algo ")) return false;
  // 2.19-2.28 print the algorithm and protocol as numbers, 2.29 as names.
  static const char* kAlgos[] = {"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                 "NVLSTree", "PAT"};
  static const char* kProtos[] = {"LL", "LL128", "Simple"};
  auto name = [](sv v, const char* const* names, int64_t n) {
    if (auto i = toInt(v); i && *i >= 0 && *i < n) return std::string(names[*i]);
    return core::sanitizeUtf8(v, 32);
  };
  auto bytes = toInt(trimSpace(msg.substr(11)));
  sv rest = msg.substr(msg.find(" -> Algo ") + 9);
  sv algo = rest.substr(0, rest.find(' '));
  sv proto;
  if (size_t p = rest.find(" proto "); p != sv::npos) {
    proto = rest.substr(p + 7);
    proto = proto.substr(0, proto.find(' '));
  }
  auto& algos = st.s.allreduce_algorithms;
  if (bytes && *bytes >= 0 &&
      (algos.count(static_cast<uint64_t>(*bytes)) || algos.size() < st.limits.max_items))
    algos[static_cast<uint64_t>(*bytes)] = name(algo, kAlgos, 7) + "/" + name(proto, kProtos, 3);
  return true;
}

bool onConnectedRings(ParseState& st, sv) {
  st.s.connected_rings = true;
  return true;
}

bool onConnectedTrees(ParseState& st, sv) {
  st.s.connected_trees = true;
  return true;
}

bool onNvls(ParseState& st, sv) {
  ++st.s.nvls_lines;
  return true;
}

bool onCollNet(ParseState& st, sv) {
  ++st.s.collnet_lines;
  return true;
}

// "16 coll channels, 0 collnet channels, 16 nvls channels, 16 p2p channels, ..." (2.17+; the
// collnet count is the coll count whether CollNet is used or not, so only NVLS is read).
bool onChannelCounts(ParseState& st, sv msg) {
  if (auto n = intBefore(msg, " nvls channels"))
    st.s.nvls_channels = std::max(st.s.nvls_channels, *n);
  return true;
}

bool onComm(ParseState& st, sv msg) {
  LogSummary& s = st.s;
  if (contains(msg, "Init COMPLETE")) ++s.init_complete;
  if (contains(msg, "Abort COMPLETE")) st.noteAbort();
  for (sv key : {"nranks ", "nRanks "}) {
    if (auto v = intAfter(msg, key)) s.ranks = std::max(s.ranks, *v);
  }
  if (auto v = intAfter(msg, "nNodes ")) s.nodes = std::max(s.nodes, *v);
  if (auto v = intAfter(msg, "localRanks ")) s.local_ranks = std::max(s.local_ranks, *v);
  return true;
}

// "NCCL_IB_HCA set by environment to mlx5" (param.cc adds a final '.' to numbers), and the
// NET subsystem's own "NCCL_SOCKET_IFNAME set to eth2" / "NCCL_IB_HCA set to mlx5_4".
bool onEnv(ParseState& st, sv msg) {
  size_t p = msg.find(" set by environment to ");
  size_t len = 23;
  if (p == sv::npos) {
    p = msg.find(" set to ");
    len = 8;
  }
  if (p == sv::npos) return false;
  sv name = msg.substr(0, p);
  bool ident = startsWith(name, "NCCL_") && std::all_of(name.begin(), name.end(), [](char c) {
                 return std::isupper(static_cast<unsigned char>(c)) || isDigit(c) || c == '_';
               });
  if (!ident) return false;
  if (len == 8 && st.s.env.count(std::string(name))) return true;
  st.setEnv(name, msg.substr(p + len));
  return true;
}

// The GID of a RoCE connection: "NET/IB: Dev 0 Port 1 qpn 123 mtu 5 GID 3 (0/..)" (2.12-2.18),
// "NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1047 mtu 5 query_ece={...} GID 0 (80FE/1A8A..)"
// (2.19-2.28), "NET/IB: ncclIbConnect: NCCL Dev 0 IbDev 0 Port 1 qp_num .. GID 3 (..)" (2.29).
bool onGid(ParseState& st, sv msg) {
  size_t g = msg.find(" GID ");
  if (g == sv::npos) return false;
  sv rest = msg.substr(g + 5);
  auto index = toInt(rest);
  size_t open = rest.find(" (");
  if (!index || open == sv::npos || open > 12) return false;
  sv prefix = rest.substr(open + 2);
  prefix = prefix.substr(0, prefix.find('/'));
  auto& gids = st.s.gids;
  for (const auto& e : gids)
    if (e.index == *index && e.prefix == prefix) return true;
  if (gids.size() < 8)
    gids.push_back({*index, core::sanitizeUtf8(prefix, 20), st.s.lines,
                    core::sanitizeUtf8(msg, st.limits.max_text_bytes)});
  return true;
}

// "Could not find real path of /sys/class/net/eth0/device" (a virtual NIC without a PCI device):
// NCCL logs the failed probe's trace next and carries on.
bool onVirtualNic(ParseState& st, sv) {
  st.process().benign_next = true;
  return true;
}

enum class Match { kPrefix, kContains };

struct InfoPattern {
  Match how;
  sv text;
  bool (*handle)(ParseState&, sv);  // false: not this message after all, try the next pattern
};

// First match wins, so more specific patterns come first.
constexpr InfoPattern kInfoPatterns[] = {
    {Match::kPrefix, "NCCL version ", onVersion},
    {Match::kPrefix, "cudaDriverVersion ", onDriver},
    {Match::kPrefix, "Using network ", onNetwork},
    {Match::kPrefix, "NET/Plugin", onPlugin},
    {Match::kPrefix, "Plugin Path", onPlugin},
    {Match::kPrefix, "P2P plugin ", onPlugin},
    {Match::kContains, "NET/IB : No device found", onNoIbDevice},
    {Match::kContains, "NET/IB: No device found", onNoIbDevice},
    {Match::kPrefix, "NET/IB : Using", onIbDevices},
    {Match::kPrefix, "NET/IB: Using", onIbDevices},
    {Match::kPrefix, "NET/Socket : Using", onSocketDevices},
    {Match::kPrefix, "NET/Socket: Using [", onSocketDevices},
    {Match::kPrefix, "Bootstrap : Using", onBootstrap},
    {Match::kPrefix, "Bootstrap: Using", onBootstrap},
    {Match::kPrefix, "Failed to open libibverbs", onNoVerbs},
    {Match::kContains, "GPU Direct RDMA Disabled for ", onGdrDisabled},
    {Match::kContains, "GPU Direct RDMA Enabled for ", onGdrEnabled},
    {Match::kPrefix, "DMA-BUF is available", onDmaBuf},
    {Match::kPrefix, "NET/OFI ", onOfi},
    {Match::kPrefix, "Channel ", onConnection},
    {Match::kPrefix, "Ring ", onConnection},
    {Match::kPrefix, "CollNet ", onConnection},
    {Match::kPrefix, "Channel ", onRingOrder},
    {Match::kPrefix, "Trees ", onTrees},
    {Match::kPrefix, "AllReduce: ", onTuning},
    {Match::kPrefix, "Connected all rings", onConnectedRings},
    {Match::kPrefix, "Connected all trees", onConnectedTrees},
    {Match::kPrefix, "Connected NVLS", onNvls},
    {Match::kPrefix, "NVLS comm ", onNvls},
    {Match::kPrefix, "SHARP rank ", onCollNet},
    {Match::kContains, " coll channels, ", onChannelCounts},
    {Match::kContains, "Init COMPLETE", onComm},
    {Match::kContains, "Abort COMPLETE", onComm},
    {Match::kPrefix, "comm 0x", onComm},
    {Match::kContains, "ncclCommInit", onComm},
    {Match::kPrefix, "NET/IB: ", onGid},
    {Match::kPrefix, "Could not find real path of /sys/class/net/", onVirtualNic},
    {Match::kPrefix, "NCCL_", onEnv},
};

}  // namespace

void handleInfo(ParseState& st, sv msg) {
  for (const auto& p : kInfoPatterns) {
    bool hit = p.how == Match::kPrefix ? startsWith(msg, p.text) : contains(msg, p.text);
    if (hit && p.handle(st, msg)) return;
  }
}

}  // namespace fabricwatch::nccl
