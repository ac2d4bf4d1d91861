#include "policy/expr/runtime.h"

#include <re2/re2.h>

namespace fabricwatch::policy::expr {

core::Value toValue(const RVal& v) {
  switch (v.t) {
    case VT::kNull:
    case VT::kError:
      return core::Value();
    case VT::kBool:
      return core::Value(v.b);
    case VT::kInt:
      return core::Value(v.i);
    case VT::kDouble:
      return core::Value(v.d);
    case VT::kString:
      return core::Value(*v.s);
    case VT::kSemver:
      return core::Value(v.sv->text);
    case VT::kMap:
      return *v.v;
    case VT::kList:
      if (!v.rlist) return *v.v;
      {
        core::Value::List out;
        out.reserve(v.rl->size());
        for (const RVal& e : *v.rl) out.push_back(toValue(e));
        return core::Value(std::move(out));
      }
  }
  return core::Value();
}

const char* typeName(const RVal& v) {
  switch (v.t) {
    case VT::kNull:
      return "null";
    case VT::kBool:
      return "bool";
    case VT::kInt:
      return "int";
    case VT::kDouble:
      return "double";
    case VT::kString:
      return "string";
    case VT::kList:
      return "list";
    case VT::kMap:
      return "map";
    case VT::kSemver:
      return "semver";
    case VT::kError:
      return "error";
  }
  return "?";
}

std::shared_ptr<const re2::RE2> RegexCache::get(const std::string& pattern, std::string* error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(pattern);
    if (it != cache_.end()) return it->second;
  }
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_shared<const re2::RE2>(pattern, opts);
  if (!re->ok()) {
    *error = "invalid regular expression '" + pattern + "': " + re->error();
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() >= kMaxEntries) cache_.clear();  // bounded; patterns rarely vary much
  cache_.emplace(pattern, re);
  return re;
}

RVal Ctx::error(Position pos, std::string message) {
  errors.push_back(std::make_unique<ExprError>(ExprError{pos, std::move(message)}));
  RVal r;
  r.t = VT::kError;
  r.e = errors.back().get();
  return r;
}

RVal Ctx::costError(Position pos) {
  aborted = true;
  if (cost_error == nullptr) {
    RVal r = error(pos, "evaluation cost limit " + std::to_string(limit) + " exceeded");
    cost_error = r.e;
    return r;
  }
  RVal r;
  r.t = VT::kError;
  r.e = cost_error;
  return r;
}

RVal Ctx::newString(std::string s) {
  strings.push_back(std::make_unique<std::string>(std::move(s)));
  return RVal::str(strings.back().get());
}

RList* Ctx::newList() {
  lists.push_back(std::make_unique<RList>());
  return lists.back().get();
}

RVal Ctx::newSemver(Semver s) {
  semvers.push_back(std::make_unique<Semver>(std::move(s)));
  return RVal::semver(semvers.back().get());
}

const core::Value* Ctx::newValue(core::Value v) {
  values.push_back(std::make_unique<core::Value>(std::move(v)));
  return values.back().get();
}

bool equals(const RVal& a, const RVal& b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.t == VT::kInt && b.t == VT::kInt) return a.i == b.i;
    return a.num() == b.num();
  }
  if (a.t != b.t) return false;
  switch (a.t) {
    case VT::kNull:
      return true;
    case VT::kBool:
      return a.b == b.b;
    case VT::kString:
      return *a.s == *b.s;
    case VT::kSemver:
      return compareSemver(*a.sv, *b.sv) == 0;
    case VT::kList: {
      size_t n = listSize(a);
      if (n != listSize(b)) return false;
      for (size_t i = 0; i < n; ++i) {
        if (!equals(listAt(a, i), listAt(b, i))) return false;
      }
      return true;
    }
    case VT::kMap: {
      const auto& ma = a.v->asMap();
      const auto& mb = b.v->asMap();
      if (ma.size() != mb.size()) return false;
      for (auto ia = ma.begin(), ib = mb.begin(); ia != ma.end(); ++ia, ++ib) {
        if (ia->first != ib->first) return false;
        if (!equals(fromValue(ia->second), fromValue(ib->second))) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

std::optional<int> order(const RVal& a, const RVal& b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.t == VT::kInt && b.t == VT::kInt) return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
    double x = a.num(), y = b.num();
    if (x != x || y != y) return std::nullopt;  // NaN is unordered
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.t != b.t) return std::nullopt;
  switch (a.t) {
    case VT::kString: {
      int c = a.s->compare(*b.s);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case VT::kBool:
      return a.b == b.b ? 0 : (a.b ? 1 : -1);
    case VT::kSemver:
      return compareSemver(*a.sv, *b.sv);
    default:
      return std::nullopt;
  }
}

}  // namespace fabricwatch::policy::expr
