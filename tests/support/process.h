#pragma once
// Runs the real fabricwatch binary (or any program) as a child process for end-to-end tests:
// capture of stdout/stderr, waiting for a log line with a deadline, signals, exit status.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace fabricwatch::testing {

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// Runs to completion (killed after timeout) and returns its exit code and output.
RunResult runCommand(const std::vector<std::string>& argv,
                     std::chrono::milliseconds timeout = std::chrono::seconds(30));

class Process {
 public:
  explicit Process(const std::vector<std::string>& argv);
  ~Process();  // SIGKILLs a child still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // Waits until stderr contains `needle`; returns the stderr line holding it.
  std::optional<std::string> waitForStderr(const std::string& needle,
                                           std::chrono::milliseconds timeout);
  void signal(int sig);
  // Waits for exit; returns the exit code, -1 if killed by a signal, nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  const std::string& stderrText() {
    drain();
    return err_;
  }

 private:
  void drain();
  pid_t pid_ = -1;
  int err_fd_ = -1;
  std::string err_;
  bool exited_ = false;
  int status_ = 0;
};

}  // namespace fabricwatch::testing
