// `fabricwatch policy validate PATH...` loads and compiles packs and reports every problem as
// FILE:LINE:COL (exit 2 on any); `fabricwatch policy test PATH...` runs policy test files
// (exit 1 when a test fails, 2 when a file cannot be loaded).
#include <iostream>

#include "config/loader.h"
#include "core/diagnostic.h"
#include "exporter/commands.h"
#include "exporter/flags.h"
#include "exporter/pipeline.h"
#include "policy/pack_loader.h"
#include "policy/test_runner.h"
#include "probes/registry.h"

namespace fabricwatch::exporter {
namespace {

const char* kPolicyUsage =
    "usage: fabricwatch policy validate PATH...   load and compile policy packs\n"
    "       fabricwatch policy test PATH...       run policy test files (*_test.yaml)\n"
    "PATH is a file or a directory.\n";

// Facts of a fixture root, collected by the node fact sources (as `facts --path.rootfs` does).
core::Result<core::Value> collectFacts(const std::string& rootfs) {
  config::LoadResult r = config::loadEmbeddedDefault(configLoadOptions());
  if (!r.ok()) return core::Error{core::formatAll(r.problems)};
  r.config.host.rootfs = rootfs;
  core::SnapshotStore store;
  PipelineOptions opts;
  opts.policy = false;  // facts only: the caller evaluates
  auto sched = buildScheduler(r.config, store, opts);
  sched->runOnce();
  return store.load()->facts;
}

int validate(const std::vector<std::string>& paths) {
  int rc = kExitOk;
  for (const auto& path : paths) {
    policy::PackLoadResult r = policy::loadPackPaths({path}, probes::factRoots());
    if (!r.ok()) {
      std::cerr << core::formatAll(r.problems);
      rc = kExitUsage;
      continue;
    }
    size_t rules = 0;
    for (const auto& p : r.packs) rules += p.rules.size();
    std::cout << path << ": " << r.packs.size() << " pack(s), " << rules << " rule(s): ok\n";
  }
  return rc;
}

int test(const std::vector<std::string>& paths) {
  policy::TestSummary s =
      policy::runPolicyTests(paths, collectFacts, probes::factRoots(), std::cout);
  std::cerr << core::formatAll(s.problems);
  std::cout << s.files << " file(s), " << s.tests << " test(s): " << s.passed << " passed, "
            << s.failed << " failed" << (s.problems.empty() ? "" : ", load problems above") << "\n";
  if (!s.problems.empty()) return kExitUsage;
  return s.failed > 0 ? kExitViolations : kExitOk;
}

}  // namespace

int runPolicy(const Args& args) {
  FlagSet flags(kPolicyUsage);
  flags.addBool("help", "Show this help.");
  if (auto err = flags.parse(args)) {
    std::cerr << "fabricwatch policy: " << *err << "\n\n" << flags.help();
    return kExitUsage;
  }
  if (flags.getBool("help")) {
    std::cout << flags.help();
    return kExitOk;
  }
  const auto& pos = flags.positional();
  if (pos.empty() || (pos[0] != "validate" && pos[0] != "test")) {
    std::cerr << kPolicyUsage;
    return kExitUsage;
  }
  std::vector<std::string> paths(pos.begin() + 1, pos.end());
  if (paths.empty()) {
    std::cerr << "fabricwatch policy " << pos[0] << ": give at least one PATH\n";
    return kExitUsage;
  }
  return pos[0] == "validate" ? validate(paths) : test(paths);
}

}  // namespace fabricwatch::exporter
