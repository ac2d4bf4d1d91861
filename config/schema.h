#pragma once
// The configuration's schema as data: every key the loader and the flags accept. A key knows its
// dotted path, its type, the setter that checks a value and stores it, and optionally the flag
// that sets it as well; the file and the flag go through that one setter, so they can never
// accept different values. Keys come in tables: the daemon's own subsystems declare theirs in
// config/*_keys.cc (Schema::daemon()), and whatever registers itself (a probe kind) brings its
// table with its registration, built with TableKeys over a struct of its own that the
// configuration keeps for it (Config::tables).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace fabricwatch::config {

// A key's type in the file; durations and byte sizes are strings there ("30s", "1MiB").
enum class KeyType { kString, kInteger, kNumber, kBoolean, kStringList };
const char* keyTypeName(KeyType t);

// A value as the file or a flag gave it, already of the key's type.
struct KeyValue {
  KeyType type = KeyType::kString;
  std::string text;  // kString
  int64_t integer = 0;
  double number = 0;
  bool boolean = false;
  std::vector<std::string> list;  // kStringList
};

enum class KeyOrigin { kFile, kFlag };

struct KeyContext {
  std::string wild;  // the segment matched by '*' in the key's path (a source or kind name)
  KeyOrigin origin = KeyOrigin::kFile;
};

// Checks a value and stores it: nullopt when good, else the problem (no position: the caller
// knows where the value came from).
using KeySetter =
    std::function<std::optional<std::string>(Config&, const KeyValue&, const KeyContext&)>;

struct KeyDef {
  std::string path;  // "probes.fabric.provider"; '*' matches one segment
  KeyType type = KeyType::kString;
  KeySetter set;
  // The flag that sets this key too (without "--"); "" for none. A key whose path has a '*'
  // gets one flag per name the binary knows for it (probe.<kind>.enabled), with '*' in the flag
  // standing for the name.
  std::string flag;
  std::string flag_help;
  // What a flag's text becomes before the setter sees it (--path.rootfs takes a relative path
  // from the working directory); an error message instead of a value refuses it.
  std::function<std::optional<std::string>(std::string& text)> flag_transform;
};

// Cross-key checks of a table, after the file and again after the flags: each problem names the
// keys involved, the first one the file (or a flag) sets is where it is reported.
using ReportProblem =
    std::function<void(std::initializer_list<std::string> keys, std::string message)>;

struct TableDef {
  std::string name;  // "probes.fabric": the prefix of its keys, and what [name] may hold
  std::vector<KeyDef> keys;
  std::function<void(const Config&, const ReportProblem&)> validate;
  // A registered table's keys at their defaults, as documented TOML: `fabricwatch config
  // default` prints it after the daemon's own file. "" for the daemon's tables (they are in
  // config/fabricwatch.toml).
  std::string defaults;
};

// The tables a loader knows: the daemon's own, then those given to it.
class Schema {
 public:
  explicit Schema(std::vector<TableDef> tables);
  // The daemon's own subsystems: web, log, host, collect, peer, probe, probes (each kind's
  // `enabled` and `extra_metrics`), policy, topology.
  static std::shared_ptr<const Schema> daemon();
  // daemon()'s tables followed by `more`.
  static std::shared_ptr<const Schema> with(std::vector<TableDef> more);

  const std::vector<TableDef>& tables() const { return tables_; }
  // The first key whose pattern matches `path` (a key, not a table), with its '*' segment.
  const KeyDef* find(std::string_view path, std::string* wild) const;
  // Whether `path` names a table that holds keys ([probes.fabric], [collect.sources.rdma]).
  bool isTable(std::string_view path) const;
  // Every key pattern, in table order (docs/configuration.md lists them all; a test checks).
  std::vector<std::string> keyPaths() const;

 private:
  std::vector<TableDef> tables_;
};

// "a.b_c" -> "a.b-c"; "probes.X.y" -> "probe.X.y": the flag a key gets unless it names its own.
std::string derivedFlagName(std::string_view key_path);

// Parses a flag's text as a value of `type` (lists: comma-separated); nullopt with `why` when it
// is not one.
std::optional<KeyValue> flagValue(KeyType type, const std::string& text, std::string* why);

// The checks behind TableKeys, for setters of their own (same wording everywhere).
std::optional<std::string> rangeProblem(int64_t v, int64_t lo, int64_t hi);
std::optional<std::string> rangeProblem(double v, double lo, double hi);
// A duration within [lo, hi], or why not.
std::pair<std::optional<Duration>, std::optional<std::string>> parseDurationIn(
    const std::string& text, Duration lo, Duration hi);
// "256MiB", "1GiB", "4096" within [lo, hi] bytes, or why not.
std::pair<std::optional<uint64_t>, std::optional<std::string>> parseByteSizeIn(
    const std::string& text, uint64_t lo, uint64_t hi);
std::optional<uint64_t> parseByteSize(const std::string& text);

