#include "policy/policy_stage.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/host_fs.h"
#include "core/snapshot.h"
#include "core/value_format.h"
#include "policy/nccl_facts.h"

namespace fabricwatch::policy {
namespace {

// The node-label file: a few lines; a FIFO or anything over 64 KiB reads as absent.
std::string readSmallFile(const std::string& path) {
  if (path.empty()) return {};
  auto text = core::readRegularFile(path, 64 << 10);
  return text ? std::move(*text) : std::string();
}

double unixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

int64_t intAt(const core::Value& v, std::string_view key) {
  const core::Value* f = v.find(key);
  return f && f->isInt() ? f->asInt() : 0;
}

}  // namespace

PolicyStage::PolicyStage(std::shared_ptr<PackStore> packs, StageOptions opts)
    : packs_(std::move(packs)), opts_(std::move(opts)) {}

void publishEvaluation(const Evaluation& e, const ResourceGroup& group, const PackSet& packs,
                       const ReloadStatus& reload, uint64_t errors_total,
                       core::Snapshot& snapshot) {
  snapshot.violations.clear();
  for (const auto& f : e.violations) {
    core::Violation v;
    v.pack = f.pack;
    v.rule = f.rule;
    v.severity = severityName(f.severity);
    v.subject = f.subject;
    v.message = f.message;
    v.remediation = f.remediation;
    v.metric_subject = f.subject_label;
    snapshot.violations.push_back(std::move(v));
  }
  core::Value st = core::Value::map();
  st["resource_group"] = group.name;
  st["resource_group_origin"] = group.origin;
  st["packs_loaded"] = packs.size();
  st["last_reload_successful"] = reload.ok;
  st["last_reload_timestamp_seconds"] = unixSeconds(reload.at);
  if (!reload.error.empty()) st["last_reload_error"] = reload.error;
  st["evaluation_seconds"] = e.seconds;
  st["errors_total"] = errors_total;
  core::Value list = core::Value::list();
  for (const auto& p : e.packs) {
    core::Value v = core::Value::map();
    v["name"] = p.name;
    v["matched"] = p.matched;
    if (!p.skipped.empty()) v["skipped"] = p.skipped;
    v["pass"] = p.pass;
    v["fail"] = p.fail;
    v["unknown"] = p.unknown;
    v["error"] = p.error;
    v["duration_seconds"] = p.seconds;
    list.push(std::move(v));
  }
  st["packs"] = std::move(list);
  core::Value errors = core::Value::list();
  for (const auto& err : e.errors) {
    errors.push(core::Value::map({{"pack", err.pack},
                                  {"rule", err.rule},
                                  {"subject", err.subject},
                                  {"message", err.message}}));
  }
  st["errors"] = std::move(errors);
  core::Value unknown = core::Value::list();
  for (const auto& u : e.unknown) {
    unknown.push(core::Value::map({{"pack", u.pack},
                                   {"rule", u.rule},
                                   {"severity", severityName(u.severity)},
                                   {"subject", u.subject},
                                   {"subject_label", u.subject_label},
                                   {"message", u.message}}));
  }
  st["unknown"] = std::move(unknown);
  snapshot.status["policy"] = std::move(st);
}

std::string configuredResourceGroup(const StageOptions& opts) {
  ResourceGroupInputs in = opts.group;
  in.label_file_text = readSmallFile(opts.resource_group_file);
  ResourceGroup g = resolveResourceGroup(in, core::Value::map());
  return g.origin == "derived" ? "" : g.name;
}

void PolicyStage::apply(core::Snapshot& snapshot) {
  packs_->reloadIfChanged(std::chrono::steady_clock::now());
  auto packs = packs_->current();
  ResourceGroupInputs in = opts_.group;
  in.label_file_text = readSmallFile(opts_.resource_group_file);
  ResourceGroup group = resolveResourceGroup(in, snapshot.facts);
  prepareFacts(snapshot.facts, group.name);
  if (opts_.counters) deriveCounterChanges(*opts_.counters, opts_.counter_window, snapshot);
  Evaluation e = evaluate(*packs, snapshot.facts, group.name, opts_.eval);
  uint64_t total = errors_total_ += e.errors.size();
  publishEvaluation(e, group, *packs, packs_->lastReload(), total, snapshot);
  if (opts_.tracker) trackViolations(*opts_.tracker, opts_.violation_hold, snapshot);
}

void deriveCounterChanges(CounterHistory& history, std::chrono::milliseconds window,
                          core::Snapshot& snapshot) {
  // A run that failed or timed out withdrew its facts: nothing to sample, and the history of
  // what it read before stays for the next good run.
  for (const auto& src : snapshot.sources) {
    if (src.name == "rdma" && src.ran && src.success)
      history.record(snapshot.facts, src.last_run, window);
  }
  history.annotate(snapshot.facts, window);
}

void trackViolations(ViolationTracker& tracker, std::chrono::milliseconds hold,
                     core::Snapshot& snapshot) {
  tracker.update(snapshot.violations, snapshot.published_at, hold, snapshot.complete);
  core::Value& st = snapshot.status["policy"];
  st["violation_hold_seconds"] = std::chrono::duration<double>(hold).count();
  st["cleared_total"] = tracker.clearedTotal();
  core::Value list = core::Value::list();
  for (const auto& c : tracker.cleared()) {
    const core::Violation& v = c.violation;
    list.push(core::Value::map({{"pack", v.pack},
                                {"rule", v.rule},
                                {"severity", v.severity},
                                {"subject", v.subject},
                                {"message", v.message},
                                {"began_at", core::rfc3339(v.began_at)},
                                {"recovering_since", core::rfc3339(v.recovering_since)},
                                {"cleared_at", core::rfc3339(c.cleared_at)}}));
  }
  st["cleared"] = std::move(list);
}

std::vector<core::OptionalMetric> PolicyStage::optionalMetrics() const {
  return policyOptionalMetrics();
}

std::vector<core::OptionalMetric> policyOptionalMetrics() {
  return {
      {"fabricwatch_policy_rules_evaluated", "", "+4 per loaded pack (pass, fail, unknown, error)"},
      {"fabricwatch_policy_pack_matched", "", "+1 per loaded pack"},
      {"fabricwatch_policy_evaluation_duration_seconds", "", "+1 per loaded pack"}};
}

void PolicyStage::renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const {
  auto violation = core::gaugeFamily(
      "fabricwatch_policy_violation",
      "1 while a policy rule is violated for a subject (node or workload:<pod uid or pid>), "
      "and in serve for policy.violation_hold after it passes again (recovering); absent "
      "otherwise.");
  auto began = core::gaugeFamily(
      "fabricwatch_policy_violation_began_timestamp_seconds",
      "Unix time a violation (as fabricwatch_policy_violation) began; serve only.");
  auto recovering = core::gaugeFamily(
      "fabricwatch_policy_violation_recovering",
      "1 while a violation's rule passes again but its hold (policy.violation_hold) has not "
      "ended; absent otherwise. serve only.");
  // One series per label set; a workload subject summed up (workload:_more) or a subject
  // listed twice keeps the earliest start and counts as recovering only when all of it is.
  struct Life {
    double began = 0;
    bool tracked = false, recovering = true;
  };
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Life> seen;
  for (const auto& v : snapshot.violations) {
    std::string subject = v.metric_subject.empty() ? "node" : v.metric_subject;
    auto [it, fresh] = seen.try_emplace({v.pack, v.rule, v.severity, subject});
    if (fresh)
      core::addSample(
          violation,
          {{"pack", v.pack}, {"rule", v.rule}, {"severity", v.severity}, {"subject", subject}}, 1);
    if (v.state.empty()) continue;
    Life& l = it->second;
    double at = unixSeconds(v.began_at);
    l.began = l.tracked ? std::min(l.began, at) : at;
    l.tracked = true;
    l.recovering = l.recovering && v.state == "recovering";
  }
  for (const auto& [k, l] : seen) {
    if (!l.tracked) continue;
    const auto& [pack, rule, sev, subject] = k;
    core::LabelPairs labels{
        {"pack", pack}, {"rule", rule}, {"severity", sev}, {"subject", subject}};
    core::addSample(began, labels, l.began);
    if (l.recovering) core::addSample(recovering, labels, 1);
  }
  for (auto* f : {&violation, &began, &recovering})
    if (!f->metric.empty()) out.push_back(std::move(*f));

  const core::Value* st = snapshot.status.find("policy");
  if (st) {
    // The counterpart of a violation for a rule that could not judge its subject: none on a
    // node whose facts are all there.
    auto unknown = core::gaugeFamily(
        "fabricwatch_policy_unknown",
        "1 while a policy rule cannot judge a subject because the facts it needs are missing "
        "(its result is unknown, not a violation); absent otherwise.");
    if (const auto* list = st->find("unknown"); list && list->isList()) {
      std::set<std::tuple<std::string, std::string, std::string, std::string>> listed;
      auto text = [](const core::Value& v, const char* k) {
        const auto* f = v.find(k);
        return f && f->isString() ? f->asString() : std::string();
      };
      for (const auto& u : list->asList()) {
        std::string subject = text(u, "subject_label");
        if (subject.empty()) subject = "node";
        std::string pack = text(u, "pack"), rule = text(u, "rule"), sev = text(u, "severity");
        if (!listed.emplace(pack, rule, sev, subject).second) continue;
        core::addSample(
            unknown, {{"pack", pack}, {"rule", rule}, {"severity", sev}, {"subject", subject}}, 1);
      }
    }
    if (!unknown.metric.empty()) out.push_back(std::move(unknown));

    auto evaluated = core::gaugeFamily(
        "fabricwatch_policy_rules_evaluated",
        "Rule evaluations (one per rule and subject) in the last evaluation, by pack and result "
        "(pass, fail, unknown, error).");
    auto matched = core::gaugeFamily(
        "fabricwatch_policy_pack_matched",
        "Whether a loaded pack applies to this node (its resource group and match expression).");
    auto duration = core::gaugeFamily("fabricwatch_policy_evaluation_duration_seconds",
                                      "Duration of the last evaluation of a pack.");
    auto errors = core::gaugeFamily(
        "fabricwatch_policy_evaluation_errors",
        "Expressions of a pack that could not be evaluated in the last evaluation.");
    // The errors per pack feed an alert; the rest per pack is optional ([policy] extra_metrics).
    const bool with_evaluated = core::wantsFamily(snapshot, evaluated.name);
    const bool with_matched = core::wantsFamily(snapshot, matched.name);
    const bool with_duration = core::wantsFamily(snapshot, duration.name);
    std::map<std::string, int64_t> errors_by_pack;
    if (const auto* errs = st->find("errors"); errs && errs->isList()) {
      for (const auto& e : errs->asList()) {
        const auto* p = e.find("pack");
        if (p && p->isString()) ++errors_by_pack[p->asString()];
      }
    }
    if (const auto* packs = st->find("packs"); packs && packs->isList()) {
      for (const auto& p : packs->asList()) {
        const auto* n = p.find("name");
        if (!n || !n->isString()) continue;
        const std::string& name = n->asString();
        if (with_evaluated) {
          for (const char* result : {"pass", "fail", "unknown", "error"}) {
            core::addSample(evaluated, {{"pack", name}, {"result", result}},
                            static_cast<double>(intAt(p, result)));
          }
        }
        const auto* m = p.find("matched");
        if (with_matched)
          core::addSample(matched, {{"pack", name}}, m && m->isBool() && m->asBool() ? 1 : 0);
        const auto* d = p.find("duration_seconds");
        if (with_duration)
          core::addSample(duration, {{"pack", name}}, d && d->isNumber() ? d->asDouble() : 0);
        core::addSample(errors, {{"pack", name}}, static_cast<double>(errors_by_pack[name]));
      }
    }
    for (auto* f : {&evaluated, &matched, &duration, &errors})
      if (!f->metric.empty()) out.push_back(std::move(*f));

    auto errors_total = core::counterFamily(
        "fabricwatch_policy_evaluation_errors_total",
        "Expressions that could not be evaluated (missing facts, type errors), since start.");
    core::addSample(errors_total, {}, static_cast<double>(intAt(*st, "errors_total")));
    out.push_back(std::move(errors_total));

    if (const auto* cleared = st->find("cleared_total"); cleared && cleared->isInt()) {
      auto total = core::counterFamily(
          "fabricwatch_policy_violations_cleared_total",
          "Violations that cleared (their hold ended after their rule passed again), since "
          "start; serve only.");
      core::addSample(total, {}, static_cast<double>(cleared->asInt()));
      out.push_back(std::move(total));
    }

    auto info = core::gaugeFamily(
        "fabricwatch_resource_group_info",
        "The resource group the node's policies were chosen for, and where it came from (flag, "
        "env, config, label-file, derived).");
    const auto* g = st->find("resource_group");
    const auto* o = st->find("resource_group_origin");
    core::addSample(info,
                    {{"resource_group", g && g->isString() ? g->asString() : ""},
                     {"origin", o && o->isString() ? o->asString() : ""}},
                    1);
    out.push_back(std::move(info));

    // The pack store's reload state as apply() saw it: the live store may have reloaded since,
    // and one scrape must describe one snapshot.
    auto ok = core::gaugeFamily(
        "fabricwatch_policy_last_reload_successful",
        "Whether the last load of the policy packs succeeded (0: the previous packs still run).");
    const auto* reload_ok = st->find("last_reload_successful");
    core::addSample(ok, {}, reload_ok && reload_ok->isBool() && reload_ok->asBool() ? 1 : 0);
    out.push_back(std::move(ok));
    auto at = core::gaugeFamily("fabricwatch_policy_last_reload_timestamp_seconds",
                                "Unix time of the last load of the policy packs.");
    const auto* reload_at = st->find("last_reload_timestamp_seconds");
    core::addSample(at, {}, reload_at && reload_at->isNumber() ? reload_at->asDouble() : 0);
    out.push_back(std::move(at));
    auto loaded = core::gaugeFamily("fabricwatch_policy_packs_loaded", "Policy packs loaded.");
    core::addSample(loaded, {}, static_cast<double>(intAt(*st, "packs_loaded")));
    out.push_back(std::move(loaded));
  }
}

}  // namespace fabricwatch::policy
