#include <iostream>

#include "config/loader.h"
#include "exporter/commands.h"
#include "exporter/pipeline.h"

namespace fabricwatch::exporter {

int runConfig(const Args& args) {
  const char* usage =
      "usage: fabricwatch config validate FILE...\n"
      "       fabricwatch config default\n\n"
      "validate: prints each problem as FILE:LINE:COL: message; exits 0 when every file is valid, "
      "2 otherwise.\n"
      "default:  prints the embedded default configuration, then every probe kind's table at its\n"
      "          defaults.\n";
  if (args.empty() || args[0] == "--help" || args[0] == "help") {
    std::cout << usage;
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "default" && args.size() == 1) {
    std::cout << defaultConfigText();
    return kExitOk;
  }
  if (args[0] != "validate" || args.size() < 2) {
    std::cerr << usage;
    return kExitUsage;
  }
  int rc = kExitOk;
  for (size_t i = 1; i < args.size(); ++i) {
    auto r = config::loadConfigFile(args[i], configLoadOptions());
    if (r.ok()) {
      std::cout << args[i] << ": ok\n";
    } else {
      std::cerr << core::formatAll(r.problems);
      rc = kExitUsage;
    }
  }
  return rc;
}

}  // namespace fabricwatch::exporter
