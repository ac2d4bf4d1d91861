// `fabricwatch nccl-log FILE|-`: reads an NCCL log (NCCL_DEBUG=INFO output of any number of
// ranks, or an NCCL_DEBUG_FILE), prints what NCCL chose and a verdict, and exits 0 when the
// verdict shows no problem at or above --fail-on, 1 when it does (or when the input holds no
// NCCL lines, so nothing can be vouched for), 2 on a usage or read error.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "core/value_format.h"
#include "exporter/commands.h"
#include "exporter/flags.h"
#include "nccl/log_parse.h"
#include "nccl/log_verdict.h"

namespace fabricwatch::exporter {
namespace {

int rank(const std::string& severity) {
  return severity == "critical" ? 3 : severity == "warning" ? 2 : severity == "info" ? 1 : 0;
}

}  // namespace

int runNcclLog(const Args& args) {
  FlagSet flags(
      "usage: fabricwatch nccl-log [flags] FILE|-\n\n"
      "Reads an NCCL log (NCCL_DEBUG=INFO; '-' reads standard input) and prints the NCCL\n"
      "version, network, NICs, GPUDirect RDMA state and per-channel transports, with a verdict.\n"
      "Exit codes: 0 no problem at or above --fail-on, 1 a problem (or no NCCL lines at all),\n"
      "2 usage or read error.");
  flags.add("format", "Output format: text or json.", "text");
  flags.add("fail-on", "Exit 1 on problems at or above this severity: critical or warning.",
            "critical");
  flags.addBool("help", "Show this help.");
  if (auto err = flags.parse(args)) {
    std::cerr << "fabricwatch nccl-log: " << *err << "\n\n" << flags.help();
    return kExitUsage;
  }
  if (flags.getBool("help")) {
    std::cout << flags.help();
    return kExitOk;
  }
  std::string format = flags.get("format"), fail_on = flags.get("fail-on");
  if (format != "text" && format != "json") {
    std::cerr << "fabricwatch nccl-log: --format must be text or json, not \"" << format << "\"\n";
    return kExitUsage;
  }
  if (fail_on != "critical" && fail_on != "warning") {
    std::cerr << "fabricwatch nccl-log: --fail-on must be critical or warning, not \"" << fail_on
              << "\"\n";
    return kExitUsage;
  }
  if (flags.positional().size() != 1) {
    std::cerr << "fabricwatch nccl-log: give one FILE, or - for standard input\n\n" << flags.help();
    return kExitUsage;
  }
  const std::string& path = flags.positional()[0];
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::cerr << "fabricwatch nccl-log: " << path << ": " << std::strerror(errno) << "\n";
    return kExitUsage;
  }
  // Streamed: memory stays bounded whatever the file's size (the parser caps lines and items),
  // and reading stops at the parser's bounds (1 GiB or 4 million lines), so an endless input
  // (/dev/zero, a pipe that never closes) ends too.
  nccl::LogParser parser;
  char buf[1 << 16];
  while (!parser.stopped()) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::cerr << "fabricwatch nccl-log: " << path << ": " << std::strerror(errno) << "\n";
      if (fd != STDIN_FILENO) ::close(fd);
      return kExitUsage;
    }
    if (n == 0) break;
    parser.feed(std::string_view(buf, static_cast<size_t>(n)));
  }
  if (fd != STDIN_FILENO) ::close(fd);
  auto summary = parser.finish();
  if (summary.truncated)
    std::cerr << "fabricwatch nccl-log: " << path << ": stopped reading after " << summary.lines
              << " lines, " << summary.bytes
              << " bytes (the parser's bound); the verdict is of what was read\n";
  auto verdict = nccl::judge(summary);
  int exit_code = verdict.status == "unknown" ? kExitViolations : kExitOk;
  for (const auto& p : verdict.problems) {
    if (rank(p.severity) >= rank(fail_on)) exit_code = kExitViolations;
  }
  if (format == "json") {
    core::Value doc = nccl::summaryValue(summary, verdict);
    doc["exit_code"] = exit_code;
    std::cout << core::toJson(doc, 2) << "\n";
  } else {
    std::cout << nccl::renderText(summary, verdict);
  }
  return exit_code;
}

}  // namespace fabricwatch::exporter
