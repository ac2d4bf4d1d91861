#pragma once
// Evaluates compiled packs over a prepared facts document (nccl_list.h prepareFacts): which
// packs match the resource group, their variables, then every rule for its subject: the node
// once, or each workload of facts.workloads with `workload` bound. Pure: no I/O, no clock but
// a duration measurement, safe from any thread.
//
// A rule whose expression is false is a violation, unless its unknownWhen holds: then the facts
// it needs are missing and its result is unknown, reported apart (a missing fact is not a
// fault). One that cannot be evaluated (a missing key, a type error, a non-bool result) is an
// error, reported apart from both.

#include <cstdint>
#include <string>
#include <vector>

#include "core/value.h"
#include "policy/pack.h"

namespace fabricwatch::policy {

struct Finding {
  std::string pack;
  std::string rule;
  Severity severity = Severity::kWarning;
  std::string subject;        // "node" or "pod=<uid> container=<id> pid=<pid> (comm)"
  std::string subject_label;  // bounded, for metrics: "node" or "workload:<pod uid or pid>"
  std::string message;
  std::string remediation;
};

struct RuleError {
  std::string pack;
  std::string rule;  // a rule id, "match" or "variables.<name>"
  std::string subject;
  std::string message;
};

struct PackStats {
  std::string name;
  bool matched = false;
  std::string skipped;  // why it did not match: "resource group", "match expression"
  uint64_t pass = 0;    // rule evaluations (one per subject) by result
  uint64_t fail = 0;
  uint64_t unknown = 0;
  uint64_t error = 0;
  double seconds = 0;
};

struct EvalSettings {
  // At most this many workload subjects are reported per rule; the rest are summed up in one
  // violation with subject label "workload:_more", so metric cardinality stays bounded.
  size_t max_workload_subjects = 20;
  uint64_t cost_limit = 1'000'000;
};

struct Evaluation {
  std::vector<Finding> violations;
  // Rules that could not judge their subject: the message says what is missing (no
  // remediation). Bounded per rule as violations are.
  std::vector<Finding> unknown;
  std::vector<RuleError> errors;
  std::vector<PackStats> packs;
  double seconds = 0;
};

Evaluation evaluate(const PackSet& packs, const core::Value& facts,
                    const std::string& resource_group, const EvalSettings& settings = {});

// "pod=<uid> container=<id> pid=<pid> (comm)" from a workloads[] entry, and its metric label.
std::string workloadSubject(const core::Value& workload);
std::string workloadLabel(const core::Value& workload);

}  // namespace fabricwatch::policy
