#include "policy/evaluator.h"

#include <chrono>
#include <optional>

#include "core/value_format.h"

namespace fabricwatch::policy {
namespace {

using Clock = std::chrono::steady_clock;

std::string str(const core::Value& v, std::string_view key) {
  const core::Value* f = v.find(key);
  if (!f) return {};
  if (f->isString()) return f->asString();
  if (f->isInt()) return std::to_string(f->asInt());
  return {};
}

std::string firstError(const expr::EvalResult& r) {
  return r.errors.empty() ? "evaluation failed" : r.errors.front().message;
}

class PackEvaluator {
 public:
  PackEvaluator(const Pack& pack, const core::Value& facts, const core::Value& group,
                const EvalSettings& settings, Evaluation& out, PackStats& stats)
      : pack_(pack), facts_(facts), settings_(settings), out_(out), stats_(stats) {
    static const core::Value kEmptyMap = core::Value::map();
    static const core::Value kEmptyList = core::Value::list();
    for (const auto& root : pack.fact_roots) {
      if (root == "variables") continue;
      const core::Value* v = facts.find(root);
      if (!v) v = root == "workloads" ? &kEmptyList : &kEmptyMap;
      node_.bind(root, v);
    }
    node_.bind("resource_group", &group);
    opts_.cost_limit = settings.cost_limit;
  }

  void run() {
    if (pack_.match_expression) {
      auto r = pack_.match_expression->program->evaluate(node_, opts_);
      if (!r.ok() || !r.value.isBool()) {
        error("match", "node",
              r.ok() ? "match expression must be a bool, got " +
                           std::string(core::kindName(r.value.kind()))
                     : firstError(r));
        stats_.skipped = "match expression error";
        return;
      }
      if (!r.value.asBool()) {
        stats_.skipped = "match expression";
        return;
      }
    }
    stats_.matched = true;
    variables_ = core::Value::map();
    node_.bind("variables", &variables_);
    for (const auto& v : pack_.variables) {
      auto r = v.expr.program->evaluate(node_, opts_);
      if (r.ok())
        variables_[v.name] = std::move(r.value);
      else
        error("variables." + v.name, "node", firstError(r));
    }
    for (const auto& rule : pack_.rules) {
      if (rule.subject == Subject::kNode)
        evalNode(rule);
      else
        evalWorkloads(rule);
    }
  }

 private:
  void error(std::string rule, std::string subject, std::string msg) {
    out_.errors.push_back(
        RuleError{pack_.name, std::move(rule), std::move(subject), std::move(msg)});
  }

  enum class Outcome { kPass, kFail, kUnknown, kError };

  // A bool from an expression, or nullopt with the error recorded against the rule.
  std::optional<bool> boolOf(const Rule& rule, const CompiledExpr& e, const expr::Activation& act,
                             const core::Value* workload, const char* what) {
    auto r = e.program->evaluate(act, opts_);
    if (r.ok() && r.value.isBool()) return r.value.asBool();
    error(rule.id, workload ? workloadSubject(*workload) : std::string("node"),
          !r.ok() ? firstError(r)
                  : std::string(what) + " must evaluate to a bool, got " +
                        std::string(core::kindName(r.value.kind())));
    return std::nullopt;
  }

  // Evaluates one rule in an activation, counting the outcome. An error is already recorded.
  // `workload` is null for the node; its subject string is only built when needed.
  Outcome check(const Rule& rule, const expr::Activation& act, const core::Value* workload) {
    auto holds = boolOf(rule, rule.expression, act, workload, "expression");
    if (holds && !*holds && rule.unknown_when) {
      auto unknown = boolOf(rule, *rule.unknown_when, act, workload, "unknownWhen");
      if (!unknown) holds.reset();
      if (unknown && *unknown) {
        ++stats_.unknown;
        return Outcome::kUnknown;
      }
    }
    if (!holds) {
      ++stats_.error;
      return Outcome::kError;
    }
    (*holds ? stats_.pass : stats_.fail)++;
    return *holds ? Outcome::kPass : Outcome::kFail;
  }

  std::string message(const Rule& rule, const expr::Activation& act) {
    if (rule.message_expression) {
      auto r = rule.message_expression->program->evaluate(act, opts_);
      if (r.ok() && r.value.isString() && !r.value.asString().empty()) return r.value.asString();
    }
    if (!rule.message.empty()) return rule.message;
    return "expression is false: " + rule.expression.text;
  }

  std::string unknownMessage(const Rule& rule, const expr::Activation& act) {
    if (rule.unknown_message_expression) {
      auto r = rule.unknown_message_expression->program->evaluate(act, opts_);
      if (r.ok() && r.value.isString() && !r.value.asString().empty()) return r.value.asString();
    }
    if (!rule.unknown_message.empty()) return rule.unknown_message;
    return "cannot be judged: " + rule.unknown_when->text;
  }

