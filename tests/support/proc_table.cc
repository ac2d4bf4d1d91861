#include "tests/support/proc_table.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fabricwatch::testing {

std::vector<ProcEntry> processes() {
  std::vector<ProcEntry> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat"), cmd(e.path() / "cmdline");
    std::string line;
    if (!std::getline(stat, line)) continue;  // gone meanwhile
    // pid (comm) state ppid ...: comm may hold spaces, so parse after the last ')'.
    size_t rp = line.rfind(')');
    if (rp == std::string::npos || rp + 2 > line.size()) continue;
    ProcEntry p;
    p.pid = std::stoi(name);
    std::istringstream rest(line.substr(rp + 2));
    rest >> p.state >> p.ppid;
    for (std::string arg; std::getline(cmd, arg, '\0');) p.argv.push_back(arg);
    out.push_back(std::move(p));
  }
  return out;
}

int zombieChildren(pid_t parent) {
  int n = 0;
  for (const auto& p : processes()) n += p.ppid == parent && p.state == 'Z';
  return n;
}

std::vector<pid_t> liveChildren(pid_t parent, const std::string& arg1) {
  std::vector<pid_t> out;
  for (const auto& p : processes())
    if (p.ppid == parent && p.state != 'Z' && p.argv.size() > 1 && p.argv[1] == arg1)
      out.push_back(p.pid);
  return out;
}

bool running(pid_t pid) {
  for (const auto& p : processes())
    if (p.pid == pid) return p.state != 'Z';
  return false;
}

}  // namespace fabricwatch::testing
