#pragma once
// Policy tests, in the manner of `promtool test rules`: a test file next to the packs gives
// facts (inline, a facts file, or a fixture root collected by the fact sources) and the
// violations expected; the runner evaluates the packs and prints a diff when they differ.
//
//   apiVersion: fabricwatch.io/v1
//   kind: PolicyTest
//   packs: [aws-efa.yaml]          # relative to the test file; default: every pack beside it
//   tests:
//     - name: p5 with half its EFA devices
//       resourceGroup: efa-p5
//       facts: {rdma: {devices: [...]}}     # or factsFile: FILE, or rootfs: DIR
//       expectedViolations:
//         - {pack: aws-efa, rule: efa-device-count, subject: node, message: "..."}
//       expectedUnknown:               # rules that cannot judge the node (unknownWhen)
//         - {pack: aws-efa, rule: efa-ports-active, message: "..."}
//
// An expected violation matches a produced one with the same pack, rule and subject (the
// subject text, or its metric label such as workload:<pod uid>), and the same severity and
// message when those are given; an expected unknown result likewise. A violation or unknown
// result not expected, and any evaluation error, fail the test.

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/result.h"
#include "core/value.h"
#include "policy/pack.h"

namespace fabricwatch::policy {

// Collects the facts document of a fixture root; the exporter layer provides it (it runs the
// node fact sources, which policy/ must not depend on). Null: `rootfs:` tests are errors.
using FactsProvider = std::function<core::Result<core::Value>(const std::string& rootfs)>;

struct TestSummary {
  int files = 0;
  int tests = 0;
  int passed = 0;
  int failed = 0;
  std::vector<core::Diagnostic> problems;  // test files or packs that could not be loaded
};

// Runs every test file named, or found in a named directory (*_test.yaml, *.test.yaml).
// Packs compile against the sources' fact `roots`.
TestSummary runPolicyTests(const std::vector<std::string>& paths, const FactsProvider& provider,
                           const FactRoots& roots, std::ostream& out);

}  // namespace fabricwatch::policy
