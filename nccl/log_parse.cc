#include "nccl/log_parse.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "core/utf8.h"

namespace fabricwatch::nccl {
namespace {

using sv = std::string_view;

bool startsWith(sv s, sv p) { return s.substr(0, p.size()) == p; }
bool contains(sv s, sv p) { return s.find(p) != sv::npos; }

sv trim(sv s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> toInt(sv s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  return v;
}

// The integer that follows `key` in s ("nranks 16" -> 16).
std::optional<int64_t> intAfter(sv s, sv key) {
  size_t p = s.find(key);
  if (p == sv::npos) return std::nullopt;
  sv rest = trim(s.substr(p + key.size()));
  size_t n = 0;
  while (n < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[n])) || rest[n] == '-'))
    ++n;
  return toInt(rest.substr(0, n));
}

// 12040 -> "12.4" (CUDA's encoding: 1000 * major + 10 * minor).
std::string cudaVersion(int64_t v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

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

// The host and pid of an NCCL prefix: the last token of the form HOST:PID:TID before the
// level, whatever precedes it ("[1,3]<stdout>:host:12:34", "[2026-01-01 10:00:00] host:12:34").
bool parseOrigin(sv prefix, std::string& host, std::string& pid) {
  size_t end = prefix.size();
  while (end > 0) {
    while (end > 0 && prefix[end - 1] == ' ') --end;
    // Nothing but spaces left: without this a prefix starting with a space looped for ever
    // (found by nccl_log_fuzz; tests/fuzz/corpus/nccl_log_fuzz/leading_space_prefix).
    if (end == 0) break;
    size_t start = prefix.rfind(' ', end - 1);
    start = start == sv::npos ? 0 : start + 1;
    sv tok = prefix.substr(start, end - start);
    // HOST:PID:TID: the last two fields numeric.
    size_t c2 = tok.rfind(':');
    size_t c1 = c2 == sv::npos || c2 == 0 ? sv::npos : tok.rfind(':', c2 - 1);
    if (c1 != sv::npos && c2 > c1 + 1 && c2 + 1 < tok.size()) {
      sv p = tok.substr(c1 + 1, c2 - c1 - 1), t = tok.substr(c2 + 1);
      if (std::all_of(p.begin(), p.end(), isDigit) && std::all_of(t.begin(), t.end(), isDigit)) {
        sv h = tok.substr(0, c1);
        size_t cut = h.find_last_of(":>]");
        if (cut != sv::npos) h = h.substr(cut + 1);
        if (h.empty()) return false;
        host = std::string(h);
        pid = std::string(p);
        return true;
      }
    }
    if (start == 0) break;
    end = start;
  }
  return false;
}

// "NET/IB/0(1)/GDRDMA(PCI)/Shared" -> {"NET/IB", gdr}; "P2P/CUMEM/read" -> "P2P/CUMEM";
// "SHM/direct/direct" -> "SHM".
std::string transportKey(sv via, bool& net, bool& gdr) {
  net = gdr = false;
  size_t end = via.find(" [");  // 2.4-era "via NET/x/0 [receive]" never follows, but be safe
  if (end != sv::npos) via = via.substr(0, end);
  via = trim(via);
  if (startsWith(via, "NET/") || startsWith(via, "COLLNET/")) {
    net = true;
    gdr = contains(via, "/GDRDMA");
    size_t first = via.find('/');
    // The device index is the first segment that starts with a digit; the name is before it.
    size_t pos = first + 1;
    while (pos < via.size()) {
      size_t next = via.find('/', pos);
      if (next == sv::npos) next = via.size();
      if (pos < via.size() && isDigit(via[pos])) break;
      pos = next + 1;
    }
    sv name = via.substr(0, pos > via.size() ? via.size() : pos - 1);
    return std::string(name);
  }
  if (startsWith(via, "P2P/")) {
    sv rest = via.substr(4);
    size_t slash = rest.find('/');
    sv kind = rest.substr(0, slash);
    if (startsWith(kind, "direct")) kind = "direct";
    return "P2P/" + std::string(kind);
  }
  if (startsWith(via, "SHM")) return "SHM";
  size_t slash = via.find('/');
  return std::string(via.substr(0, slash));
}

}  // namespace

