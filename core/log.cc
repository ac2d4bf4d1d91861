#include "core/log.h"

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "core/value_format.h"

namespace fabricwatch::core::log {
namespace {

std::atomic<Level> g_level{Level::kInfo};
std::atomic<Format> g_format{Format::kLogfmt};
std::atomic<void (*)(std::string_view)> g_sink{nullptr};
std::mutex g_write_mu;

std::string nowRfc3339() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

void appendLogfmtValue(std::string& out, std::string_view v) {
  bool quote = v.empty() || v.find_first_of(" =\"\\\n\t") != std::string_view::npos;
  if (quote)
    appendJsonString(out, v);
  else
    out += v;
}

}  // namespace

std::optional<Level> parseLevel(std::string_view s) {
  if (s == "debug") return Level::kDebug;
  if (s == "info") return Level::kInfo;
  if (s == "warn") return Level::kWarn;
  if (s == "error") return Level::kError;
  return std::nullopt;
}

std::optional<Format> parseFormat(std::string_view s) {
  if (s == "logfmt") return Format::kLogfmt;
  if (s == "json") return Format::kJson;
  return std::nullopt;
}

std::string_view levelName(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

void setLevel(Level l) { g_level.store(l); }
void setFormat(Format f) { g_format.store(f); }
bool enabled(Level l) { return l >= g_level.load(std::memory_order_relaxed); }
void setSink(void (*sink)(std::string_view)) { g_sink.store(sink); }

std::string formatLine(Format f, std::string_view time, Level l, std::string_view component,
                       std::string_view msg, Fields fields) {
  std::string out;
  if (f == Format::kJson) {
    out += "{\"time\":";
    appendJsonString(out, time);
    out += ",\"level\":";
    appendJsonString(out, levelName(l));
    out += ",\"component\":";
    appendJsonString(out, component);
    out += ",\"msg\":";
    appendJsonString(out, msg);
    for (const auto& [k, v] : fields) {
      out += ',';
      appendJsonString(out, k);
      out += ':';
      appendJsonString(out, v);
    }
    out += '}';
  } else {
    out += "time=";
    out += time;
    out += " level=";
    out += levelName(l);
    out += " component=";
    appendLogfmtValue(out, component);
    out += " msg=";
    appendLogfmtValue(out, msg);
    for (const auto& [k, v] : fields) {
      out += ' ';
      out += k;
      out += '=';
      appendLogfmtValue(out, v);
    }
  }
  return out;
}

void write(Level l, std::string_view component, std::string_view msg, Fields fields) {
  if (!enabled(l)) return;
  std::string line = formatLine(g_format.load(), nowRfc3339(), l, component, msg, fields);
  if (auto* sink = g_sink.load()) {
    sink(line);
    return;
  }
  line += '\n';
  std::lock_guard lock(g_write_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

std::string captureStderr(const std::function<void()>& fn, size_t max_bytes) {
  std::lock_guard lock(g_write_mu);
  std::fflush(stderr);
  int saved = ::dup(2);
  int mem = ::memfd_create("fabricwatch-stderr", MFD_CLOEXEC);
  if (saved < 0 || mem < 0 || ::dup2(mem, 2) < 0) {
    if (saved >= 0) ::close(saved);
    if (mem >= 0) ::close(mem);
    fn();
    return "";
  }
  struct Restore {
    int saved;
    ~Restore() {
      std::fflush(stderr);
      ::dup2(saved, 2);
      ::close(saved);
    }
  };
  {
    Restore restore{saved};
    fn();
  }
  std::string out(max_bytes, '\0');
  ssize_t n = ::pread(mem, out.data(), out.size(), 0);
  ::close(mem);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

}  // namespace fabricwatch::core::log
