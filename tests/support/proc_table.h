#pragma once
// The machine's process table as /proc shows it, for tests that check what a run leaves
// behind: zombies (children exited but not reaped) and children still running.

#include <sys/types.h>

#include <string>
#include <vector>

namespace fabricwatch::testing {

struct ProcEntry {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = 0;  // 'R', 'S', 'Z' ...
  std::vector<std::string> argv;
};

std::vector<ProcEntry> processes();
// Children of `parent` that have exited but were not reaped.
int zombieChildren(pid_t parent);
// Live (not zombie) children of `parent` whose argv[1] is `arg1` (e.g. "__nccl-probe").
std::vector<pid_t> liveChildren(pid_t parent, const std::string& arg1);
// True while `pid` exists and is not a zombie.
bool running(pid_t pid);

}  // namespace fabricwatch::testing
