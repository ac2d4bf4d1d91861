// The shipped packs at run time: built from the data the build wrote (policy/embedded_pack.h),
// and the set the daemon and `check` run (shipped packs, then the configured files).
#include <algorithm>

#include "policy/embedded_pack.h"
#include "policy/pack_loader.h"

namespace fabricwatch::policy {
namespace {

class Builder {
 public:
  Builder(const EmbeddedPack& e, const FactRoots& roots, PackLoadResult& out)
      : e_(e), roots_(roots), out_(out) {}

  std::optional<Pack> build() {
    Pack p;
    p.name = e_.name;
    p.description = e_.description;
    p.pos = pos(e_.pos);
    p.fact_roots = roots_;
    p.resource_groups.assign(e_.resource_groups.begin(), e_.resource_groups.end());
    if (e_.match_expression.present)
      p.match_expression = compile(e_.match_expression, false, /*variables=*/false);
    for (const auto& v : e_.variables) {
      if (auto c = compile(v.expr, false)) p.variables.push_back(Variable{std::string(v.name), *c});
    }
    for (const auto& er : e_.rules) {
      Rule r;
      r.id = er.id;
      r.description = er.description;
      r.severity = er.severity;
      r.subject = er.subject;
      r.message = er.message;
      r.remediation = er.remediation;
      r.pos = pos(er.pos);
      bool wl = r.subject == Subject::kWorkload;
      if (auto c = compile(er.expression, wl)) r.expression = std::move(*c);
      if (er.message_expression.present) r.message_expression = compile(er.message_expression, wl);
      if (er.unknown_when.present) r.unknown_when = compile(er.unknown_when, wl);
      r.unknown_message = er.unknown_message;
      if (er.unknown_message_expression.present)
        r.unknown_message_expression = compile(er.unknown_message_expression, wl);
      p.rules.push_back(std::move(r));
    }
    if (failed_) return std::nullopt;
    return p;
  }

 private:
  SourcePos pos(EmbeddedPos at) const {
    return SourcePos{std::string(e_.file), at.line, at.column};
  }

  std::optional<CompiledExpr> compile(const EmbeddedExpr& e, bool workload, bool variables = true) {
    auto compiled = expr::compile(e.text, packExprOptions(roots_, workload, variables));
    if (auto* err = std::get_if<expr::ExprError>(&compiled)) {
      failed_ = true;
      out_.problems.push_back(core::Diagnostic{std::string(e_.file), e.pos.line, e.pos.column,
                                               "shipped pack \"" + std::string(e_.name) +
                                                   "\": expression does not compile in this "
                                                   "build: " +
                                                   err->message,
                                               ""});
      return std::nullopt;
    }
    return CompiledExpr{std::string(e.text), pos(e.pos),
                        std::get<std::shared_ptr<const expr::Program>>(std::move(compiled))};
  }

  const EmbeddedPack& e_;
  const FactRoots& roots_;
  PackLoadResult& out_;
  bool failed_ = false;
};

}  // namespace

PackLoadResult packsFromEmbedded(std::span<const EmbeddedPack> packs, const FactRoots& roots) {
  PackLoadResult out;
  for (const auto& e : packs) {
    if (auto p = Builder(e, roots, out).build()) out.packs.push_back(std::move(*p));
  }
  if (!out.ok()) out.packs.clear();
  return out;
}

PackLoadResult loadEmbeddedPacks(const FactRoots& roots) {
  return packsFromEmbedded(embeddedPacks(), roots);
}

PackLoadResult loadPolicySet(const std::vector<std::string>& paths, bool shipped,
                             const FactRoots& roots) {
  PackLoadResult out;
  if (shipped) out = loadEmbeddedPacks(roots);
  if (!out.ok() || paths.empty()) return out;
  PackLoadResult user = loadPackPaths(paths, roots);
  if (!user.ok()) return user;
  for (auto& p : user.packs) {
    auto same = std::find_if(out.packs.begin(), out.packs.end(),
                             [&](const Pack& q) { return q.name == p.name; });
    if (same != out.packs.end())
      *same = std::move(p);
    else
      out.packs.push_back(std::move(p));
  }
  return out;
}

}  // namespace fabricwatch::policy
