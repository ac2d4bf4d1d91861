#include <iostream>

#include "core/log.h"
#include "core/value_format.h"
#include "exporter/commands.h"
#include "exporter/config_flags.h"
#include "exporter/pipeline.h"

namespace fabricwatch::exporter {

int runFacts(const Args& args) {
  FlagSet flags(
      "usage: fabricwatch facts [flags]\n\n"
      "Collects every enabled fact source once and prints the facts document.");
  addConfigFlags(flags, {});
  flags.add("format", "Output format: json or yaml.", "json");
  flags.addBool("help", "Show this help.");
  if (auto err = flags.parse(args)) {
    std::cerr << "fabricwatch facts: " << *err << "\n\n" << flags.help();
    return kExitUsage;
  }
  if (flags.getBool("help")) {
    std::cout << flags.help();
    return kExitOk;
  }
  std::string format = flags.get("format");
  if (format != "json" && format != "yaml") {
    std::cerr << "fabricwatch facts: --format must be json or yaml, not \"" << format << "\"\n";
    return kExitUsage;
  }
  auto cfg = loadCommandConfig(flags);
  if (!cfg) return kExitUsage;
  core::SnapshotStore store;
  auto sched = buildScheduler(*cfg, store);
  sched->runOnce();
  auto snap = store.load();
  std::cout << (format == "json" ? core::toJson(snap->facts, 2) + "\n" : core::toYaml(snap->facts));
  return kExitOk;
}

}  // namespace fabricwatch::exporter
