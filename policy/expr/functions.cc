#include "policy/expr/functions.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "policy/expr/quantity.h"

namespace fabricwatch::policy::expr {
namespace {

// Strings cost one step per 16 bytes on top of the call itself.
bool chargeBytes(Ctx& c, size_t bytes) { return c.step(bytes / 16); }

size_t codePoints(std::string_view s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

RVal noOverload(Ctx& c, Position pos, const char* fn, const RVal* a, size_t n) {
  std::string m = std::string("no matching overload for '") + fn + "' applied to (";
  for (size_t i = 0; i < n; ++i) m += std::string(i ? ", " : "") + typeName(a[i]);
  return c.error(pos, m + ")");
}

#define FW_CHARGE(c, pos, bytes) \
  if (!chargeBytes(c, bytes)) return (c).costError(pos)

RVal fnSize(Ctx& c, Position pos, const RVal* a, size_t n) {
  switch (a[0].t) {
    case VT::kString:
      FW_CHARGE(c, pos, a[0].s->size());
      return RVal::integer(static_cast<int64_t>(codePoints(*a[0].s)));
    case VT::kList:
      return RVal::integer(static_cast<int64_t>(listSize(a[0])));
    case VT::kMap:
      return RVal::integer(static_cast<int64_t>(a[0].v->asMap().size()));
    default:
      return noOverload(c, pos, "size", a, n);
  }
}

template <int kWhich>
RVal fnStringTest(Ctx& c, Position pos, const RVal* a, size_t n) {
  static const char* kNames[] = {"contains", "startsWith", "endsWith"};
  if (a[0].t != VT::kString || a[1].t != VT::kString)
    return noOverload(c, pos, kNames[kWhich], a, n);
  const std::string& s = *a[0].s;
  const std::string& t = *a[1].s;
  FW_CHARGE(c, pos, s.size());
  if constexpr (kWhich == 0) return RVal::boolean(s.find(t) != std::string::npos);
  if constexpr (kWhich == 1) return RVal::boolean(s.compare(0, t.size(), t) == 0);
  return RVal::boolean(s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0);
}

RVal fnMatches(Ctx& c, Position pos, const RVal* a, size_t n) {
  if (a[0].t != VT::kString || a[1].t != VT::kString) return noOverload(c, pos, "matches", a, n);
  FW_CHARGE(c, pos, a[0].s->size() + a[1].s->size() * 4);
  std::string err;
  auto re = c.regexes->get(*a[1].s, &err);
  if (!re) return c.error(pos, err);
  return RVal::boolean(RE2::PartialMatch(*a[0].s, *re));
}

RVal fnSplit(Ctx& c, Position pos, const RVal* a, size_t n) {
  if (a[0].t != VT::kString || a[1].t != VT::kString) return noOverload(c, pos, "split", a, n);
  const std::string& s = *a[0].s;
  const std::string& sep = *a[1].s;
  FW_CHARGE(c, pos, s.size() * 2);
  RList* out = c.newList();
  if (sep.empty()) {
    for (size_t i = 0; i < s.size();) {
      size_t j = i + 1;
      while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
      out->push_back(c.newString(s.substr(i, j - i)));
      i = j;
    }
    return RVal::list(out);
  }
  size_t start = 0;
  while (true) {
    size_t k = s.find(sep, start);
    if (k == std::string::npos) {
      out->push_back(c.newString(s.substr(start)));
      break;
    }
    out->push_back(c.newString(s.substr(start, k - start)));
    start = k + sep.size();
  }
  return RVal::list(out);
}

RVal fnInt(Ctx& c, Position pos, const RVal* a, size_t n) {
  switch (a[0].t) {
    case VT::kInt:
      return a[0];
    case VT::kDouble: {
      double d = std::trunc(a[0].d);
      // 2^63 is exactly representable; anything at or beyond it does not fit.
      if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
        return c.error(pos, "int() argument out of range");
      }
      return RVal::integer(static_cast<int64_t>(d));
    }
    case VT::kString: {
      const std::string& s = *a[0].s;
      int64_t v = 0;
      const char* b = s.data();
      const char* e = s.data() + s.size();
      if (b != e && *b == '+') ++b;
      auto [p, ec] = std::from_chars(b, e, v);
      if (ec != std::errc() || p != e || b == e) {
        return c.error(pos, "cannot convert '" + s + "' to int");
      }
      return RVal::integer(v);
    }
    case VT::kBool:
      return RVal::integer(a[0].b ? 1 : 0);
    default:
      return noOverload(c, pos, "int", a, n);
  }
}

RVal fnDouble(Ctx& c, Position pos, const RVal* a, size_t n) {
  switch (a[0].t) {
    case VT::kInt:
      return RVal::dbl(static_cast<double>(a[0].i));
    case VT::kDouble:
      return a[0];
    case VT::kString: {
      const std::string& s = *a[0].s;
      double v = 0;
      const char* b = s.data();
      const char* e = s.data() + s.size();
      if (b != e && *b == '+') ++b;
      auto [p, ec] = std::from_chars(b, e, v);
      if (ec != std::errc() || p != e || b == e) {
        return c.error(pos, "cannot convert '" + s + "' to double");
      }
      return RVal::dbl(v);
    }
    default:
      return noOverload(c, pos, "double", a, n);
  }
}

std::string formatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  std::string s(buf, p);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

RVal fnString(Ctx& c, Position pos, const RVal* a, size_t n) {
  switch (a[0].t) {
    case VT::kString:
      return a[0];
    case VT::kInt:
      return c.newString(std::to_string(a[0].i));
    case VT::kDouble:
      return c.newString(formatDouble(a[0].d));
    case VT::kBool:
      return c.newString(a[0].b ? "true" : "false");
    case VT::kSemver:
      return RVal::str(&a[0].sv->text);
    default:
      return noOverload(c, pos, "string", a, n);
  }
}

RVal fnQuantity(Ctx& c, Position pos, const RVal* a, size_t n) {
  if (a[0].t != VT::kString) return noOverload(c, pos, "quantity", a, n);
  auto q = parseQuantity(*a[0].s);
  if (auto* i = std::get_if<int64_t>(&q)) return RVal::integer(*i);
  if (auto* d = std::get_if<double>(&q)) return RVal::dbl(*d);
  return c.error(pos, std::get<std::string>(q));
}

RVal fnSemver(Ctx& c, Position pos, const RVal* a, size_t n) {
  if (a[0].t == VT::kSemver) return a[0];
  if (a[0].t != VT::kString) return noOverload(c, pos, "semver", a, n);
  auto v = parseSemver(*a[0].s);
  if (!v) return c.error(pos, "invalid version '" + *a[0].s + "'");
  return c.newSemver(std::move(*v));
}

template <int kWhich>
RVal fnSemverPart(Ctx& c, Position pos, const RVal* a, size_t n) {
  static const char* kNames[] = {"major", "minor", "patch"};
  if (a[0].t != VT::kSemver) return noOverload(c, pos, kNames[kWhich], a, n);
  const auto& nums = a[0].sv->numbers;
  return RVal::integer(kWhich < static_cast<int>(nums.size()) ? nums[kWhich] : 0);
}

template <bool kUpper>
RVal fnCase(Ctx& c, Position pos, const RVal* a, size_t n) {
  if (a[0].t != VT::kString) return noOverload(c, pos, kUpper ? "upperAscii" : "lowerAscii", a, n);
  FW_CHARGE(c, pos, a[0].s->size());
  std::string s = *a[0].s;
  for (char& ch : s) {
    if (kUpper && ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
    if (!kUpper && ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  return c.newString(std::move(s));
}

RVal fnTrim(Ctx& c, Position pos, const RVal* a, size_t n) {
  if (a[0].t != VT::kString) return noOverload(c, pos, "trim", a, n);
  const std::string& s = *a[0].s;
  FW_CHARGE(c, pos, s.size());
  const char* ws = " \t\n\r\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return c.newString("");
  size_t e = s.find_last_not_of(ws);
  return c.newString(s.substr(b, e - b + 1));
}

RVal fnJoin(Ctx& c, Position pos, const RVal* a, size_t n) {
  if (a[0].t != VT::kList || (n == 2 && a[1].t != VT::kString))
    return noOverload(c, pos, "join", a, n);
  std::string sep = n == 2 ? *a[1].s : std::string();
  std::string out;
  size_t len = listSize(a[0]);
  for (size_t i = 0; i < len; ++i) {
    RVal e = listAt(a[0], i);
    if (e.t != VT::kString) {
      return c.error(pos, std::string("join() needs a list of strings, found ") + typeName(e));
    }
    if (i) out += sep;
    out += *e.s;
  }
  FW_CHARGE(c, pos, out.size() + len);
  return c.newString(std::move(out));
}

RVal fnIndexOf(Ctx& c, Position pos, const RVal* a, size_t n) {
  if (a[0].t != VT::kString || a[1].t != VT::kString) return noOverload(c, pos, "indexOf", a, n);
  FW_CHARGE(c, pos, a[0].s->size());
  size_t k = a[0].s->find(*a[1].s);
  if (k == std::string::npos) return RVal::integer(-1);
  return RVal::integer(static_cast<int64_t>(codePoints(std::string_view(*a[0].s).substr(0, k))));
}

RVal fnSum(Ctx& c, Position pos, const RVal* a, size_t n) {
  if (a[0].t != VT::kList) return noOverload(c, pos, "sum", a, n);
  size_t len = listSize(a[0]);
  if (!c.step(len)) return c.costError(pos);
  int64_t isum = 0;
  double dsum = 0;
  bool is_double = false;
  for (size_t i = 0; i < len; ++i) {
    RVal e = listAt(a[0], i);
    if (!e.isNumber()) {
      return c.error(pos, std::string("sum() needs a list of numbers, found ") + typeName(e));
    }
    if (e.t == VT::kDouble && !is_double) {
      is_double = true;
      dsum = static_cast<double>(isum);
    }
    if (is_double) {
      dsum += e.num();
    } else if (__builtin_add_overflow(isum, e.i, &isum)) {
      return c.error(pos, "integer overflow");
    }
  }
  return is_double ? RVal::dbl(dsum) : RVal::integer(isum);
}

template <bool kMax>
RVal fnMinMax(Ctx& c, Position pos, const RVal* a, size_t n) {
  const char* name = kMax ? "max" : "min";
  if (a[0].t != VT::kList) return noOverload(c, pos, name, a, n);
  size_t len = listSize(a[0]);
  if (!c.step(len)) return c.costError(pos);
  if (len == 0) return c.error(pos, std::string(name) + "() of an empty list");
  RVal best = listAt(a[0], 0);
  for (size_t i = 0; i < len; ++i) {
    RVal e = listAt(a[0], i);
    std::optional<int> o = order(e, best);
    if (!o || (!e.isNumber() && e.t != VT::kString && e.t != VT::kSemver)) {
      return c.error(pos, std::string(name) + "() needs a list of numbers or strings, found " +
                              typeName(e) + " and " + typeName(best));
    }
    if (kMax ? *o > 0 : *o < 0) best = e;
  }
  return best;
}

constexpr TypeMask S = kTString, L = kTList, M = kTMap, N = kTNum, V = kTSemver, B = kTBool;

const std::vector<FunctionDef>& table() {
  static const std::vector<FunctionDef> kTable = {
      {"size", {{{S}, kTInt}, {{L}, kTInt}, {{M}, kTInt}}, fnSize},
      {"contains", {{{S, S}, kTBool}}, fnStringTest<0>},
      {"startsWith", {{{S, S}, kTBool}}, fnStringTest<1>},
      {"endsWith", {{{S, S}, kTBool}}, fnStringTest<2>},
      {"matches", {{{S, S}, kTBool}}, fnMatches},
      {"split", {{{S, S}, kTList}}, fnSplit},
      {"int", {{{kTInt | kTDouble | S | B}, kTInt}}, fnInt},
      {"double", {{{N | S}, kTDouble}}, fnDouble},
      {"string", {{{S | N | B | V}, kTString}}, fnString},
      {"quantity", {{{S}, kTNum}}, fnQuantity},
      {"semver", {{{S | V}, kTSemver}}, fnSemver},
      {"major", {{{V}, kTInt}}, fnSemverPart<0>},
      {"minor", {{{V}, kTInt}}, fnSemverPart<1>},
      {"patch", {{{V}, kTInt}}, fnSemverPart<2>},
      {"lowerAscii", {{{S}, kTString}}, fnCase<false>},
      {"upperAscii", {{{S}, kTString}}, fnCase<true>},
      {"trim", {{{S}, kTString}}, fnTrim},
      {"join", {{{L}, kTString}, {{L, S}, kTString}}, fnJoin},
      {"indexOf", {{{S, S}, kTInt}}, fnIndexOf},
      {"sum", {{{L}, kTNum}}, fnSum},
      {"min", {{{L}, kTDyn}}, fnMinMax<false>},
      {"max", {{{L}, kTDyn}}, fnMinMax<true>},
  };
  return kTable;
}

}  // namespace

std::string typeMaskName(TypeMask t) {
  if (t == kTDyn) return "dyn";
  static const char* kNames[] = {"null",   "bool", "int", "double",
                                 "string", "list", "map", "semver"};
  std::string out;
  for (int i = 0; i < 8; ++i) {
    if (t & (1 << i)) out += std::string(out.empty() ? "" : "|") + kNames[i];
  }
  return out;
}

const FunctionDef* findFunction(std::string_view name) {
  for (const auto& f : table()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

}  // namespace fabricwatch::policy::expr
