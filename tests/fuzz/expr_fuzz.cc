// libFuzzer harness for the expression language: any input must compile or fail with a positioned
// error, and a compiled program must evaluate (within the cost limit) without crashing, hanging or
// leaking. The quantity and semver parsers get the raw input too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/value.h"
#include "policy/expr/expr.h"
#include "policy/expr/quantity.h"
#include "policy/expr/semver.h"

namespace {

using fabricwatch::core::Value;
namespace expr = fabricwatch::policy::expr;

const Value& facts() {
  static const Value f = [] {
    Value v;
    v["kernel"] = Value::map({{"release", "6.1.0"}, {"memory_peers", true}});
    v["kernel"]["modules"] = Value(Value::List{"efa", "ib_core"});
    for (int i = 0; i < 3; ++i) {
      Value d =
          Value::map({{"name", "efa_" + std::to_string(i)}, {"kind", "efa"}, {"numa_node", i}});
      d["ports"].push(Value::map({{"state", "ACTIVE"}, {"rate_gbps", 100.0}}));
      v["rdma"]["devices"].push(d);
    }
    v["memory"]["hugepages"]["2048kB"] = Value::map({{"total", 2560}, {"size_bytes", 2097152}});
    v["variables"] = Value::map({{"n", 3}, {"s", "a,b"}, {"x", nullptr}});
    v["workload"] = Value::map({{"glibc_version", "2.35"}, {"env", Value::map({{"A", "1"}})}});
    return v;
  }();
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)expr::parseQuantity(text);
  if (auto v = expr::parseSemver(text)) (void)expr::compareSemver(*v, *v);

  auto compiled = expr::compile(text);
  if (auto* err = std::get_if<expr::ExprError>(&compiled)) {
    if (err->pos.line < 1 || err->pos.column < 1 || err->message.empty()) std::abort();
    return 0;
  }
  const auto& program = std::get<std::shared_ptr<const expr::Program>>(compiled);
  expr::Activation act;
  for (const auto& [k, v] : facts().asMap()) act.bind(k, &v);
  expr::EvalOptions opts;
  opts.cost_limit = 20'000;
  expr::EvalResult r = program->evaluate(act, opts);
  if (!r.ok() && r.errors[0].message.empty()) std::abort();
  return 0;
}
