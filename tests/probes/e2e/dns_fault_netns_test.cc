// Fault: DNS that stops answering (issue 13). Two `fabricwatch serve` in network namespaces;
// node 1 discovers the mesh through a DNS name and resolves its peers' names (the dns kind)
// through a resolver this test runs inside node 2's namespace. The resolver answers, then goes
// silent, then answers again. While it is silent node 1 must keep serving promptly, keep its
// member (grace period) and keep probing it over TCP, count the discovery failures, and hold a
// bounded number of threads (lookups run on threads of their own, at most a few outstanding).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/netns.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/require.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

// A minimal DNS server on UDP port 53 of one namespace: A records for the names it knows,
// NXDOMAIN for the rest, nothing at all while `answering` is false.
class TinyDns {
 public:
  TinyDns(const std::string& ns, const std::string& ip,
          std::map<std::string, std::vector<std::string>> records)
      : records_(std::move(records)) {
    thread_ = std::thread([this, ns, ip] { run(ns, ip); });
    auto end = Clock::now() + 5s;
    while (!ready_ && Clock::now() < end) std::this_thread::sleep_for(10ms);
  }
  ~TinyDns() {
    stop_ = true;
    thread_.join();
  }
  bool ready() const { return ready_ && fd_ >= 0; }
  std::atomic<bool> answering{true};
  std::atomic<int> queries{0};

 private:
  void run(const std::string& ns, const std::string& ip) {
    int nsfd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    bool in = nsfd >= 0 && ::setns(nsfd, CLONE_NEWNET) == 0;
    if (nsfd >= 0) ::close(nsfd);
    if (in) {
      fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(53);
      ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd_);
        fd_ = -1;
      }
      timeval tv{0, 100000};
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    ready_ = true;
    while (fd_ >= 0 && !stop_) {
      unsigned char q[512];
      sockaddr_in from{};
      socklen_t flen = sizeof from;
      ssize_t n = ::recvfrom(fd_, q, sizeof q, 0, reinterpret_cast<sockaddr*>(&from), &flen);
      if (n < 12) continue;
      ++queries;
      if (!answering) continue;
      std::string reply = answer(q, static_cast<size_t>(n));
      if (!reply.empty())
        ::sendto(fd_, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&from), flen);
    }
    if (fd_ >= 0) ::close(fd_);
  }

  std::string answer(const unsigned char* q, size_t n) {
    size_t i = 12;
    std::string name;
    while (i < n && q[i] != 0) {
      size_t len = q[i];
      if (i + 1 + len > n) return "";
      if (!name.empty()) name += '.';
      name.append(reinterpret_cast<const char*>(q + i + 1), len);
      i += 1 + len;
    }
    if (i + 5 > n) return "";
    size_t qend = i + 5;  // the root label, type, class
    uint16_t type = static_cast<uint16_t>(q[i + 1] << 8 | q[i + 2]);
    auto it = records_.find(name);
    std::string r(reinterpret_cast<const char*>(q), qend);
    r[2] = static_cast<char>(0x81);                                // response, recursion desired
    r[3] = static_cast<char>(it == records_.end() ? 0x83 : 0x80);  // NXDOMAIN or no error
    r[6] = r[7] = r[8] = r[9] = r[10] = r[11] = 0;                 // counts after the question
    uint16_t count = 0;
    if (it != records_.end() && type == 1) {
      for (const auto& ip : it->second) {
        in_addr a{};
        ::inet_pton(AF_INET, ip.c_str(), &a);
        const char rr[] = {'\xc0', '\x0c', 0, 1, 0, 1, 0, 0, 0, 0, 0, 4};
        r.append(rr, sizeof rr);
        r.append(reinterpret_cast<const char*>(&a), 4);
        ++count;
      }
    }
    r[7] = static_cast<char>(count);
    return r;
  }

  std::map<std::string, std::vector<std::string>> records_;
  std::thread thread_;
  std::atomic<bool> ready_{false}, stop_{false};
  int fd_ = -1;
};

int threadsOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

