// The lines around NCCL's own, as a table of patterns: PyTorch's ProcessGroupNCCL (the
// watchdog's timeouts, "NCCL error in: ..." and the ncclSystemError / ncclInternalError /
// ncclRemoteError lines with NCCL's "Last error:"), DeepSpeed's and Accelerate's tracebacks
// around them, nccl-tests' failures and result rows, libfabric's own warnings, the dynamic
// linker's symbol version errors and NCCL's version line printed without a prefix.
#include <set>

#include "core/utf8.h"
#include "nccl/log_parse_state.h"
#include "nccl/log_text.h"

namespace fabricwatch::nccl {
namespace {

using namespace text;

// Launcher prefixes at the start of a line ("[rank3]: ", "[trainer0|0]:", "[1,0]<stdout>:").
sv stripLauncher(sv l) {
  l = trimSpace(l);
  while (startsWith(l, "[")) {
    size_t rb = l.find(']');
    if (rb == sv::npos || rb > 40) break;
    sv rest = l.substr(rb + 1);
    if (startsWith(rest, "<stdout>:") || startsWith(rest, "<stderr>:")) rest.remove_prefix(9);
    if (!rest.empty() && rest.front() == ':') rest.remove_prefix(1);
    l = trimSpace(rest);
  }
  return l;
}

// PyTorch's words for NCCL's result codes (ncclGetErrorString).
const char* errorName(sv l) {
  static constexpr std::pair<sv, const char*> kWords[] = {
      {"ncclSystemError", "ncclSystemError"},
      {"ncclInternalError", "ncclInternalError"},
      {"ncclRemoteError", "ncclRemoteError"},
      {"ncclInvalidUsage", "ncclInvalidUsage"},
      {"ncclInvalidArgument", "ncclInvalidArgument"},
      {"ncclUnhandledCudaError", "ncclUnhandledCudaError"},
      {"unhandled system error", "ncclSystemError"},
      {"remote process exited or there was a network error", "ncclRemoteError"},
      {"internal error", "ncclInternalError"},
      {"invalid usage", "ncclInvalidUsage"},
      {"invalid argument", "ncclInvalidArgument"},
      {"unhandled cuda error", "ncclUnhandledCudaError"},
  };
  for (const auto& [w, name] : kWords)
    if (contains(l, w)) return name;
  return "";
}

FrameworkError* lastFrameworkError(ParseState& st, uint64_t within) {
  auto& fe = st.s.framework_errors;
  if (fe.empty() || st.s.lines - fe.back().line > within) return nullptr;
  return &fe.back();
}

void onLastErrorMarker(ParseState& st, sv l);

// PyTorch 2.0 printed the report, the error class and NCCL's last error on one line.
void inlineLastError(ParseState& st, sv l) {
  if (size_t p = l.find("Last error:"); p != sv::npos) onLastErrorMarker(st, l.substr(p));
}

void onFrameworkError(ParseState& st, sv l) {
  st.noteAbort();
  std::string text = core::sanitizeUtf8(stripLauncher(l), st.limits.max_text_bytes);
  std::string name = errorName(l);
  auto& fe = st.s.framework_errors;
  bool seen = false;
  for (auto& e : fe) {
    if (e.text == text) {
      ++e.count;
      seen = true;
      break;
    }
  }
  if (!seen && fe.size() < 8)
    fe.push_back({st.s.lines, 1, text, name, st.origin.launcher_rank, "", 0});
  inlineLastError(st, l);
}

// "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting
// prematurely." after PyTorch's "NCCL error in:" line names the error class of that report.
void onErrorName(ParseState& st, sv l) {
  st.noteAbort();
  std::string name = errorName(l);
  if (FrameworkError* e = lastFrameworkError(st, 3);
      e && (e->nccl_error.empty() || e->nccl_error == name)) {
    e->nccl_error = name;
    return inlineLastError(st, l);
  }
  onFrameworkError(st, l);
}

// NCCL's last WARN text, as PyTorch repeats it after "Last error:": read as the WARN it was.
void onLastError(ParseState& st, sv text) {
  if (FrameworkError* e = lastFrameworkError(st, 6); e && e->last_error.empty()) {
    e->last_error = core::sanitizeUtf8(text, st.limits.max_text_bytes);
    e->last_error_line = st.s.lines;
  }
  handleWarn(st, text);
}

void onLastErrorMarker(ParseState& st, sv l) {
  sv rest = trimSpace(l.substr(l.find("Last error:") + 11));
  if (rest.empty()) {
    st.expect_last_error = true;
  } else {
    onLastError(st, rest);
  }
}

// "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE,
// NumelIn=.., NumelOut=.., Timeout(ms)=600000) ran for 600060 milliseconds before timing out."
void onWatchdog(ParseState& st, sv l) {
  st.noteAbort();
  Watchdog& w = st.s.watchdog;
  size_t at = l.find("Watchdog caught");
  size_t r = l.rfind("[Rank ", at);
  if (w.count++ == 0) {
    w.line = st.s.lines;
    // From "[Rank N] Watchdog caught": not the progress bar or the exception it is glued to.
    w.text = core::sanitizeUtf8(l.substr(r == sv::npos ? at : r), st.limits.max_text_bytes);
  }
  if (r != sv::npos && w.ranks.size() < st.limits.max_items)
    if (auto rank = toInt(l.substr(r + 6))) w.ranks.insert(*rank);
  if (auto seq = intAfter(l, "SeqNum=")) {
    w.seq_min = w.seq_min < 0 ? *seq : std::min(w.seq_min, *seq);
    w.seq_max = std::max(w.seq_max, *seq);
  }
  sv op = between(l, "OpType=", ",)");
  if (!op.empty() && w.ops.size() < 8) w.ops.insert(core::sanitizeUtf8(op, 40));
  if (auto t = intAfter(l, "Timeout(ms)=")) w.timeout_ms = *t;
  if (auto ran = intAfter(l, "ran for ")) w.ran_ms = std::max(w.ran_ms, *ran);
}

void onAbort(ParseState& st, sv) { st.noteAbort(); }

// libfabric's own warning that the efa provider found nothing usable.
void onLibfabricWarn(ParseState& st, sv l) {
  if (!contains(l, "provider efa output empty list")) return;
  // From libfabric's own prefix ("libfabric:85:...:fi_getinfo_():1392<warn>"), when it is there
  // (a crash found by nccl_log_fuzz: corpus/nccl_log_fuzz/libfabric_warn_without_prefix).
  size_t at = l.find("libfabric");
  sv from = at == sv::npos ? trimSpace(l) : l.substr(at);
  if (size_t bar = from.find(" | "); bar != sv::npos) from = from.substr(0, bar);
  st.add("critical", "efa_not_usable", from);
}

void onVersionLine(ParseState& st, sv l) {
  if (!st.s.nccl_version.empty()) return;
  sv v = l.substr(l.find("NCCL version ") + 13);
  size_t n = 0;
  while (n < v.size() && (isDigit(v[n]) || v[n] == '.')) ++n;
  if (n == 0 || std::count(v.begin(), v.begin() + n, '.') != 2) return;
  st.s.nccl_version = std::string(v.substr(0, n));
  if (size_t c = v.find("+cuda"); c != sv::npos) {
    sv cv = v.substr(c + 5);
    size_t m = 0;
    while (m < cv.size() && (isDigit(cv[m]) || cv[m] == '.')) ++m;
    st.s.nccl_cuda_version = std::string(cv.substr(0, m));
  }
}

// The dynamic linker, when a container's libraries do not match the host's (rdma-core
// providers against an older libibverbs, libfabric against libefa, a glibc too old):
// "libibverbs.so.1: version `IBVERBS_PRIVATE_34' not found (required by ...libmlx5.so.1)".
void onSymbolVersion(ParseState& st, sv l) {
  size_t ver = l.find("version `");
  if (ver == sv::npos) ver = l.find("version '");
  if (ver != sv::npos && contains(l.substr(ver), "' not found"))
    st.add("critical", "symbol_version", l);
}

void onVerbsDriver(ParseState& st, sv l) { st.add("info", "ibverbs_driver", l); }

// NCCL's WARN text pasted without its prefix ("NET/OFI Unexpected number of remote rails ...").
void onBareOfi(ParseState& st, sv l) {
  sv m = stripLauncher(l);
  for (sv w : {"Unexpected", "failed", "error", "Couldn't", "Unable", "Only EFA"}) {
    if (contains(m, w)) return handleWarn(st, m);
  }
}

// nccl-tests' result rows ("   1048576    262144  float  sum  -1  123.4 ..."): traffic flowed.
void onResultRow(ParseState& st, sv l) {
  static const std::set<sv> kTypes = {"float", "half",   "bfloat16", "double",
                                      "int8",  "uint8",  "int32",    "uint32",
                                      "int64", "uint64", "fp8_e4m3", "fp8_e5m2"};
  sv t = trimSpace(l);
  if (t.empty() || !isDigit(t.front())) return;
  size_t n = 0, typed = 0;
  for (size_t p = 0; p < t.size() && n < 16;) {
    while (p < t.size() && t[p] == ' ') ++p;
    size_t e = t.find(' ', p);
    sv tok = t.substr(p, e == sv::npos ? sv::npos : e - p);
    if (!tok.empty()) {
      if (n == 2 && kTypes.count(tok)) typed = 1;
      ++n;
    }
    if (e == sv::npos) break;
    p = e;
  }
  if (typed && n >= 8) st.s.progress_line = st.s.lines;
}

// nccl-tests' device table ("#  Rank  2 Group  0 Pid  41879 on dgx-h100-018 device  2 [0x3a]
// NVIDIA H100"): every rank's host, also those whose NCCL lines are not in the excerpt.
void onTestDevice(ParseState& st, sv l) {
  sv host = between(l, " on ", " ");
  auto rank = intAfter(l, "Rank ");
  if (host.empty() || !rank || !contains(l, " device ")) return;
  if (st.s.hosts.size() < st.limits.max_items) st.s.hosts.insert(core::sanitizeUtf8(host, 64));
  st.s.ranks = std::max(st.s.ranks, *rank + 1);
}

struct OtherPattern {
  sv text;
  void (*handle)(ParseState&, sv);
  bool last;  // stop after it
};

constexpr OtherPattern kOtherPatterns[] = {
    {"NCCL version ", onVersionLine, false},
    {"#  Rank ", onTestDevice, true},
    {"#   Rank ", onTestDevice, true},
    {"Watchdog caught collective operation timeout", onWatchdog, true},
    {"NCCL error in:", onFrameworkError, true},
    {"NCCL error:", onFrameworkError, true},
    {"NCCL Error ", onFrameworkError, true},
    {"Test NCCL failure", onFrameworkError, true},
    {"ncclSystemError", onErrorName, true},
    {"ncclInternalError", onErrorName, true},
    {"ncclRemoteError", onErrorName, true},
    {"ncclInvalidUsage", onErrorName, true},
    {"ncclInvalidArgument", onErrorName, true},
    {"ncclUnhandledCudaError", onErrorName, true},
    {"Last error:", onLastErrorMarker, true},
    {"Some NCCL operations have failed or timed out", onAbort, true},
    {"Exception (either an error or timeout) detected by watchdog", onAbort, true},
    {"terminate called after throwing", onAbort, true},
    {"<warn>", onLibfabricWarn, true},
    {"' not found", onSymbolVersion, true},
    {"libibverbs: Warning: couldn't load driver", onVerbsDriver, true},
    {"libibverbs: Warning: no userspace device-specific driver", onVerbsDriver, true},
    {"NET/OFI ", onBareOfi, true},
    {"", onResultRow, true},
};

}  // namespace

void handleOtherLine(ParseState& st, sv l) {
  if (st.expect_last_error) {
    sv body = stripLauncher(l);
    if (!body.empty()) {
      st.expect_last_error = false;
      return onLastError(st, body);
    }
  }
  if (contains(l, "# Avg bus bandwidth")) st.s.progress_line = st.s.lines;
  for (const auto& p : kOtherPatterns) {
    if (!contains(l, p.text)) continue;
    p.handle(st, l);
    if (p.last) return;
  }
}

}  // namespace fabricwatch::nccl
