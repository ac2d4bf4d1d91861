// `fabricwatch check`: the pre-flight for init containers and scheduler prologs. Collects the
// facts once, evaluates the packs for the node's resource group, prints the violations (text
// for people, JSON for tools) and exits 0 when clean, 1 on violations at or above --fail-on
// (or a rule that could not be evaluated, or a fact source that failed or timed out), 2 on a
// usage or configuration error.
//
// A source that failed leaves its facts absent, and rules that need them read as clean (a
// port-state rule over no ports finds no bad port): a pre-flight must not pass on missing
// evidence, so a failed source fails the check (exit 1, the node is not shown fit) and is
// listed with its error. A rule that says which of its facts are missing (unknownWhen) is
// listed as unknown instead, and does not fail the check: a missing fact is not a fault.
#include <cstdlib>
#include <iostream>
#include <thread>

#include "core/log.h"
#include "core/value_format.h"
#include "exporter/api.h"
#include "exporter/commands.h"
#include "exporter/config_flags.h"
#include "exporter/one_shot_heap.h"
#include "exporter/pipeline.h"
#include "policy/pack.h"

namespace fabricwatch::exporter {
namespace {

std::string str(const core::Value* v, std::string_view key) {
  const core::Value* f = v ? v->find(key) : nullptr;
  return f && f->isString() ? f->asString() : std::string();
}

void printText(const core::Snapshot& snap, const core::Value* st, std::ostream& out) {
  out << "resource group: " << str(st, "resource_group") << " (" << str(st, "resource_group_origin")
      << ")\n";
  std::string applied, skipped;
  if (const auto* packs = st ? st->find("packs") : nullptr; packs && packs->isList()) {
    for (const auto& p : packs->asList()) {
      const auto* m = p.find("matched");
      std::string& list = m && m->isBool() && m->asBool() ? applied : skipped;
      list += (list.empty() ? "" : ", ") + str(&p, "name");
    }
  }
  out << "packs applied: " << (applied.empty() ? "none" : applied) << "\n";
  if (!skipped.empty()) out << "packs not applicable: " << skipped << "\n";
  out << "\n";
  if (snap.violations.empty()) {
    out << "No violations.\n";
  } else {
    size_t w_sev = 8, w_rule = 4, w_subj = 7;
    for (const auto& v : snap.violations) {
      w_rule = std::max(w_rule, v.pack.size() + 1 + v.rule.size());
      w_subj = std::max(w_subj, v.subject.size());
    }
    auto pad = [](std::string s, size_t w) {
      s.resize(std::max(s.size(), w), ' ');
      return s;
    };
    out << pad("SEVERITY", w_sev) << "  " << pad("RULE", w_rule) << "  " << pad("SUBJECT", w_subj)
        << "  MESSAGE\n";
    for (const auto& v : snap.violations) {
      out << pad(v.severity, w_sev) << "  " << pad(v.pack + "/" + v.rule, w_rule) << "  "
          << pad(v.subject, w_subj) << "  " << v.message << "\n";
      out << std::string(w_sev + 2, ' ') << "remediation: " << v.remediation << "\n";
    }
  }
  bool failed_header = false;
  for (const auto& src : snap.sources) {
    if (src.ran && src.success) continue;
    if (!failed_header) out << "\nFact sources that failed (their facts are missing):\n";
    failed_header = true;
    out << "  " << src.name << "  " << (src.ran ? src.last_error : "did not run") << "\n";
  }
  if (const auto* unknown = st ? st->find("unknown") : nullptr;
      unknown && unknown->isList() && unknown->size()) {
    out << "\nRules that cannot judge this node (the facts they need are missing):\n";
    for (const auto& u : unknown->asList()) {
      out << "  " << str(&u, "severity") << "  " << str(&u, "pack") << "/" << str(&u, "rule")
          << "  " << str(&u, "subject") << "  " << str(&u, "message") << "\n";
    }
  }
  if (const auto* errs = st ? st->find("errors") : nullptr;
      errs && errs->isList() && errs->size()) {
    out << "\nRules that could not be evaluated:\n";
    for (const auto& e : errs->asList()) {
      out << "  " << str(&e, "pack") << "/" << str(&e, "rule") << "  " << str(&e, "subject") << "  "
          << str(&e, "message") << "\n";
    }
  }
}

// The policy stage, applied once the packs have loaded on their own thread: as the last step
// of the scheduler's publication, to the snapshot it builds, so that the facts are evaluated
// where they are rather than on a copy of the published snapshot.
class AfterPacksLoad : public core::Stage {
 public:
  AfterPacksLoad(std::thread& loader, std::shared_ptr<core::Stage> stage)
      : loader_(loader), stage_(std::move(stage)) {}
  std::string_view name() const override { return stage_->name(); }
  void apply(core::Snapshot& snapshot) override {
    if (loader_.joinable()) loader_.join();
    stage_->apply(snapshot);
  }
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override {
    stage_->renderMetrics(snapshot, out);
  }

