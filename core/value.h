#pragma once
// The facts document: one JSON-like tree per node (rdma.devices[*].ports[*].state,
// memory.hugepages, probes.tcp.peers[*] ...). Policies read it, `fabricwatch facts` prints it, the
// JSON API serves it. Maps keep their keys sorted so every rendering of the same facts is
// byte-identical.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fabricwatch::core {

class Value {
 public:
  enum class Kind { kNull, kBool, kInt, kDouble, kString, kList, kMap };
  using List = std::vector<Value>;
  using Map = std::map<std::string, Value, std::less<>>;

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  Value(int i) : v_(static_cast<int64_t>(i)) {}
  Value(unsigned i) : v_(static_cast<int64_t>(i)) {}
  Value(long i) : v_(static_cast<int64_t>(i)) {}
  Value(long long i) : v_(static_cast<int64_t>(i)) {}
  // The kernel's counters and limits are unsigned 64-bit; the document's integers are signed.
  // A value above INT64_MAX becomes the nearest double (docs/facts.md), never a negative int.
  Value(unsigned long i) : v_(fromUnsigned(i)) {}
  Value(unsigned long long i) : v_(fromUnsigned(i)) {}
  Value(double d) : v_(d) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(List l) : v_(std::move(l)) {}
  Value(Map m) : v_(std::move(m)) {}

  static Value list() { return Value(List{}); }
  static Value map() { return Value(Map{}); }
  static Value map(std::initializer_list<std::pair<const std::string, Value>> entries) {
    return Value(Map(entries));
  }

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool isNull() const { return kind() == Kind::kNull; }
  bool isBool() const { return kind() == Kind::kBool; }
  bool isInt() const { return kind() == Kind::kInt; }
  bool isDouble() const { return kind() == Kind::kDouble; }
  bool isNumber() const { return isInt() || isDouble(); }
  bool isString() const { return kind() == Kind::kString; }
  bool isList() const { return kind() == Kind::kList; }
  bool isMap() const { return kind() == Kind::kMap; }

  // Accessors assume the kind; check it first (they throw std::bad_variant_access otherwise).
  bool asBool() const { return std::get<bool>(v_); }
  int64_t asInt() const { return std::get<int64_t>(v_); }
  double asDouble() const { return isInt() ? static_cast<double>(asInt()) : std::get<double>(v_); }
  const std::string& asString() const { return std::get<std::string>(v_); }
  const List& asList() const { return std::get<List>(v_); }
  List& asList() { return std::get<List>(v_); }
  const Map& asMap() const { return std::get<Map>(v_); }
  Map& asMap() { return std::get<Map>(v_); }

  // Map lookup; nullptr when this is not a map or the key is absent.
  const Value* find(std::string_view key) const;
  // Dotted-path lookup ("memory.hugepages"); list elements are not addressed.
  const Value* findPath(std::string_view dotted) const;
  // Map insert-or-get; turns a null into an empty map first.
  Value& operator[](std::string_view key);
  // Appends to a list; turns a null into an empty list first.
  Value& push(Value v);
  // Sets a value at a dotted path, creating maps on the way.
  void setPath(std::string_view dotted, Value v);

  size_t size() const;
  friend bool operator==(const Value& a, const Value& b) { return a.v_ == b.v_; }
  friend size_t makeStringsValidUtf8(Value& v);

 private:
  using Variant = std::variant<std::monostate, bool, int64_t, double, std::string, List, Map>;
  static Variant fromUnsigned(uint64_t u) {
    if (u > static_cast<uint64_t>(INT64_MAX)) return static_cast<double>(u);
    return static_cast<int64_t>(u);
  }
  Variant v_;
};

const char* kindName(Value::Kind k);

// Makes every string and map key of v valid UTF-8 (makeValidUtf8, core/utf8.h); returns how
// many it changed.
size_t makeStringsValidUtf8(Value& v);

}  // namespace fabricwatch::core
