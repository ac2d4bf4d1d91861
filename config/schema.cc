#include "config/schema.h"

#include <cctype>
#include <map>
#include <sstream>

#include "config/duration.h"
#include "config/keys.h"

namespace fabricwatch::config {
namespace {

// Matches a dotted path against a pattern; on success stores the '*' segment in wild. With
// `prefix_only`, `path` must name a table above the pattern's key.
bool matches(std::string_view pattern, std::string_view path, std::string* wild, bool prefix_only) {
  size_t pi = 0, si = 0;
  while (si < path.size()) {
    if (pi >= pattern.size()) return false;
    size_t pe = pattern.find('.', pi);
    size_t se = path.find('.', si);
    auto pseg = pattern.substr(pi, pe == std::string_view::npos ? std::string_view::npos : pe - pi);
    auto sseg = path.substr(si, se == std::string_view::npos ? std::string_view::npos : se - si);
    if (pseg == "*") {
      if (wild) *wild = std::string(sseg);
    } else if (pseg != sseg) {
      return false;
    }
    pi = pe == std::string_view::npos ? pattern.size() : pe + 1;
    si = se == std::string_view::npos ? path.size() : se + 1;
  }
  return prefix_only ? pi < pattern.size() : pi >= pattern.size();
}

}  // namespace

const char* keyTypeName(KeyType t) {
  switch (t) {
    case KeyType::kString:
      return "a string";
    case KeyType::kInteger:
      return "an integer";
    case KeyType::kNumber:
      return "a number";
    case KeyType::kBoolean:
      return "true or false";
    case KeyType::kStringList:
      return "an array of strings";
  }
  return "a value";
}

Schema::Schema(std::vector<TableDef> tables) : tables_(std::move(tables)) {}

std::shared_ptr<const Schema> Schema::daemon() {
  static const auto kDaemon = std::make_shared<const Schema>(
      std::vector<TableDef>{webTable(), logTable(), hostTable(), collectTable(), peerTable(),
                            probeTable(), probesTable(), policyTable(), topologyTable()});
  return kDaemon;
}

std::shared_ptr<const Schema> Schema::with(std::vector<TableDef> more) {
  std::vector<TableDef> all = daemon()->tables();
  for (auto& t : more) all.push_back(std::move(t));
  return std::make_shared<const Schema>(std::move(all));
}

const KeyDef* Schema::find(std::string_view path, std::string* wild) const {
  for (const auto& t : tables_)
    for (const auto& k : t.keys)
      if (matches(k.path, path, wild, false)) return &k;
  return nullptr;
}

bool Schema::isTable(std::string_view path) const {
  for (const auto& t : tables_)
    for (const auto& k : t.keys)
      if (matches(k.path, path, nullptr, true)) return true;
  return false;
}

std::vector<std::string> Schema::keyPaths() const {
  std::vector<std::string> out;
  for (const auto& t : tables_)
    for (const auto& k : t.keys) out.push_back(k.path);
  return out;
}

std::string derivedFlagName(std::string_view key_path) {
  std::string out(key_path);
  if (out.rfind("probes.", 0) == 0) out.erase(5, 1);  // probes.fabric.x -> probe.fabric.x
  for (char& c : out)
    if (c == '_') c = '-';
  return out;
}

std::optional<KeyValue> flagValue(KeyType type, const std::string& text, std::string* why) {
  KeyValue v;
  v.type = type;
  switch (type) {
    case KeyType::kString:
      v.text = text;
      return v;
    case KeyType::kBoolean:
      if (text != "true" && text != "false") {
        *why = "expected true or false, got \"" + text + "\"";
        return std::nullopt;
      }
      v.boolean = text == "true";
      return v;
    case KeyType::kInteger: {
      // As TOML reads an integer: an optional sign and at most 18 digits (no overflow).
      size_t digits = text.size() - (!text.empty() && (text[0] == '-' || text[0] == '+'));
      if (digits == 0 || digits > 18 ||
          text.find_first_not_of("0123456789", text.size() - digits) != std::string::npos) {
        *why = "expected an integer, got \"" + text + "\"";
        return std::nullopt;
      }
      v.integer = std::stoll(text);
      return v;
    }
    case KeyType::kNumber: {
      std::istringstream in(text);
      in.imbue(std::locale::classic());
      if (!(in >> v.number) || !in.eof()) {
        *why = "expected a number, got \"" + text + "\"";
        return std::nullopt;
      }
      return v;
    }
    case KeyType::kStringList:
      for (size_t start = 0; start <= text.size();) {
        size_t comma = text.find(',', start);
        std::string item =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty()) v.list.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return v;
  }
  return std::nullopt;
}

std::optional<std::string> rangeProblem(int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return std::nullopt;
  return "value " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "]";
}

std::optional<std::string> rangeProblem(double v, double lo, double hi) {
  if (v >= lo && v <= hi) return std::nullopt;
  std::ostringstream msg;
  msg.imbue(std::locale::classic());
  msg << "value " << v << " out of range [" << lo << ", " << hi << "]";
  return msg.str();
}

std::pair<std::optional<Duration>, std::optional<std::string>> parseDurationIn(
    const std::string& text, Duration lo, Duration hi) {
  auto d = parseDuration(text);
  if (!d)
    return {std::nullopt, "bad duration \"" + text +
                              "\": use a number with a unit (ms, s, m, h, d), e.g. \"30s\" or "
                              "\"1m30s\""};
  if (*d < lo || *d > hi)
    return {std::nullopt, "duration \"" + text + "\" out of range [" + formatDuration(lo) + ", " +
                              formatDuration(hi) + "]"};
  return {*d, std::nullopt};
}

std::optional<uint64_t> parseByteSize(const std::string& s) {
  size_t n = 0;
  while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
  if (n == 0 || n > 12) return std::nullopt;
  uint64_t v = std::stoull(s.substr(0, n));
  static const std::map<std::string, uint64_t> kUnits = {
      {"", 1},      {"B", 1},        {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
      {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000}};
  auto it = kUnits.find(s.substr(n));
  if (it == kUnits.end()) return std::nullopt;
  return v * it->second;
}

std::pair<std::optional<uint64_t>, std::optional<std::string>> parseByteSizeIn(
    const std::string& text, uint64_t lo, uint64_t hi) {
  auto b = parseByteSize(text);
  if (!b || *b < lo || *b > hi)
    return {std::nullopt, "size \"" + text + "\" must be " + std::to_string(lo) + " bytes to " +
                              std::to_string(hi >> 20) +
                              " MiB, written as e.g. \"64B\", \"4KiB\" or \"1MiB\""};
  return {*b, std::nullopt};
}

}  // namespace fabricwatch::config