TEST(DnsFaultTest, DnsThatStopsAnsweringDegradesNothingElse) {
  if (auto why = NetnsLab::unavailableReason()) FW_UNAVAILABLE("netns") << *why;
  NetnsLab lab("10.78." + std::to_string(::getpid() % 200 + 20));
  ASSERT_NE(lab.addNode(1), "") << lab.lastError();
  ASSERT_NE(lab.addNode(2), "") << lab.lastError();
  const int kPeerPort = 19760, kWeb = 19770;
  std::string n1 = lab.address(1), n2 = lab.address(2);
  TinyDns dns(lab.nsOf(2), n2, {{"peers.fw.test", {n1, n2}}, {"node-1", {n1}}, {"node-2", {n2}}});
  ASSERT_TRUE(dns.ready()) << "cannot serve DNS in " << lab.nsOf(2);
  // `ip netns exec` puts /etc/netns/NS/resolv.conf over /etc/resolv.conf for node 1.
  std::string etc = "/etc/netns/" + lab.nsOf(1);
  std::filesystem::create_directories(etc);
  struct RemoveEtc {
    std::string dir;
    ~RemoveEtc() { std::filesystem::remove_all(dir); }
  } remove_etc{etc};
  std::ofstream(etc + "/resolv.conf") << "nameserver " << n2 << "\noptions timeout:1 attempts:1\n";

  TempDir dir;
  std::string secret = dir.write("secret", "dns-fault-secret-0123456789abcd\n");
  auto start = [&](int h, std::vector<std::string> extra) {
    std::vector<std::string> argv = {
        binaryPath(),
        "serve",
        "--web.listen-address=127.0.0.1:" + std::to_string(kWeb),
        "--node.name=node-" + std::to_string(h),
        "--peer.listen-address=" + lab.address(h) + ":" + std::to_string(kPeerPort),
        "--peer.secret-file=" + secret,
        "--probe.interval=1s"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto p = std::make_unique<Process>(lab.execArgv(h, argv));
    EXPECT_TRUE(p->waitForStderr("msg=listening", 10s)) << p->stderrText();
    return p;
  };
  auto node2 = start(2, {"--peers=" + n1 + ":" + std::to_string(kPeerPort)});
  // The DNS records carry addresses only; the port comes from probe.dns_port (no flag).
  std::string cfg = dir.write("node1.toml", "[peer]\nsecret_file = \"" + secret +
                                                "\"\n[probe]\ndns_name = \"peers.fw.test\"\n" +
                                                "dns_port = " + std::to_string(kPeerPort) + "\n");
  auto node1 = start(1, {"--config.file=" + cfg});

  auto peers = [&] {
    auto r = lab.httpGet(1, "127.0.0.1", kWeb, "/api/v1/peers");
    return r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
  };
  auto reachable = [&](const json& doc) {
    if (!doc.is_object()) return false;
    for (const auto& r : doc["results"])
      if (r["address"] == n2 + ":" + std::to_string(kPeerPort) && r["reachable"] == true)
        return true;
    return false;
  };
  auto metric = [&](const std::string& series) {
    auto r = lab.httpGet(1, "127.0.0.1", kWeb, "/metrics");
    if (!r) return -1.0;
    auto pos = r->body.find("\n" + series + " ");
    return pos == std::string::npos ? -1.0 : std::stod(r->body.substr(pos + series.size() + 2));
  };
  auto waitFor = [](auto pred, std::chrono::milliseconds timeout) {
    auto end = Clock::now() + timeout;
    while (Clock::now() < end) {
      if (pred()) return true;
      std::this_thread::sleep_for(100ms);
    }
    return pred();
  };
  ASSERT_TRUE(waitFor([&] { return reachable(peers()); }, 20s))
      << "node 1 never found node 2 through DNS: " << peers().dump() << "\n"
      << node1->stderrText() << "\nqueries answered: " << dns.queries.load();
  double errors_before = metric("fabricwatch_peer_discovery_errors_total");

  // The resolver goes silent.
  dns.answering = false;
  int queries = dns.queries;
  int max_threads = 0;
  auto silent_until = Clock::now() + 8s;
  while (Clock::now() < silent_until) {
    auto t0 = Clock::now();
    auto r = lab.httpGet(1, "127.0.0.1", kWeb, "/metrics");
    ASSERT_TRUE(r && r->status == 200);
    EXPECT_LT(Clock::now() - t0, 2s) << "a scrape waited on DNS";
    max_threads = std::max(max_threads, threadsOf(node1->pid()));
    std::this_thread::sleep_for(250ms);
  }
  EXPECT_GT(dns.queries.load(), queries) << "node 1 kept asking";
  EXPECT_GT(metric("fabricwatch_peer_discovery_errors_total"), errors_before);
  EXPECT_TRUE(reachable(peers())) << "the member is kept and probed: " << peers().dump();
  EXPECT_LT(max_threads, 64) << "lookups that never return must not pile up threads";

  // It answers again: discovery recovers (no new errors within a few rounds).
  dns.answering = true;
  double settled = -1;
  EXPECT_TRUE(waitFor(
      [&] {
        double e = metric("fabricwatch_peer_discovery_errors_total");
        bool same = e == settled;
        settled = e;
        return same;
      },
      20s));
  EXPECT_TRUE(reachable(peers()));
}

}  // namespace
}  // namespace fabricwatch::testing