void LogParser::add(std::string severity, std::string kind, sv text) {
  std::string t = core::sanitizeUtf8(trim(text), limits_.max_text_bytes);
  auto key = std::make_pair(kind, t);
  if (auto it = finding_index_.find(key); it != finding_index_.end()) {
    ++s_.findings[it->second].count;
    return;
  }
  if (s_.findings.size() >= limits_.max_findings) {
    ++s_.findings_dropped;
    return;
  }
  finding_index_[key] = s_.findings.size();
  s_.findings.push_back(Finding{std::move(severity), std::move(kind), std::move(t), s_.lines, 1});
}

void LogParser::addNic(Nic n) {
  for (const auto& e : s_.nics) {
    if (e.net == n.net && e.device == n.device && e.port == n.port) return;
  }
  if (s_.nics.size() < limits_.max_items) s_.nics.push_back(std::move(n));
}

void LogParser::ncclMessage(sv level, sv prefix, sv msg) {
  ++s_.nccl_lines;
  std::string host, pid;
  bool origin = parseOrigin(prefix, host, pid);
  if (origin) {
    if (s_.hosts.size() < limits_.max_items) s_.hosts.insert(core::sanitizeUtf8(host, 64));
    if (s_.processes.size() < 4 * limits_.max_items)
      s_.processes.insert(core::sanitizeUtf8(host, 64) + ":" + pid);
  }
  if (level == "WARN") {
    // "[0] misc/ibvwrap.cc:187 NCCL WARN Call to ...": keep the source location with the text.
    sv where;
    if (size_t sp = trim(prefix).rfind(' '); sp != sv::npos) where = trim(prefix).substr(sp + 1);
    std::string text =
        (where.find(':') != sv::npos && !startsWith(where, "[") ? std::string(where) + " " : "") +
        std::string(msg);
    if (contains(msg, "Call to ibv_") || contains(msg, "ibv_modify_qp") ||
        contains(msg, "async fatal event") || contains(msg, "Got completion from peer")) {
      add("critical", "ibv_call", text);
    } else if (contains(msg, "NET/OFI") &&
               (contains(msg, "Failed to init") || contains(msg, "initialization failed") ||
                contains(msg, "Initializing plugin failed") || contains(msg, "Couldn't open") ||
                contains(msg, "fi_getinfo") || contains(msg, "Unable to find a protocol"))) {
      add("critical", "ofi_init", text);
    } else if (contains(msg, "Cuda failure") || contains(msg, "CUDA failure") ||
               contains(msg, "Failed to find CUDA library")) {
      add("critical", "cuda", text);
    } else if (contains(msg, "dlvsym failed")) {
      add("warning", "symbol_version", text);
    } else {
      add("warning", "nccl_warn", text);
    }
    return;
  }
  msg = trim(msg);
  // NCCLCHECK's error trace: "init.cc:1627 -> 2" (the call at that line returned an error).
  if (size_t arrow = msg.find(" -> "); arrow != sv::npos && arrow < 64) {
    sv loc = msg.substr(0, arrow);
    size_t colon = loc.rfind(':');
    if (colon != sv::npos && loc.find(' ') == sv::npos && loc.find('.') != sv::npos &&
        toInt(loc.substr(colon + 1)) && toInt(trim(msg.substr(arrow + 4)))) {
      // Each failing call logs its whole chain of callers; the first line is the cause.
      if (traced_.insert(origin ? host + ":" + pid : std::string()).second)
        add("critical", "nccl_error", msg);
      return;
    }
  }
  if (startsWith(msg, "NCCL version ")) return parseVersion(msg.substr(13), s_);
  if (startsWith(msg, "cudaDriverVersion ")) {
    if (auto v = toInt(trim(msg.substr(18)))) s_.cuda_driver_version = cudaVersion(*v);
    return;
  }
  if (startsWith(msg, "Using network ")) {
    std::string n = core::sanitizeUtf8(trim(msg.substr(14)), 64);
    if (s_.networks.count(n) || s_.networks.size() < limits_.max_items) ++s_.networks[n];
    return;
  }
  if (startsWith(msg, "NET/Plugin") || startsWith(msg, "Plugin Path") ||
      startsWith(msg, "P2P plugin ")) {
    // "Plugin load returned 2 : libefa.so.1: version `EFA_1.4' not found (required by ...)".
    if (contains(msg, "version `") && contains(msg, "' not found"))
      add("critical", "symbol_version", msg.substr(msg.find(':') + 1));
    if (startsWith(msg, "P2P plugin ")) {  // HPC-X's nccl-rdma-sharp plugin
      s_.net_plugin_state = "loaded";
      s_.net_plugin = core::sanitizeUtf8(trim(msg.substr(11)), 128);
    } else if (size_t p = msg.find("Loaded net plugin "); p != sv::npos) {
      sv name = msg.substr(p + 18);
      if (size_t paren = name.rfind(" ("); paren != sv::npos) name = name.substr(0, paren);
      s_.net_plugin_state = "loaded";
      s_.net_plugin = core::sanitizeUtf8(trim(name), 128);
    } else if (s_.net_plugin_state != "loaded" &&
               (contains(msg, "No plugin found") || contains(msg, "Could not find") ||
                contains(msg, "Plugin load returned") || contains(msg, "Plugin load (") ||
                contains(msg, "Using internal network plugin"))) {
      s_.net_plugin_state = "not_found";
      sv what = msg.substr(msg.find(':') + 1);
      if (s_.net_plugin.empty() || !contains(msg, "Using internal"))
        s_.net_plugin = core::sanitizeUtf8(trim(what), 200);
    }
    return;
  }
  if (startsWith(msg, "NET/IB : Using") || startsWith(msg, "NET/IB: Using")) {
    sv rest = msg.substr(msg.find("Using") + 5);
    sv devs = rest.substr(0, rest.find(';'));
    if (size_t oob = rest.find("OOB "); oob != sv::npos && s_.oob.empty()) {
      sv o = trim(rest.substr(oob + 4));
      if (size_t lt = o.find('<'); lt != sv::npos) o = o.substr(0, lt);
      s_.oob = core::sanitizeUtf8(o, 128);
    }
    // " [0]mlx5_0:1/RoCE [1]={[2] mlx5_2:1/IB, [3] mlx5_3:1/IB} [RO]"
    std::string tok;
    auto flush = [&] {
      sv t = tok;
      if (size_t rb = t.rfind(']'); rb != sv::npos) t = t.substr(rb + 1);
      size_t colon = t.find(':'), slash = t.find('/');
      if (colon != sv::npos && slash != sv::npos && slash > colon) {
        Nic n{"IB", core::sanitizeUtf8(t.substr(0, colon), 64),
              static_cast<int>(toInt(t.substr(colon + 1, slash - colon - 1)).value_or(0)),
              core::sanitizeUtf8(t.substr(slash + 1), 16), ""};
        addNic(std::move(n));
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
    return;
  }
  if (startsWith(msg, "NET/Socket : Using") || startsWith(msg, "NET/Socket: Using [")) {
    sv rest = msg.substr(msg.find("Using") + 5);
    size_t pos = 0;
    while ((pos = rest.find('[', pos)) != sv::npos) {
      size_t rb = rest.find(']', pos);
      if (rb == sv::npos) break;
      size_t end = rest.find(' ', rb);
      sv t = rest.substr(rb + 1, end == sv::npos ? sv::npos : end - rb - 1);
      size_t colon = t.find(':');
      sv addr = colon == sv::npos ? sv() : t.substr(colon + 1);
      if (size_t lt = addr.rfind('<'); lt != sv::npos) addr = addr.substr(0, lt);
      addNic(Nic{"Socket", core::sanitizeUtf8(t.substr(0, colon), 64), 0, "",
                 core::sanitizeUtf8(addr, 64)});
      pos = rb + 1;
    }
    return;
  }
  if (startsWith(msg, "Bootstrap : Using") || startsWith(msg, "Bootstrap: Using")) {
    if (s_.oob.empty()) {
      sv o = trim(msg.substr(msg.find("Using") + 5));
      if (size_t sp = o.find(' '); sp != sv::npos) o = o.substr(0, sp);
      if (size_t lt = o.find('<'); lt != sv::npos) o = o.substr(0, lt);
      s_.oob = core::sanitizeUtf8(o, 128);
    }
    return;
  }
  if (contains(msg, "NET/IB : No device found") || contains(msg, "NET/IB: No device found")) {
    add("warning", "ib_no_device", msg);
    return;
  }
  if (startsWith(msg, "Failed to open libibverbs")) {
    add("warning", "ibverbs_missing", msg);
    return;
  }
  if (contains(msg, "GPU Direct RDMA Disabled for ")) {
    sv what = msg.substr(msg.find("Disabled for ") + 13);
    if (s_.gdr_disabled.size() < limits_.max_items)
      s_.gdr_disabled.insert(core::sanitizeUtf8(trim(what), 160));
    return;
  }
  if (contains(msg, "GPU Direct RDMA Enabled for ")) {
    ++s_.gdr_enabled_lines;
    return;
  }
  if (startsWith(msg, "NET/OFI ")) {
    sv m = msg.substr(8);
    if (startsWith(m, "Selected Provider is ") || startsWith(m, "Selected provider is ")) {
      sv p = m.substr(21);
      size_t end = p.find_first_of(" ,;(");
      s_.ofi_provider = core::sanitizeUtf8(p.substr(0, end), 64);
      if (size_t f = p.find("fabric is "); f != sv::npos) {
        sv fab = p.substr(f + 10);
        s_.ofi_fabric = core::sanitizeUtf8(fab.substr(0, fab.find_first_of(" ,(")), 64);
      }
      if (auto n = intAfter(p, "(found ")) s_.ofi_nics = *n;
    } else if (startsWith(m, "Initializing ")) {
      s_.ofi_plugin_version = core::sanitizeUtf8(trim(m.substr(13)), 64);
    } else if (startsWith(m, "Using Libfabric version ")) {
      s_.libfabric_version = core::sanitizeUtf8(trim(m.substr(24)), 32);
    } else if (startsWith(m, "Using CUDA driver version ")) {
      if (auto v = toInt(trim(m.substr(26))); v && s_.cuda_driver_version.empty())
        s_.cuda_driver_version = cudaVersion(*v);
    }
    return;
  }
  // Connections: "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA" (and the 2.4-era
  // "Ring 00 : 7 -> 8 [send] via NET/AWS Libfabric/0").
  if ((startsWith(msg, "Channel ") || startsWith(msg, "Ring ")) && contains(msg, " via ")) {
    bool net = false, gdr = false;
    std::string key =
        core::sanitizeUtf8(transportKey(msg.substr(msg.find(" via ") + 5), net, gdr), 64);
    if (s_.transports.count(key) || s_.transports.size() < limits_.max_items) ++s_.transports[key];
    if (net) {
      ++s_.net_channels;
      if (gdr) ++s_.net_channels_gdr;
    }
    return;
  }
  // The ring order: "Channel 00/04 :    0   1   2   3".
  if (startsWith(msg, "Channel ")) {
    size_t slash = msg.find('/');
    if (slash != sv::npos) {
      sv n = msg.substr(slash + 1);
      n = n.substr(0, n.find(' '));
      if (auto v = toInt(n)) s_.channels = std::max(s_.channels, *v);
    }
    return;
  }
  if (startsWith(msg, "Trees ")) {
    s_.tree_channels = std::max<int64_t>(s_.tree_channels, std::count(msg.begin(), msg.end(), '['));
    return;
  }
  if (startsWith(msg, "AllReduce: ") && contains(msg, " Bytes -> Algo ")) {
    // 2.19-2.28 print the algorithm and protocol as numbers, 2.29 as names.
    static const char* kAlgos[] = {"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                   "NVLSTree", "PAT"};
    static const char* kProtos[] = {"LL", "LL128", "Simple"};
    auto name = [](sv v, const char* const* names, int64_t n) {
      if (auto i = toInt(v); i && *i >= 0 && *i < n) return std::string(names[*i]);
      return core::sanitizeUtf8(v, 32);
    };
    auto bytes = toInt(trim(msg.substr(11)));
    sv rest = msg.substr(msg.find(" -> Algo ") + 9);
    sv algo = rest.substr(0, rest.find(' '));
    sv proto;
    if (size_t p = rest.find(" proto "); p != sv::npos) {
      proto = rest.substr(p + 7);
      proto = proto.substr(0, proto.find(' '));
    }
    if (bytes && *bytes >= 0 &&
        (s_.allreduce_algorithms.count(static_cast<uint64_t>(*bytes)) ||
         s_.allreduce_algorithms.size() < limits_.max_items)) {
      s_.allreduce_algorithms[static_cast<uint64_t>(*bytes)] =
          name(algo, kAlgos, 7) + "/" + name(proto, kProtos, 3);
    }
    return;
  }
  if (startsWith(msg, "Connected all rings")) {
    s_.connected_rings = true;
    return;
  }
  if (startsWith(msg, "Connected all trees")) {
    s_.connected_trees = true;
    return;
  }
  if (contains(msg, "Init COMPLETE")) ++s_.init_complete;
  if (startsWith(msg, "comm 0x") || contains(msg, "ncclCommInit")) {
    for (sv key : {"nranks ", "nRanks "}) {
      if (auto v = intAfter(msg, key)) s_.ranks = std::max(s_.ranks, *v);
    }
    if (auto v = intAfter(msg, "nNodes ")) s_.nodes = std::max(s_.nodes, *v);
    return;
  }
  // "NCCL_IB_HCA set by environment to mlx5" (param.cc adds a final '.' to numbers).
  if (size_t p = msg.find(" set by environment to "); p != sv::npos) {
    sv name = msg.substr(0, p);
    bool ident = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isupper(static_cast<unsigned char>(c)) || isDigit(c) || c == '_';
    });
    if (ident && (s_.env.count(std::string(name)) || s_.env.size() < limits_.max_items)) {
      sv v = trim(msg.substr(p + 23));
      if (!v.empty() && v.back() == '.') v.remove_suffix(1);
      s_.env[std::string(name)] = core::sanitizeUtf8(v, 200);
    }
    return;
  }
}

void LogParser::otherLine(sv l) {
  // Printed without a prefix by the NCCL_DEBUG=VERSION level and by older releases.
  if (size_t v = l.find("NCCL version "); v != sv::npos && s_.nccl_version.empty()) {
    parseVersion(l.substr(v + 13), s_);
    return;
  }
  // The dynamic linker, when a container's libraries do not match the host's (rdma-core
  // providers against an older libibverbs, libfabric against libefa, a glibc too old):
  // "libibverbs.so.1: version `IBVERBS_PRIVATE_34' not found (required by ...libmlx5.so.1)".
  size_t ver = l.find("version `");
  if (ver == sv::npos) ver = l.find("version '");
  if (ver != sv::npos && contains(l.substr(ver), "' not found")) {
    add("critical", "symbol_version", l);
    return;
  }
  if (contains(l, "libibverbs: Warning: couldn't load driver")) {
    add("warning", "ibverbs_driver", l);
    return;
  }
  // Frameworks report NCCL's failures in their own words (PyTorch's DistBackendError ...).
  for (sv e : {"ncclSystemError", "ncclInternalError", "ncclRemoteError", "ncclUnhandledCudaError",
               "ncclInvalidUsage", "unhandled system error", "NCCL error"}) {
    if (contains(l, e)) {
      add("critical", "nccl_error", l);
      return;
    }
  }
}

void LogParser::line(sv l) {
  ++s_.lines;
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  for (sv level : {"INFO", "WARN"}) {
    std::string tag = "NCCL " + std::string(level) + " ";
    size_t p = l.find(tag);
    if (p == sv::npos) continue;
    sv msg = l.substr(p + tag.size());
    if (msg.find("NCCL INFO ") != sv::npos || msg.find("NCCL WARN ") != sv::npos) {
      ++s_.garbled_lines;
      return;
    }
    return ncclMessage(level, l.substr(0, p), msg);
  }
  otherLine(l);
}

void LogParser::feed(sv chunk) {
  while (!chunk.empty()) {
    if (s_.truncated) return;
    size_t nl = chunk.find('\n');
    sv part = chunk.substr(0, nl);
    size_t room = limits_.max_line_bytes - std::min(limits_.max_line_bytes, pending_.size());
    if (part.size() > room) {
      pending_long_ = true;
      part = part.substr(0, room);
    }
    pending_.append(part);
    if (nl == sv::npos) return;
    chunk.remove_prefix(nl + 1);
    if (s_.lines >= limits_.max_lines) {
      s_.truncated = true;
      return;
    }
    if (pending_long_) ++s_.long_lines;
    line(pending_);
    pending_.clear();
    pending_long_ = false;
  }
}

LogSummary LogParser::finish() {
  if (!pending_.empty() && !s_.truncated) {
    if (s_.lines >= limits_.max_lines) {
      s_.truncated = true;
    } else {
      if (pending_long_) ++s_.long_lines;
      line(pending_);
    }
  }
  pending_.clear();
  return std::move(s_);
}

LogSummary parseNcclLog(std::string_view text, LogLimits limits) {
  LogParser p(limits);
  p.feed(text);
  return p.finish();
}

}  // namespace fabricwatch::nccl