  Finding finding(const Rule& rule, std::string subject, std::string label, std::string msg,
                  bool unknown = false) {
    return Finding{pack_.name,
                   rule.id,
                   rule.severity,
                   std::move(subject),
                   std::move(label),
                   std::move(msg),
                   unknown ? std::string() : rule.remediation};
  }

  void evalNode(const Rule& rule) {
    switch (check(rule, node_, nullptr)) {
      case Outcome::kFail:
        out_.violations.push_back(finding(rule, "node", "node", message(rule, node_)));
        break;
      case Outcome::kUnknown:
        out_.unknown.push_back(finding(rule, "node", "node", unknownMessage(rule, node_), true));
        break;
      default:
        break;
    }
  }

  // Past max_workload_subjects, the rest of one kind of result are summed up in one entry.
  struct Listed {
    size_t reported = 0, more = 0;
  };

  void evalWorkloads(const Rule& rule) {
    const core::Value* wl = facts_.find("workloads");
    if (!wl || !wl->isList()) return;
    Listed failed, unknown;
    const auto& list = wl->asList();
    if (workload_acts_.size() != list.size()) {
      // One activation per workload, built once per pack and shared by its workload rules.
      workload_acts_.clear();
      workload_acts_.reserve(list.size());
      for (const auto& w : list) {
        workload_acts_.push_back(node_);
        workload_acts_.back().bind("workload", &w);
      }
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const core::Value& w = list[i];
      const expr::Activation& act = workload_acts_[i];
      Outcome o = check(rule, act, &w);
      if (o != Outcome::kFail && o != Outcome::kUnknown) continue;
      bool is_unknown = o == Outcome::kUnknown;
      Listed& l = is_unknown ? unknown : failed;
      if (l.reported >= settings_.max_workload_subjects) {
        ++l.more;
        continue;
      }
      ++l.reported;
      (is_unknown ? out_.unknown : out_.violations)
          .push_back(finding(rule, workloadSubject(w), workloadLabel(w),
                             is_unknown ? unknownMessage(rule, act) : message(rule, act),
                             is_unknown));
    }
    std::string bound =
        " (at most " + std::to_string(settings_.max_workload_subjects) + " are listed one by one)";
    if (failed.more > 0) {
      out_.violations.push_back(
          finding(rule, std::to_string(failed.more) + " more workloads", "workload:_more",
                  std::to_string(failed.more) + " more workloads violate this rule" + bound));
    }
    if (unknown.more > 0) {
      out_.unknown.push_back(finding(
          rule, std::to_string(unknown.more) + " more workloads", "workload:_more",
          std::to_string(unknown.more) + " more workloads cannot be judged by this rule" + bound,
          true));
    }
  }

  const Pack& pack_;
  const core::Value& facts_;
  const EvalSettings& settings_;
  Evaluation& out_;
  PackStats& stats_;
  expr::Activation node_;
  std::vector<expr::Activation> workload_acts_;
  expr::EvalOptions opts_;
  core::Value variables_;
};

}  // namespace

std::string workloadSubject(const core::Value& w) {
  std::string out;
  auto add = [&](const char* k, std::string v) {
    if (v.empty()) return;
    out += (out.empty() ? "" : " ") + std::string(k) + "=" + v;
  };
  add("pod", str(w, "pod_uid"));
  std::string cid = str(w, "container_id");
  add("container", cid.substr(0, 12));
  add("pid", str(w, "pid"));
  std::string comm = str(w, "comm");
  if (!comm.empty()) out += (out.empty() ? "" : " ") + ("(" + comm + ")");
  return out.empty() ? "workload" : out;
}

std::string workloadLabel(const core::Value& w) {
  std::string pod = str(w, "pod_uid");
  if (!pod.empty()) return "workload:" + pod;
  std::string pid = str(w, "pid");
  return "workload:" + (pid.empty() ? std::string("unknown") : pid);
}

Evaluation evaluate(const PackSet& packs, const core::Value& facts,
                    const std::string& resource_group, const EvalSettings& settings) {
  Evaluation out;
  auto start = Clock::now();
  const core::Value group(resource_group);
  out.packs.reserve(packs.size());
  for (const auto& pack : packs) {
    PackStats& stats = out.packs.emplace_back();
    stats.name = pack.name;
    auto t0 = Clock::now();
    if (!matchesGroup(pack, resource_group)) {
      stats.skipped = "resource group";
    } else {
      PackEvaluator(pack, facts, group, settings, out, stats).run();
    }
    stats.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace fabricwatch::policy
