#include "tests/support/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <thread>

namespace fabricwatch::testing {
namespace {

const char* kIp = "/usr/sbin/ip";
std::atomic<int> g_counter{0};

}  // namespace

std::optional<std::string> NetnsLab::unavailableReason() {
  if (const char* off = std::getenv("FW_TEST_NO_NETNS"); off && *off)
    return "FW_TEST_NO_NETNS is set";
  if (::geteuid() != 0) return "network namespaces need root (CAP_NET_ADMIN and CAP_SYS_ADMIN)";
  if (::access(kIp, X_OK) != 0) return std::string(kIp) + " (iproute2) is not installed";
  std::string probe = "fwprobe" + std::to_string(::getpid()) + "x" + std::to_string(g_counter++);
  RunResult add = runCommand({kIp, "netns", "add", probe}, std::chrono::seconds(10));
  if (add.exit_code != 0) return "cannot create a network namespace: " + add.err;
  RunResult link = runCommand({kIp, "-n", probe, "link", "add", "b0", "type", "bridge"},
                              std::chrono::seconds(10));
  runCommand({kIp, "netns", "del", probe}, std::chrono::seconds(10));
  if (link.exit_code != 0) return "cannot create a bridge in a namespace: " + link.err;
  return std::nullopt;
}

NetnsLab::NetnsLab(std::string subnet) : subnet_(std::move(subnet)) {
  prefix_ = "fw" + std::to_string(::getpid()) + "n" + std::to_string(g_counter++);
  hub_ = prefix_ + "-hub";
  if (ip({"netns", "add", hub_}) && ip({"-n", hub_, "link", "add", "br0", "type", "bridge"}))
    ip({"-n", hub_, "link", "set", "br0", "up"});
}

NetnsLab::~NetnsLab() {
  for (const auto& [_, ns] : nodes_)
    runCommand({kIp, "netns", "del", ns}, std::chrono::seconds(10));
  runCommand({kIp, "netns", "del", hub_}, std::chrono::seconds(10));
}

bool NetnsLab::ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kIp};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = runCommand(argv, std::chrono::seconds(10));
  if (r.exit_code != 0) {
    error_ = "ip";
    for (const auto& a : args) error_ += " " + a;
    error_ += ": " + r.err;
    return false;
  }
  return true;
}

std::string NetnsLab::addNode(int host) {
  std::string ns = prefix_ + "-" + std::to_string(host);
  std::string hub_end = "vh" + std::to_string(host);
  bool ok = ip({"netns", "add", ns});
  if (ok) nodes_.emplace_back(host, ns);
  ok = ok && ip({"-n", hub_, "link", "add", hub_end, "type", "veth", "peer", "name", "eth0",
                 "netns", ns});
  ok = ok && ip({"-n", hub_, "link", "set", hub_end, "master", "br0", "up"});
  ok = ok && ip({"-n", ns, "addr", "add", address(host) + "/24", "dev", "eth0"});
  ok = ok && ip({"-n", ns, "link", "set", "eth0", "up"});
  ok = ok && ip({"-n", ns, "link", "set", "lo", "up"});
  return ok ? ns : "";
}

const std::string& NetnsLab::nsOf(int host) const {
  static const std::string kNone;
  for (const auto& [h, ns] : nodes_)
    if (h == host) return ns;
  return kNone;
}

bool NetnsLab::setLink(int host, bool up, const std::string& dev) {
  return ip({"-n", nsOf(host), "link", "set", dev, up ? "up" : "down"});
}

std::string NetnsLab::hubLink(int host, int rail) {
  return "vh" + std::to_string(host) + "r" + std::to_string(rail);
}

bool NetnsLab::addRail(int rail, const std::string& subnet, const std::vector<int>& hosts,
                       const std::map<int, std::string>& names) {
  std::string br = "br" + std::to_string(rail);
  bool ok = ip({"-n", hub_, "link", "add", br, "type", "bridge"}) &&
            ip({"-n", hub_, "link", "set", br, "up"});
  for (int host : hosts) {
    auto named = names.find(host);
    std::string dev = named != names.end() ? named->second : "eth" + std::to_string(rail);
    std::string ns = nsOf(host);
    std::string hub_end = hubLink(host, rail);
    ok = ok && !ns.empty() &&
         ip({"-n", hub_, "link", "add", hub_end, "type", "veth", "peer", "name", dev, "netns", ns});
    ok = ok && ip({"-n", hub_, "link", "set", hub_end, "master", br, "up"});
    ok = ok &&
         ip({"-n", ns, "addr", "add", subnet + "." + std::to_string(host) + "/24", "dev", dev});
    ok = ok && ip({"-n", ns, "link", "set", dev, "up"});
  }
  return ok;
}

RunResult NetnsLab::inHub(const std::vector<std::string>& argv) const {
  std::vector<std::string> full = {kIp, "netns", "exec", hub_};
  full.insert(full.end(), argv.begin(), argv.end());
  return runCommand(full, std::chrono::seconds(10));
}

std::vector<std::string> NetnsLab::hubExecArgv(const std::vector<std::string>& argv) const {
  std::vector<std::string> out = {kIp, "netns", "exec", hub_};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> NetnsLab::execArgv(int host, const std::vector<std::string>& argv) const {
  std::vector<std::string> out = {kIp, "netns", "exec", nsOf(host)};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::optional<HttpResult> NetnsLab::httpGet(int host, const std::string& ip_addr, int port,
                                            const std::string& path) const {
  std::optional<HttpResult> result;
  std::string file = "/var/run/netns/" + nsOf(host);
  // setns() moves only the calling thread, so a short-lived thread does the request.
  std::thread t([&] {
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    bool in = ::setns(fd, CLONE_NEWNET) == 0;
    ::close(fd);
    if (in) result = testing::httpGet(ip_addr, port, path, std::chrono::seconds(3));
  });
  t.join();
  return result;
}

}  // namespace fabricwatch::testing