// Builds a table's keys over a struct T that `access` finds in a Config: a field of Config
// itself (&Config::web), or a registered table of Config::tables (a probe kind's own struct).
// Each adder checks its value's type and range with the loader's wording and stores it.
template <typename T>
class TableKeys {
 public:
  using Access = std::function<T&(Config&)>;
  using Check = std::function<std::optional<std::string>(const std::string&)>;

  TableKeys(std::string table, Access access) : table_(std::move(table)), access_(access) {}
  // A table of Config::tables, by its name.
  explicit TableKeys(std::string table)
      : table_(table), access_([table](Config& c) -> T& { return c.tables.edit<T>(table); }) {}

  template <typename F>
  TableKeys& integer(const std::string& key, int64_t lo, int64_t hi, F T::*field) {
    return custom(key, KeyType::kInteger,
                  [lo, hi, field](T& t, const KeyValue& v, const KeyContext&) {
                    if (auto err = rangeProblem(v.integer, lo, hi)) return err;
                    t.*field = static_cast<F>(v.integer);
                    return std::optional<std::string>();
                  });
  }
  TableKeys& number(const std::string& key, double lo, double hi, double T::*field) {
    return custom(key, KeyType::kNumber,
                  [lo, hi, field](T& t, const KeyValue& v, const KeyContext&) {
                    if (auto err = rangeProblem(v.number, lo, hi)) return err;
                    t.*field = v.number;
                    return std::optional<std::string>();
                  });
  }
  TableKeys& boolean(const std::string& key, bool T::*field) {
    return custom(key, KeyType::kBoolean, [field](T& t, const KeyValue& v, const KeyContext&) {
      t.*field = v.boolean;
      return std::optional<std::string>();
    });
  }
  TableKeys& string(const std::string& key, std::string T::*field, Check check = {}) {
    return custom(key, KeyType::kString,
                  [field, check](T& t, const KeyValue& v, const KeyContext&) {
                    if (check)
                      if (auto err = check(v.text)) return err;
                    t.*field = v.text;
                    return std::optional<std::string>();
                  });
  }
  TableKeys& duration(const std::string& key, Duration lo, Duration hi, Duration T::*field) {
    return custom(key, KeyType::kString,
                  [lo, hi, field](T& t, const KeyValue& v, const KeyContext&) {
                    auto d = parseDurationIn(v.text, lo, hi);
                    if (!d.first) return d.second;
                    t.*field = *d.first;
                    return std::optional<std::string>();
                  });
  }
  TableKeys& byteSize(const std::string& key, uint64_t lo, uint64_t hi, uint64_t T::*field) {
    return custom(key, KeyType::kString,
                  [lo, hi, field](T& t, const KeyValue& v, const KeyContext&) {
                    auto b = parseByteSizeIn(v.text, lo, hi);
                    if (!b.first) return b.second;
                    t.*field = *b.first;
                    return std::optional<std::string>();
                  });
  }
  TableKeys& stringList(const std::string& key, std::vector<std::string> T::*field,
                        Check each = {}) {
    return custom(key, KeyType::kStringList,
                  [field, each](T& t, const KeyValue& v, const KeyContext&) {
                    if (each)
                      for (const auto& item : v.list)
                        if (auto err = each(item)) return err;
                    t.*field = v.list;
                    return std::optional<std::string>();
                  });
  }
  // Anything else: a setter over T, the value of the key's type, and its context.
  TableKeys& custom(
      const std::string& key, KeyType type,
      std::function<std::optional<std::string>(T&, const KeyValue&, const KeyContext&)> set) {
    KeyDef d;
    d.path = table_ + "." + key;
    d.type = type;
    d.set = [access = access_, set](Config& c, const KeyValue& v, const KeyContext& ctx) {
      return set(access(c), v, ctx);
    };
    keys_.push_back(std::move(d));
    return *this;
  }
  // The last key added is also a flag: `name` ("" derives it: derivedFlagName), `help` its
  // usage line ("Overrides <key>." is appended).
  TableKeys& flag(std::string help, std::string name = "") {
    KeyDef& d = keys_.back();
    d.flag = name.empty() ? derivedFlagName(d.path) : std::move(name);
    d.flag_help = std::move(help) + " Overrides " + d.path + ".";
    return *this;
  }
  TableKeys& flagTransform(std::function<std::optional<std::string>(std::string&)> f) {
    keys_.back().flag_transform = std::move(f);
    return *this;
  }
  // Cross-key checks over the table's struct once every key has been set.
  TableKeys& validate(std::function<void(const T&, const Config&, const ReportProblem&)> check) {
    validate_ = [access = access_, check](const Config& c, const ReportProblem& report) {
      check(access(const_cast<Config&>(c)), c, report);
    };
    return *this;
  }

  TableKeys& defaults(std::string toml) {
    defaults_ = std::move(toml);
    return *this;
  }

  TableDef build() const { return TableDef{table_, keys_, validate_, defaults_}; }

 private:
  std::string table_;
  Access access_;
  std::vector<KeyDef> keys_;
  std::function<void(const Config&, const ReportProblem&)> validate_;
  std::string defaults_;
};

}  // namespace fabricwatch::config
