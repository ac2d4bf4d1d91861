// Splitting NCCL logs into lines and finding who wrote each: NCCL's `host:pid:tid [cudaDev]`
// prefix behind whatever a launcher or log shipper put before it. What the messages mean is in
// the tables of log_info_patterns.cc, log_warn_patterns.cc and log_other_lines.cc.
#include "nccl/log_parse.h"

#include <algorithm>

#include "core/utf8.h"
#include "nccl/log_parse_state.h"
#include "nccl/log_text.h"

namespace fabricwatch::nccl {
namespace {

using namespace text;

// The length of an ISO 8601 time stamp at the start of s ("2025-05-16T16:39:51.208-07:00"), 0
// when there is none: CloudWatch's console glues it to the host name of the NCCL prefix.
size_t isoTimestampLength(sv s) {
  auto digits = [&](size_t at, size_t n) {
    if (at + n > s.size()) return false;
    for (size_t i = at; i < at + n; ++i)
      if (!isDigit(s[i])) return false;
    return true;
  };
  if (!digits(0, 4) || s.size() < 19 || s[4] != '-' || !digits(5, 2) || s[7] != '-' ||
      !digits(8, 2) || s[10] != 'T' || !digits(11, 2) || s[13] != ':' || !digits(14, 2) ||
      s[16] != ':' || !digits(17, 2))
    return 0;
  size_t n = 19;
  if (n < s.size() && s[n] == '.') {
    ++n;
    while (n < s.size() && isDigit(s[n])) ++n;
  }
  if (n < s.size() && s[n] == 'Z') return n + 1;
  if (n < s.size() && (s[n] == '+' || s[n] == '-') && digits(n + 1, 2)) {
    n += 3;
    if (n < s.size() && s[n] == ':') ++n;
    if (digits(n, 2)) n += 2;
  }
  return n;
}

// The origin of an NCCL prefix: the last token of the form HOST:PID:TID before the level,
// whatever precedes it ("[1,3]<stdout>:host:12:34", "[2026-01-01 10:00:00] host:12:34",
// "[rank3]:host:12:34", "2025-05-16T16:39:51.208-07:00host:12:34"), and the [cudaDev] after it.
bool parseOrigin(sv prefix, LineOrigin& o, std::string& device) {
  size_t end = prefix.size();
  while (end > 0) {
    while (end > 0 && prefix[end - 1] == ' ') --end;
    // Nothing but spaces left: without this a prefix starting with a space looped for ever
    // (found by nccl_log_fuzz; tests/fuzz/corpus/nccl_log_fuzz/leading_space_prefix).
    if (end == 0) break;
    size_t start = prefix.rfind(' ', end - 1);
    start = start == sv::npos ? 0 : start + 1;
    sv tok = prefix.substr(start, end - start);
    size_t c2 = tok.rfind(':');
    size_t c1 = c2 == sv::npos || c2 == 0 ? sv::npos : tok.rfind(':', c2 - 1);
    if (c1 != sv::npos && c2 > c1 + 1 && c2 + 1 < tok.size()) {
      sv p = tok.substr(c1 + 1, c2 - c1 - 1), t = tok.substr(c2 + 1);
      if (std::all_of(p.begin(), p.end(), isDigit) && std::all_of(t.begin(), t.end(), isDigit)) {
        sv h = tok.substr(0, c1);
        if (size_t cut = h.find_last_of(">]|"); cut != sv::npos) h = h.substr(cut + 1);
        while (!h.empty() && h.front() == ':') h.remove_prefix(1);
        h.remove_prefix(isoTimestampLength(h));  // before the colons of the time are cut at
        if (size_t cut = h.rfind(':'); cut != sv::npos) h = h.substr(cut + 1);
        if (h.empty()) return false;
        o.known = true;
        o.host = core::sanitizeUtf8(h, 64);
        o.pid = std::string(p);
        o.process = o.host + ":" + o.pid;
        sv after = trimSpace(prefix.substr(end));
        if (startsWith(after, "[")) device = std::string(after.substr(1, after.find(']') - 1));
        return true;
      }
    }
    if (start == 0) break;
    end = start;
  }
  return false;
}

// torchrun's "[rank3]:" (and similar launchers' "[name]:") at the start of a line.
std::string launcherRank(sv l) {
  l = trimSpace(l);
  if (!startsWith(l, "[")) return "";
  size_t rb = l.find("]:");
  if (rb == sv::npos || rb > 32) return "";
  return core::sanitizeUtf8(l.substr(1, rb - 1), 32);
}

// CloudWatch's console shows "message | message" when a line has been parsed into fields: the
// same NCCL message twice is one line, not two ranks' writes mixed.
bool duplicateDisplay(sv msg, size_t second_tag, size_t tag_len, sv& first) {
  size_t bar = msg.rfind(" | ", second_tag);
  if (bar == sv::npos) return false;
  sv a = trimSpace(msg.substr(0, bar)), b = trimSpace(msg.substr(second_tag + tag_len));
  if (a != b) return false;
  first = a;
  return true;
}

}  // namespace

bool isTrace(sv msg) {
  size_t arrow = msg.find(" -> ");
  if (arrow == sv::npos || arrow >= 64) return false;
  sv loc = msg.substr(0, arrow);
  size_t colon = loc.rfind(':');
  return colon != sv::npos && loc.find(' ') == sv::npos && loc.find('.') != sv::npos &&
         toInt(loc.substr(colon + 1)) && toInt(trimSpace(msg.substr(arrow + 4)));
}

Finding* ParseState::add(std::string severity, std::string kind, sv text) {
  std::string t = core::sanitizeUtf8(trimSpace(text), limits.max_text_bytes);
  auto key = std::make_pair(kind, t);
  if (auto it = finding_index_.find(key); it != finding_index_.end()) {
    ++s.findings[it->second].count;
    return &s.findings[it->second];
  }
  if (s.findings.size() >= limits.max_findings) {
    ++s.findings_dropped;
    return nullptr;
  }
  finding_index_[key] = s.findings.size();
  Finding f;
  f.severity = std::move(severity);
  f.kind = std::move(kind);
  f.text = std::move(t);
  f.line = s.lines;
  f.count = 1;
  f.process = origin.process;
  const ProcessState& p = process();
  f.net_dev = p.net_dev;
  f.channel_line = p.net_line;
  s.findings.push_back(std::move(f));
  return &s.findings.back();
}

void ParseState::addNic(Nic n) {
  for (const auto& e : s.nics) {
    if (e.net == n.net && e.device == n.device && e.port == n.port) return;
  }
  if (s.nics.size() < limits.max_items) s.nics.push_back(std::move(n));
}

void ParseState::setEnv(sv name, sv value) {
  std::string k(name);
  if (!s.env.count(k) && s.env.size() >= limits.max_items) return;
  if (!value.empty() && value.back() == '.') value.remove_suffix(1);  // param.cc adds a '.'
  s.env[k] = core::sanitizeUtf8(trimSpace(value), 200);
  if (!s.env_lines.count(k)) s.env_lines[k] = s.lines;
}

ProcessState& ParseState::process() {
  std::string key = origin.known ? origin.process : "";
  if (auto it = procs_.find(key); it != procs_.end()) return it->second;
  if (procs_.size() >= 4 * limits.max_items) return procs_["~more processes"];
  return procs_[key];
}

void ParseState::finish() {
  // Where a process warned, the WARN is the cause and its trace says where it failed.
  for (auto& f : s.findings) {
    auto it = procs_.find(f.process);
    if (it != procs_.end() && it->second.trace_warn_line == f.line && f.trace.empty()) {
      f.trace = it->second.trace_text;
      f.trace_line = it->second.trace_line;
    }
  }
  // An error trace is a failure only where a WARN or an abort goes with it.
  if (s.abort_line == 0) return;
  for (const auto& [name, p] : procs_) {
    if (p.trace_line == 0 || p.warn_line != 0) continue;
    origin = LineOrigin{};
    origin.known = !name.empty();
    origin.process = name;
    uint64_t line = s.lines;
    s.lines = p.trace_line;
    add("critical", "nccl_trace", p.trace_text);
    s.lines = line;
  }
}

LogParser::LogParser(LogLimits limits)
    : limits_(limits), state_(std::make_unique<ParseState>(limits)) {}
LogParser::~LogParser() = default;
LogParser::LogParser(LogParser&&) noexcept = default;
LogParser& LogParser::operator=(LogParser&&) noexcept = default;

void LogParser::line(sv l) {
  ParseState& st = *state_;
  LogSummary& s = st.s;
  ++s.lines;
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  st.origin = LineOrigin{};
  st.origin.launcher_rank = launcherRank(l);
  for (sv level : {"INFO", "WARN"}) {
    std::string tag = "NCCL " + std::string(level) + " ";
    size_t p = l.find(tag);
    if (p == sv::npos) continue;
    sv msg = l.substr(p + tag.size());
    size_t again = std::min(msg.find("NCCL INFO "), msg.find("NCCL WARN "));
    if (again != sv::npos && !duplicateDisplay(msg, again, tag.size(), msg)) {
      ++s.garbled_lines;
      return;
    }
    ++s.nccl_lines;
    st.expect_last_error = false;
    std::string device;
    if (parseOrigin(l.substr(0, p), st.origin, device)) {
      if (s.hosts.size() < limits_.max_items) s.hosts.insert(st.origin.host);
      if (s.processes.size() < 4 * limits_.max_items) s.processes.insert(st.origin.process);
      if (!device.empty() && s.devices.size() < 4 * limits_.max_items)
        s.devices.insert(st.origin.host + ":" + core::sanitizeUtf8(device, 8));
    }
    if (level == "WARN") {
      // "[0] misc/ibvwrap.cc:187 NCCL WARN Call to ...": keep the source location with the text.
      // The location is "file.cc:NNN" or aws-ofi-nccl's "function:NNN": one colon, then digits.
      sv before = trimSpace(l.substr(0, p));
      sv where = before.substr(before.rfind(' ') == sv::npos ? 0 : before.rfind(' ') + 1);
      size_t colon = where.find(':');
      bool located = colon != sv::npos && colon > 0 && where.rfind(':') == colon &&
                     !startsWith(where, "[") && toInt(where.substr(colon + 1));
      ProcessState& proc = st.process();
      if (proc.warn_line == 0) proc.warn_line = s.lines;
      proc.last_warn_line = s.lines;
      proc.trace_line = 0;  // the trace that matters is the one after this WARN
      std::string full = (located ? std::string(where) + " " : "") + std::string(trimSpace(msg));
      return handleWarn(st, full);
    }
    msg = trimSpace(msg);
    if (isTrace(msg)) {
      ProcessState& proc = st.process();
      if (proc.benign_next) return;  // the probe it announced failed, as expected
      if (proc.trace_line == 0) {
        proc.trace_line = s.lines;
        proc.trace_warn_line = proc.last_warn_line;
        proc.trace_text = core::sanitizeUtf8(msg, limits_.max_text_bytes);
      }
      return;
    }
    st.process().benign_next = false;
    return handleInfo(st, msg);
  }
  handleOtherLine(st, l);
}

bool LogParser::stopped() const { return state_->s.truncated; }

void LogParser::feed(sv chunk) {
  LogSummary& s = state_->s;
  if (s.truncated || chunk.empty()) return;
  // The byte bound holds whether or not the input has newlines (/dev/zero has none).
  if (s.bytes + chunk.size() > limits_.max_bytes) {
    chunk = chunk.substr(0, limits_.max_bytes - s.bytes);
    s.bytes = limits_.max_bytes;
    feedLines(chunk);
    s.truncated = true;
    return;
  }
  s.bytes += chunk.size();
  feedLines(chunk);
}

void LogParser::feedLines(sv chunk) {
  LogSummary& s = state_->s;
  while (!chunk.empty()) {
    if (s.truncated) return;
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
    if (s.lines >= limits_.max_lines) {
      s.truncated = true;
      return;
    }
    if (pending_long_) ++s.long_lines;
    line(pending_);
    pending_.clear();
    pending_long_ = false;
  }
}

LogSummary LogParser::finish() {
  LogSummary& s = state_->s;
  if (!pending_.empty() && !s.truncated) {
    if (s.lines >= limits_.max_lines) {
      s.truncated = true;
    } else {
      if (pending_long_) ++s.long_lines;
      line(pending_);
    }
  }
  pending_.clear();
  state_->finish();
  LogSummary out = std::move(s);
  state_ = std::make_unique<ParseState>(limits_);
  return out;
}

LogSummary parseNcclLog(std::string_view text, LogLimits limits) {
  LogParser p(limits);
  p.feed(text);
  return p.finish();
}

}  // namespace fabricwatch::nccl
