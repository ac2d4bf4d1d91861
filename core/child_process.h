#pragma once
// Runs a program (normally fabricwatch itself, through /proc/self/exe and a hidden subcommand)
// as a child process with a hard deadline. This is how work that cannot be cancelled in
// process is isolated: an NCCL call that hangs in a collective or in the driver only ends when
// its process does.
//
// No shell is involved: posix_spawn() with an explicit argv and environment. The child runs in
// its own process group with default signal dispositions and only descriptors 0-3 open: its
// standard input carries the request, descriptor 3 the (bounded) result, and standard output
// and error go to a pipe of which only the last part is kept. At the deadline the whole group
// gets SIGKILL; the child is always reaped, so no zombie is left behind.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::core {

struct ChildSpec {
  std::string exe = "/proc/self/exe";
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // the child's whole environment, "KEY=VALUE"
  std::string input;              // written to the child's standard input, which is then closed
  std::chrono::milliseconds timeout{60000};
  size_t max_result_bytes = 64 * 1024;  // read from descriptor 3; more is discarded
  size_t max_output_bytes = 8 * 1024;   // the last this many bytes of stdout and stderr
  // Called for each complete line the child writes to descriptor 3, as it arrives: a caller can
  // act on a line while the child goes on (pass an NCCL unique id to a peer).
  std::function<void(std::string_view)> on_result_line;
  // Set (by another thread, or by on_result_line) to end the run early: the process group gets
  // SIGKILL within about 50 ms and the outcome is kCancelled (the peer of an NCCL run failed, the
  // daemon is stopping). Null: the run ends only by itself or at the deadline.
  const std::atomic<bool>* cancel = nullptr;
};

struct ChildResult {
  enum class Outcome { kExited, kSignaled, kTimedOut, kCancelled, kSpawnFailed };
  Outcome outcome = Outcome::kSpawnFailed;
  pid_t pid = -1;
  int exit_code = -1;  // kExited
  int signal = 0;  // kSignaled, or the signal that ended a timed-out or cancelled child (SIGKILL)
  std::string result;  // what the child wrote to descriptor 3
  bool result_truncated = false;
  std::string output;  // the tail of its standard output and error
  std::string error;   // kSpawnFailed: why
  bool reaped = true;  // false only if the killed child had not exited after a grace period
  double seconds = 0;

  // "exited with status 3", "killed by signal 11 (Segmentation fault)", "timed out after
  // 5000 ms: the process group was killed", "cancelled after 800 ms: the process group was
  // killed", "could not start: ...".
  std::string describe() const;
};

ChildResult runChild(const ChildSpec& spec);

}  // namespace fabricwatch::core
