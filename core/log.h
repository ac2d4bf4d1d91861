#pragma once
// Structured logs on stderr: logfmt (default) or JSON lines, each with time, level, component
// and message, then the event's own fields. One line per event; safe from any thread.

#include <atomic>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fabricwatch::core::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class Format { kLogfmt, kJson };

std::optional<Level> parseLevel(std::string_view s);
std::optional<Format> parseFormat(std::string_view s);
std::string_view levelName(Level l);

void setLevel(Level l);
void setFormat(Format f);
bool enabled(Level l);
// Where lines go; stderr by default. Tests point it at a string.
void setSink(void (*sink)(std::string_view line));

using Fields = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// Formats one event. Exposed for tests; write() uses it.
std::string formatLine(Format f, std::string_view time, Level l, std::string_view component,
                       std::string_view msg, Fields fields);
void write(Level l, std::string_view component, std::string_view msg, Fields fields = {});

// Runs `fn` with file descriptor 2 pointed at a memory file and returns what was written to it
// (at most `max_bytes`): for libraries that print to stderr (libibverbs' warnings, provider
// initialisation in fi_getinfo), whose words the caller then logs as structured lines. The log's
// own lines from other threads wait until `fn` returns, so none is lost or captured; `fn` must
// not log itself.
std::string captureStderr(const std::function<void()>& fn, size_t max_bytes = 64 * 1024);

inline void debug(std::string_view c, std::string_view m, Fields f = {}) {
  write(Level::kDebug, c, m, f);
}
inline void info(std::string_view c, std::string_view m, Fields f = {}) {
  write(Level::kInfo, c, m, f);
}
inline void warn(std::string_view c, std::string_view m, Fields f = {}) {
  write(Level::kWarn, c, m, f);
}
inline void error(std::string_view c, std::string_view m, Fields f = {}) {
  write(Level::kError, c, m, f);
}

}  // namespace fabricwatch::core::log
