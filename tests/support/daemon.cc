#include "tests/support/daemon.h"

#include <thread>

#include "tests/support/paths.h"

namespace fabricwatch::testing {

bool RunningDaemon::waitForStatus(const std::string& path, int status,
                                  std::chrono::milliseconds timeout) const {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    auto r = get(path);
    if (r && r->status == status) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

RunningDaemon startDaemon(const std::vector<std::string>& extra_args) {
  return startDaemonUnder({}, extra_args);
}

RunningDaemon startDaemonUnder(const std::vector<std::string>& prefix,
                               const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = prefix;
  for (std::string a :
       {binaryPath(), std::string("serve"), std::string("--web.listen-address=127.0.0.1:0"),
        std::string("--log.level=debug")})
    argv.push_back(a);
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  RunningDaemon d;
  d.process = std::make_unique<Process>(argv);
  auto line = d.process->waitForStderr("msg=listening", std::chrono::seconds(10));
  if (!line) return d;
  auto pos = line->find(" port=");
  if (pos != std::string::npos) d.port = std::stoi(line->substr(pos + 6));
  return d;
}

}  // namespace fabricwatch::testing
