// A minimal HTTP/1.1 client for the whole-process comparisons (bench/compare.sh): it scrapes
// one URL N times, one request after the other on a new connection each (as Prometheus does
// with keep-alive off), and prints the median, minimum and maximum wall time per request and
// the bytes of the last body. With --gzip it sends "Accept-Encoding: gzip" as Prometheus does.
// It never parses the body: the time measured is the server's, plus one loopback round trip.
//
//   scrape_load HOST:PORT PATH N [--gzip]
//   e.g. build-bench/bench/scrape_load 127.0.0.1:19736 /metrics 200 --gzip
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Reply {
  bool ok = false;
  size_t body_bytes = 0;
  bool gzip = false;
};

Reply get(const sockaddr_in& addr, const std::string& request) {
  Reply r;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return r;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return r;
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = write(fd, request.data() + sent, request.size() - sent);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string reply;
  char buf[65536];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  size_t head_end = reply.find("\r\n\r\n");
  if (head_end == std::string::npos || reply.compare(0, 12, "HTTP/1.1 200") != 0) return r;
  r.ok = true;
  r.body_bytes = reply.size() - head_end - 4;
  std::string head = reply.substr(0, head_end);
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  r.gzip = head.find("content-encoding: gzip") != std::string::npos;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s HOST:PORT PATH N [--gzip]\n", argv[0]);
    return 2;
  }
  std::string hostport = argv[1];
  auto colon = hostport.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(hostport.c_str() + colon + 1)));
  if (colon == std::string::npos ||
      inet_pton(AF_INET, hostport.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
    std::fprintf(stderr, "HOST must be an IPv4 address\n");
    return 2;
  }
  int n = std::atoi(argv[3]);
  bool gzip = argc > 4 && std::strcmp(argv[4], "--gzip") == 0;
  std::string request = std::string("GET ") + argv[2] + " HTTP/1.1\r\nHost: " + hostport +
                        "\r\nUser-Agent: scrape_load\r\nAccept: text/plain\r\n" +
                        (gzip ? "Accept-Encoding: gzip\r\n" : "") + "Connection: close\r\n\r\n";
  std::vector<double> us;
  Reply last;
  for (int i = 0; i < n; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    last = get(addr, request);
    auto t1 = std::chrono::steady_clock::now();
    if (!last.ok) {
      std::fprintf(stderr, "request %d failed\n", i);
      return 1;
    }
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  double median =
      us.size() % 2 ? us[us.size() / 2] : (us[us.size() / 2 - 1] + us[us.size() / 2]) / 2;
  std::printf("requests=%d median_us=%.1f min_us=%.1f max_us=%.1f bytes=%zu gzip=%d\n", n, median,
              us.front(), us.back(), last.body_bytes, last.gzip ? 1 : 0);
  return 0;
}
