#include "exporter/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/host_fs.h"

namespace fabricwatch::exporter {

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
      auto btime_line = self.read("/proc/stat");
      auto pos = btime_line.text.find("\nbtime ");
      if (pos != std::string::npos) {
        double btime = std::stod(btime_line.text.substr(pos + 7));
        auto s = core::gaugeFamily("process_start_time_seconds",
                                   "Start time of the process since unix epoch in seconds.");
        core::addSample(s, {}, btime + std::stod(f[19]) / static_cast<double>(ticks));
        out.push_back(std::move(s));
      }
    }
  }
  auto fds = core::gaugeFamily("process_open_fds", "Number of open file descriptors.");
  core::addSample(fds, {}, static_cast<double>(self.list("/proc/self/fd").size()));
  out.push_back(std::move(fds));
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    auto m = core::gaugeFamily("process_max_fds", "Maximum number of open file descriptors.");
    core::addSample(m, {}, static_cast<double>(rl.rlim_cur));
    out.push_back(std::move(m));
  }
}

}  // namespace fabricwatch::exporter
