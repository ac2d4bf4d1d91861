#include <iostream>

#include "exporter/build_info.h"
#include "exporter/commands.h"

namespace fabricwatch::exporter {

int runVersion(const Args&) {
  std::cout << "fabricwatch, version " << kVersion << " (revision: " << kRevision << ")\n"
            << "  build: " << kBuildFlags << "\n";
  return kExitOk;
}

}  // namespace fabricwatch::exporter
