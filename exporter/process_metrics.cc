#include "exporter/process_metrics.h"

#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/host_fs.h"

namespace fabricwatch::exporter {

namespace {

// The descriptor table's size, from "FDSize:" in /proc/self/status; 0 when unknown.
size_t fdTableSize(const core::HostFs& self) {
  auto status = self.read("/proc/self/status");
  auto pos = status.text.find("\nFDSize:");
  if (status.status != core::HostFs::ReadStatus::kOk || pos == std::string::npos) return 0;
  try {
    return std::stoul(status.text.substr(pos + 8));
  } catch (const std::exception&) {
    return 0;
  }
}

// Boot time (btime in /proc/stat): constant, and /proc/stat grows with the cores (tens of KB on a
// GPU node), so it is read once.
double bootTime(const core::HostFs& self) {
  static const double btime = [&] {
    auto text = self.read("/proc/stat").text;
    auto pos = text.find("\nbtime ");
    return pos == std::string::npos ? -1.0 : std::stod(text.substr(pos + 7));
  }();
  return btime;
}

// The process's start time in seconds since the epoch (field 22 of /proc/self/stat, in clock
// ticks after boot), read once: it never changes. -1 when unknown.
double startTime(const core::HostFs& self) {
  static const double start = [&] {
    auto stat = self.read("/proc/self/stat");
    // Fields after the command name, which is in parentheses and may hold spaces.
    auto close = stat.text.rfind(')');
    double btime = bootTime(self);
    if (stat.status != core::HostFs::ReadStatus::kOk || close == std::string::npos || btime < 0)
      return -1.0;
    std::istringstream in(stat.text.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 22 && in >> field; ++i) {
      if (i == 22) return btime + std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
    return -1.0;
  }();
  return start;
}

}  // namespace

size_t countOpenFds() {
  core::HostFs self("/");
  size_t table = fdTableSize(self);
  constexpr size_t kMaxTable = size_t{1} << 20;  // the kernel's default nr_open
  if (table == 0 || table > kMaxTable) return self.list("/proc/self/fd").size();
  std::vector<pollfd> fds(table);
  for (size_t i = 0; i < table; ++i) fds[i] = pollfd{static_cast<int>(i), 0, 0};
  // events 0 and timeout 0: nothing waits, and an open descriptor's revents stays 0 (or reports
  // a hang-up or error); a closed slot is POLLNVAL.
  if (poll(fds.data(), fds.size(), 0) < 0) return self.list("/proc/self/fd").size();
  size_t open = 0;
  for (const auto& p : fds) open += (p.revents & POLLNVAL) ? 0 : 1;
  return open;
}

// CPU time from getrusage(2) and memory from /proc/self/statm (two numbers): the kernel
// formats /proc/self/stat's 52 fields, walking every thread, for each read, and parsing them
// was the largest part of a scrape's per-request work after the descriptor count.
void appendProcessMetrics(core::MetricFamilies& out) {
  core::HostFs self("/");
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) == 0) {
    auto secs = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    auto c = core::counterFamily("process_cpu_seconds_total",
                                 "Total user and system CPU time spent in seconds.");
    core::addSample(c, {}, secs(ru.ru_utime) + secs(ru.ru_stime));
    out.push_back(std::move(c));
  }
  auto statm = self.read("/proc/self/statm");
  unsigned long long size_pages = 0, resident_pages = 0;
  if (statm.status == core::HostFs::ReadStatus::kOk &&
      std::sscanf(statm.text.c_str(), "%llu %llu", &size_pages, &resident_pages) == 2) {
    double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    auto v = core::gaugeFamily("process_virtual_memory_bytes", "Virtual memory size in bytes.");
    core::addSample(v, {}, static_cast<double>(size_pages) * page);
    out.push_back(std::move(v));
    auto r = core::gaugeFamily("process_resident_memory_bytes", "Resident memory size in bytes.");
    core::addSample(r, {}, static_cast<double>(resident_pages) * page);
    out.push_back(std::move(r));
  }
  if (double start = startTime(self); start >= 0) {
    auto st = core::gaugeFamily("process_start_time_seconds",
                                "Start time of the process since unix epoch in seconds.");
    core::addSample(st, {}, start);
    out.push_back(std::move(st));
  }
  auto fds = core::gaugeFamily("process_open_fds", "Number of open file descriptors.");
  core::addSample(fds, {}, static_cast<double>(countOpenFds()));
  out.push_back(std::move(fds));
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    auto m = core::gaugeFamily("process_max_fds", "Maximum number of open file descriptors.");
    core::addSample(m, {}, static_cast<double>(rl.rlim_cur));
    out.push_back(std::move(m));
  }
}

}  // namespace fabricwatch::exporter
