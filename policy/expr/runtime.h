#pragma once
// Internal runtime of the expression evaluator: the value an evaluation step produces (RVal), the
// per-evaluation context (cost meter, scratch arena, comprehension slots) and value helpers.
// RVal is a small trivially-copyable handle: scalars inline, strings/lists/maps borrowed from the
// facts document, the program's constants or the context arena — facts are never copied.

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/value.h"
#include "policy/expr/expr.h"
#include "policy/expr/semver.h"

namespace re2 {
class RE2;
}

namespace fabricwatch::policy::expr {

enum class VT : uint8_t { kNull, kBool, kInt, kDouble, kString, kList, kMap, kSemver, kError };

struct RVal;
using RList = std::vector<RVal>;

struct RVal {
  VT t = VT::kNull;
  bool rlist = false;  // a kList backed by an RList (computed) rather than a core::Value list
  union {
    bool b;
    int64_t i;
    double d;
    const std::string* s;
    const core::Value* v;  // kList (rlist == false) or kMap
    const RList* rl;       // kList (rlist == true)
    const Semver* sv;
    const ExprError* e;
  };
  RVal() : i(0) {}

  static RVal null() { return RVal(); }
  static RVal boolean(bool x) {
    RVal r;
    r.t = VT::kBool;
    r.b = x;
    return r;
  }
  static RVal integer(int64_t x) {
    RVal r;
    r.t = VT::kInt;
    r.i = x;
    return r;
  }
  static RVal dbl(double x) {
    RVal r;
    r.t = VT::kDouble;
    r.d = x;
    return r;
  }
  static RVal str(const std::string* x) {
    RVal r;
    r.t = VT::kString;
    r.s = x;
    return r;
  }
  static RVal list(const RList* x) {
    RVal r;
    r.t = VT::kList;
    r.rlist = true;
    r.rl = x;
    return r;
  }
  static RVal semver(const Semver* x) {
    RVal r;
    r.t = VT::kSemver;
    r.sv = x;
    return r;
  }
  bool isError() const { return t == VT::kError; }
  bool isNumber() const { return t == VT::kInt || t == VT::kDouble; }
  double num() const { return t == VT::kInt ? static_cast<double>(i) : d; }
};

// Borrows a facts value (scalars are copied, containers and strings referenced).
inline RVal fromValue(const core::Value& v) {
  RVal r;
  switch (v.kind()) {
    case core::Value::Kind::kNull:
      break;
    case core::Value::Kind::kBool:
      r.t = VT::kBool;
      r.b = v.asBool();
      break;
    case core::Value::Kind::kInt:
      r.t = VT::kInt;
      r.i = v.asInt();
      break;
    case core::Value::Kind::kDouble:
      r.t = VT::kDouble;
      r.d = v.asDouble();
      break;
    case core::Value::Kind::kString:
      r.t = VT::kString;
      r.s = &v.asString();
      break;
    case core::Value::Kind::kList:
      r.t = VT::kList;
      r.v = &v;
      break;
    case core::Value::Kind::kMap:
      r.t = VT::kMap;
      r.v = &v;
      break;
  }
  return r;
}

// A map key for lookups in facts maps. Field names are short and usually differ in their first
// bytes, so an inline byte loop beats a call to memcmp for each comparison of the tree walk.
struct FieldKey {
  std::string_view s;
};
inline int compareShort(std::string_view a, std::string_view b) {
  size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i])
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}
inline bool operator<(const std::string& a, const FieldKey& b) { return compareShort(a, b.s) < 0; }
inline bool operator<(const FieldKey& a, const std::string& b) { return compareShort(a.s, b) < 0; }

// Map lookup in a facts map; nullptr when absent.
inline const core::Value* findField(const core::Value& map, std::string_view key) {
  const auto& m = map.asMap();
  auto it = m.find(FieldKey{key});
  return it == m.end() ? nullptr : &it->second;
}
// Deep conversion for results; a semver becomes its text.
core::Value toValue(const RVal& v);
const char* typeName(const RVal& v);

inline size_t listSize(const RVal& l) { return l.rlist ? l.rl->size() : l.v->asList().size(); }
inline RVal listAt(const RVal& l, size_t i) {
  return l.rlist ? (*l.rl)[i] : fromValue(l.v->asList()[i]);
}

// Bounded cache of regexes compiled at evaluation time (patterns that are not literals).
class RegexCache {
 public:
  // nullptr and an error message when the pattern does not compile.
  std::shared_ptr<const re2::RE2> get(const std::string& pattern, std::string* error);

 private:
  static constexpr size_t kMaxEntries = 64;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const re2::RE2>> cache_;
};

inline constexpr int kMaxSlots = 16;  // nesting depth of comprehensions

struct Ctx {
  const Activation* activation = nullptr;
  uint64_t cost = 0;
  uint64_t limit = 0;
  bool aborted = false;  // cost limit hit: errors are no longer absorbed
  RegexCache* regexes = nullptr;
  std::array<RVal, kMaxSlots> slots;
  std::vector<std::unique_ptr<std::string>> strings;
  std::vector<std::unique_ptr<RList>> lists;
  std::vector<std::unique_ptr<core::Value>> values;
  std::vector<std::unique_ptr<Semver>> semvers;
  std::vector<std::unique_ptr<ExprError>> errors;
  const ExprError* cost_error = nullptr;

  // One step; false once the limit is exceeded.
  bool step(uint64_t n = 1) {
    cost += n;
    return cost <= limit;
  }
  RVal error(Position pos, std::string message);
  RVal costError(Position pos);
  RVal newString(std::string s);
  RList* newList();
  RVal newSemver(Semver s);
  const core::Value* newValue(core::Value v);
};

// Equality with numeric promotion; different kinds are unequal (heterogeneous equality).
bool equals(const RVal& a, const RVal& b);
// Ordering; nullopt when the kinds are not comparable.
std::optional<int> order(const RVal& a, const RVal& b);

}  // namespace fabricwatch::policy::expr
