#include "exporter/process_metrics.h"

#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

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

void appendProcessMetrics(core::MetricFamilies& out) {
  core::HostFs self("/");
  long ticks = sysconf(_SC_CLK_TCK);
  long page = sysconf(_SC_PAGESIZE);
  auto stat = self.read("/proc/self/stat");
  if (stat.status == core::HostFs::ReadStatus::kOk) {
    // Fields after the command name, which is in parentheses and may hold spaces.
    auto close = stat.text.rfind(')');
    std::istringstream in(close == std::string::npos ? "" : stat.text.substr(close + 2));
    std::string field;
    std::vector<std::string> f;
    while (in >> field) f.push_back(field);
    // f[0] is field 3 (state); utime=14, stime=15, starttime=22, vsize=23, rss=24.
    if (f.size() > 22) {
      double cpu = (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(ticks);
      auto c = core::counterFamily("process_cpu_seconds_total",
                                   "Total user and system CPU time spent in seconds.");
      core::addSample(c, {}, cpu);
      out.push_back(std::move(c));
      auto v = core::gaugeFamily("process_virtual_memory_bytes", "Virtual memory size in bytes.");
      core::addSample(v, {}, std::stod(f[20]));
      out.push_back(std::move(v));
      auto r = core::gaugeFamily("process_resident_memory_bytes", "Resident memory size in bytes.");
      core::addSample(r, {}, std::stod(f[21]) * static_cast<double>(page));
      out.push_back(std::move(r));
      if (double btime = bootTime(self); btime >= 0) {
        auto s = core::gaugeFamily("process_start_time_seconds",
                                   "Start time of the process since unix epoch in seconds.");
        core::addSample(s, {}, btime + std::stod(f[19]) / static_cast<double>(ticks));
        out.push_back(std::move(s));
      }
    }
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