 private:
  std::thread& loader_;
  std::shared_ptr<core::Stage> stage_;
};

}  // namespace

int runCheck(const Args& args) {
  FlagSet flags(
      "usage: fabricwatch check [flags]\n\n"
      "Collects the node's facts once, evaluates the policy packs for its resource group and\n"
      "prints the violations with their remediation. Exit status: 0 clean, 1 violations at or\n"
      "above --fail-on (or rules that could not be evaluated, or fact sources that failed or\n"
      "timed out: a pre-flight does not pass on missing facts), 2 usage or configuration error.\n"
      "Rules that cannot judge the node for missing facts are listed as unknown.\n"
      "Meant for init containers and scheduler prologs.");
  addConfigFlags(flags, {.policy = true});
  flags.add("format", "Output format: text or json.", "text");
  flags.add("fail-on", "Lowest severity that fails the check: critical, warning or info.",
            "critical");
  flags.addBool("help", "Show this help.");
  if (auto err = flags.parse(args)) {
    std::cerr << "fabricwatch check: " << *err << "\n\n" << flags.help();
    return kExitUsage;
  }
  if (flags.getBool("help")) {
    std::cout << flags.help();
    return kExitOk;
  }
  if (!flags.positional().empty()) {
    std::cerr << "fabricwatch check: unexpected argument \"" << flags.positional().front()
              << "\"\n";
    return kExitUsage;
  }
  std::string format = flags.get("format");
  if (format != "text" && format != "json") {
    std::cerr << "fabricwatch check: --format must be text or json, not \"" << format << "\"\n";
    return kExitUsage;
  }
  auto fail_on = policy::parseSeverity(flags.get("fail-on"));
  if (!fail_on) {
    std::cerr << "fabricwatch check: --fail-on must be critical, warning or info, not \""
              << flags.get("fail-on") << "\"\n";
    return kExitUsage;
  }
  prepareOneShotHeap(4 << 20);
  auto cfg = loadCommandConfig(flags);
  if (!cfg) return kExitUsage;
  // The packs load (YAML, compiled expressions: a third of the command's CPU on the p5 root)
  // while the sources collect: the two are independent until evaluation, and a Slurm prolog
  // pays this command on every job.
  auto packs = std::make_shared<policy::PackStore>(packStoreOptions(*cfg));
  std::vector<core::Diagnostic> problems;
  std::thread loader([&] { problems = packs->reload(); });
  core::SnapshotStore store;
  PipelineOptions opts;
  opts.policy = false;
  auto sched = buildScheduler(*cfg, store, opts);
  sched->addStage(std::make_shared<AfterPacksLoad>(
      loader, std::make_shared<policy::PolicyStage>(packs, policyStageOptions(*cfg))));
  sched->runOnce();
  if (loader.joinable()) loader.join();
  if (!problems.empty()) {
    std::cerr << core::formatAll(problems);
    return kExitUsage;
  }
  std::shared_ptr<const core::Snapshot> snap = store.load();
  const core::Value* st = snap->status.find("policy");

  int failing = 0;
  core::Value summary = core::Value::map({{"critical", 0}, {"warning", 0}, {"info", 0}});
  for (const auto& v : snap->violations) {
    summary[v.severity] = summary[v.severity].asInt() + 1;
    auto sev = policy::parseSeverity(v.severity);
    if (sev && *sev >= *fail_on) ++failing;
  }
  const core::Value* errs = st ? st->find("errors") : nullptr;
  size_t errors = errs && errs->isList() ? errs->size() : 0;
  summary["errors"] = errors;
  // Unknown results are reported, not failed: a missing fact is not a fault. A source that
  // failed as a whole still fails the check (below).
  const core::Value* unknown = st ? st->find("unknown") : nullptr;
  summary["unknown"] = unknown && unknown->isList() ? unknown->size() : 0;
  core::Value failed_sources = core::Value::list();
  for (const auto& src : snap->sources) {
    if (src.ran && src.success) continue;
    failed_sources.push(core::Value::map(
        {{"source", src.name}, {"error", src.ran ? src.last_error : "did not run"}}));
  }
  summary["failed_sources"] = failed_sources.size();
  int rc = failing > 0 || errors > 0 || failed_sources.size() > 0 ? kExitViolations : kExitOk;

  if (format == "json") {
    core::Value doc = core::Value::map();
    doc["resource_group"] = str(st, "resource_group");
    doc["resource_group_origin"] = str(st, "resource_group_origin");
    doc["fail_on"] = policy::severityName(*fail_on);
    doc["exit_code"] = rc;
    doc["summary"] = std::move(summary);
    if (const auto* p = st ? st->find("packs") : nullptr) doc["packs"] = *p;
    doc["violations"] = violationsValue(snap->violations);
    doc["errors"] = errs ? *errs : core::Value::list();
    doc["unknown"] = unknown ? *unknown : core::Value::list();
    doc["failed_sources"] = std::move(failed_sources);
    std::cout << core::toJson(doc, 2) << "\n";
  } else {
    printText(*snap, st, std::cout);
    std::cout << "\n"
              << snap->violations.size() << " violation(s): " << summary["critical"].asInt()
              << " critical, " << summary["warning"].asInt() << " warning, "
              << summary["info"].asInt() << " info; " << summary["unknown"].asInt() << " unknown; "
              << errors << " evaluation error(s); " << summary["failed_sources"].asInt()
              << " failed source(s). Failing at " << policy::severityName(*fail_on)
              << " and above: " << (rc == kExitOk ? "PASS" : "FAIL") << "\n";
  }
  // Exit without tearing down: the sources keep ~600 sysfs descriptors on a p5 node and the
  // document is large; closing and freeing them one by one is time a prolog waits for, and the
  // kernel releases it all at exit.
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(rc);
}

}  // namespace fabricwatch::exporter
