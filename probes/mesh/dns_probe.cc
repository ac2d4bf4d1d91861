#include "probes/mesh/dns_probe.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "probes/mesh/net_util.h"

namespace fabricwatch::probes {
namespace {

std::atomic<int> g_outstanding{0};

struct Pending {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  DnsResult result;
};

DnsResult lookup(const std::string& name) {
  DnsResult r;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &res);
  if (rc != 0) {
    r.error = gai_strerror(rc);
    return r;
  }
  for (addrinfo* a = res; a; a = a->ai_next) {
    sockaddr_storage ss{};
    std::memcpy(&ss, a->ai_addr, std::min<size_t>(a->ai_addrlen, sizeof ss));
    std::string host = sockaddrHost(ss);
    if (!host.empty()) r.addresses.push_back(host);
  }
  ::freeaddrinfo(res);
  std::sort(r.addresses.begin(), r.addresses.end());
  r.addresses.erase(std::unique(r.addresses.begin(), r.addresses.end()), r.addresses.end());
  r.ok = !r.addresses.empty();
  if (!r.ok) r.error = "no addresses";
  return r;
}

}  // namespace

DnsResult resolveHost(const std::string& name, std::chrono::milliseconds timeout) {
  auto start = std::chrono::steady_clock::now();
  if (g_outstanding.fetch_add(1) >= kMaxOutstandingLookups) {
    g_outstanding--;
    DnsResult r;
    r.error = "too many lookups outstanding (resolver stuck?)";
    return r;
  }
  auto p = std::make_shared<Pending>();
  std::thread([p, name] {
    DnsResult r = lookup(name);
    {
      std::lock_guard lock(p->mu);
      p->result = std::move(r);
      p->done = true;
    }
    p->cv.notify_all();
    g_outstanding--;
  }).detach();
  std::unique_lock lock(p->mu);
  DnsResult out;
  if (p->cv.wait_for(lock, timeout, [&] { return p->done; })) {
    out = p->result;
  } else {
    out.timed_out = true;
    out.error = "timeout";
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace fabricwatch::probes
