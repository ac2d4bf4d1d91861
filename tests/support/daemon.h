#pragma once
// Starts `fabricwatch serve` on a free port (port 0) and learns the port from its "listening"
// log line. Reused by every end-to-end test.

#include <memory>
#include <string>
#include <vector>

#include "tests/support/http_client.h"
#include "tests/support/process.h"

namespace fabricwatch::testing {

struct RunningDaemon {
  std::unique_ptr<Process> process;
  int port = 0;

  std::optional<HttpResult> get(const std::string& path) const {
    return httpGet("127.0.0.1", port, path);
  }
  // Polls path until it answers with `status` or the deadline passes.
  bool waitForStatus(const std::string& path, int status,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
};

// Extra args are appended after `serve --web.listen-address=127.0.0.1:0 --log.level=debug`.
// On failure, port is 0 and process holds whatever ran (its stderr explains).
RunningDaemon startDaemon(const std::vector<std::string>& extra_args);
// The same, run under a command that then runs the binary (e.g. {"/usr/bin/prlimit",
// "--nofile=256:256",
// "--"}).
RunningDaemon startDaemonUnder(const std::vector<std::string>& prefix,
                               const std::vector<std::string>& extra_args);

}  // namespace fabricwatch::testing
