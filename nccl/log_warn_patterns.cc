// NCCL's WARN messages, as a table of patterns: each becomes a finding of a kind the verdict
// knows (log_advice.cc says what each means and what to do). Completion errors are parsed into
// their fields in the wording of every release: 2.4-2.9 "Got completion with error 12, opcode
// 1, len 0, vendor err 129", 2.10-2.19 "Got completion from peer P with error 4, ... (Send)
// localGid G remoteGid G", 2.20-2.27 "with status=12 opcode=129 len=65536 vendor err 129 (Recv)
// ... hca mlx5_3", 2.28-2.29 "with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) ...
// vendor_err=129".
#include "core/utf8.h"
#include "nccl/log_parse_state.h"
#include "nccl/log_text.h"

namespace fabricwatch::nccl {
namespace {

using namespace text;

// The text after `key` up to the next space, or "" (a GID, a peer address, an HCA).
std::string word(sv m, sv key) {
  size_t p = m.find(key);
  if (p == sv::npos) return "";
  sv rest = m.substr(p + key.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return core::sanitizeUtf8(rest.substr(0, rest.find(' ')), 64);
}

Completion parseCompletion(sv m) {
  Completion c;
  if (size_t p = m.find("from peer "); p != sv::npos) {
    sv peer = m.substr(p + 10);
    size_t with = startsWith(peer, "with ") ? 0 : peer.find(" with ");  // 2.18 printed no peer
    if (with != 0) c.peer = core::sanitizeUtf8(trimSpace(peer.substr(0, with)), 96);
  }
  if (size_t p = m.find("with error "); p != sv::npos) {
    c.status = static_cast<int>(toInt(m.substr(p + 11)).value_or(-1));
  } else if (size_t q = m.find("status="); q != sv::npos) {
    sv st = m.substr(q + 7);
    if (!st.empty() && isDigit(st.front())) {
      c.status = static_cast<int>(toInt(st).value_or(-1));
    } else if (size_t open = st.find('('); open != sv::npos && open < 40) {
      c.status = static_cast<int>(toInt(st.substr(open + 1)).value_or(-1));  // NAME(12)
    }
  }
  if (auto v = intAfter(m, "vendor err ")) c.vendor_err = *v;
  if (auto v = intAfter(m, "vendor_err=")) c.vendor_err = *v;
  if (contains(m, "(Send)") || contains(m, "req_type=Send")) c.direction = "Send";
  if (contains(m, "(Recv)") || contains(m, "req_type=Recv")) c.direction = "Recv";
  c.local_gid = word(m, "localGid ");
  if (size_t r = m.find("remoteGid"); r != sv::npos) {
    sv rest = m.substr(r + 9);
    if (!rest.empty() && rest.front() == 's') rest.remove_prefix(1);
    c.remote_gid = word(rest, "");
  }
  c.hca = word(m, " hca ");
  return c;
}

void onCompletion(ParseState& st, sv msg) {
  LogSummary& s = st.s;
  Completion c = parseCompletion(msg);
  for (auto& e : s.completions) {
    if (e.status == c.status && e.direction == c.direction) {
      ++e.count;
      return;
    }
  }
  if (s.completions.size() >= 8) return;
  c.line = s.lines;
  c.count = 1;
  c.text = core::sanitizeUtf8(msg, st.limits.max_text_bytes);
  c.process = st.origin.process;
  c.after_progress = s.progress_line > 0;
  s.completions.push_back(std::move(c));
}

struct WarnPattern {
  sv text;
  const char* severity;
  const char* kind;
};

// First match wins. Kinds are what log_advice.cc explains.
constexpr WarnPattern kWarnPatterns[] = {
    {"Got async event", "critical", "ib_async_event"},
    {"async fatal event", "critical", "ib_async_event"},
    {"Call to ibv_", "critical", "ibv_call"},
    {"ibv_modify_qp", "critical", "ibv_call"},
    {"read failed in ncclIbRoceGetVersionNum", "critical", "ib_gid_type"},
    {"Only EFA provider is supported", "critical", "efa_not_usable"},
    {"fi_getinfo", "critical", "efa_not_usable"},
    {"optimal provider", "critical", "efa_not_usable"},
    {"completed with error", "critical", "ofi_request"},
    {"Unexpected number of remote rails", "critical", "ofi_rails"},
    {"Unable to register memory", "critical", "ofi_mr"},
    {"aws-ofi-nccl initialization failed", "critical", "ofi_init_failed"},
    {"Couldn't open AV", "critical", "ofi_init"},
    {"Creating new endpoint", "critical", "ofi_init"},
    {"Unable to find a protocol", "critical", "ofi_init"},
    {"Initializing plugin failed", "critical", "ofi_init"},
    {"Failed to init", "critical", "ofi_init"},
    {"NET/OFI Couldn't", "critical", "ofi_init"},
    {"Cuda failure", "critical", "cuda"},
    {"CUDA failure", "critical", "cuda"},
    {"Failed to find CUDA library", "critical", "cuda"},
    {"dlvsym failed", "warning", "symbol_version"},
    {"Failed to open libibverbs", "warning", "ibverbs_missing"},
    {"NET/IB : No device found", "warning", "ib_no_device"},
    {"Could not find real path of", "critical", "pci_topology"},
    {"SHARP", "critical", "collnet_sharp"},
    {"no socket interface found", "critical", "socket_interface"},
    {"neither AF_INET", "critical", "socket_interface"},
    {"Socket creation failed", "critical", "socket_interface"},
    {"Connection closed by remote peer", "critical", "socket_remote"},
    {"Connection reset by peer", "critical", "socket_remote"},
    {"Broken pipe", "critical", "socket_remote"},
    {"Call to recv from", "critical", "socket_remote"},
    {"socketProgressOpt", "critical", "socket_remote"},
    {"Socket recv failed while polling", "critical", "proxy_failed"},
    {"Proxy Call to rank", "critical", "proxy_failed"},
    {"Failed to execute operation", "critical", "proxy_failed"},
    {"Error while creating shared memory segment", "critical", "shm"},
    {"NET/OFI", "warning", "ofi_warn"},
};

}  // namespace

void handleWarn(ParseState& st, sv msg) {
  if (contains(msg, "Got completion") && (contains(msg, "error") || contains(msg, "status=")))
    return onCompletion(st, msg);
  for (const auto& p : kWarnPatterns) {
    if (contains(msg, p.text)) {
      st.add(p.severity, p.kind, msg);
      return;
    }
  }
  st.add("warning", "nccl_warn", msg);
}

}  // namespace fabricwatch::nccl
