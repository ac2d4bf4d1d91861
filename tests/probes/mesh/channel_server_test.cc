#include "probes/mesh/channel_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "probes/mesh/channel_client.h"
#include "probes/mesh/echo_client.h"
#include "probes/mesh/messages.h"
#include "tests/support/eventually.h"
#include "tests/support/with_openssl.h"

namespace fabricwatch::probes {
namespace {

using testing::eventually;

using namespace std::chrono_literals;
const std::string kChannelSecret = "channel-test-secret-0123456789";

int connectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A TCP connection to the server from a given loopback source address (127.0.0.0/8 is all
// local on Linux, so 127.0.0.2.. stand for other hosts without any setup).
int connectFrom(const char* source, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &src.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) {
    ::close(fd);
    return -1;
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// True when the server closes the connection within `timeout` (reading and discarding data).
bool closedWithin(int fd, std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return true;
  }
  return false;
}

// Sends `bytes` on a new connection to `port`: true when all were sent and the server then
// closed the connection within 2 s.
bool sentAndClosed(int port, const std::string& bytes) {
  int fd = connectTo(port);
  if (fd < 0) return false;
  bool sent = ::send(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size());
  bool closed = sent && closedWithin(fd, 2s);
  ::close(fd);
  return closed;
}

uint64_t dropped(const ChannelServer& s, DropReason r) {
  return s.stats().dropped[static_cast<size_t>(r)];
}

class ChannelServerTest : public testing::WithOpenSsl {
 protected:
  void SetUp() override {
    opts_.listen_address = "127.0.0.1:0";
    opts_.secret = kChannelSecret;
    opts_.node_name = "server-node";
    opts_.group = "rack-1";
    opts_.frame_timeout = 300ms;
  }
  void start() {
    server_ = std::make_unique<ChannelServer>(opts_);
    ASSERT_TRUE(server_->start());
    addr_ = "127.0.0.1:" + std::to_string(server_->port());
  }
  EchoResult echo(const std::string& secret = kChannelSecret) {
    EchoOptions o{secret, "client", 3, 1000ms, 1000ms};
    return runEcho(addr_, o);
  }
  ChannelServerOptions opts_;
  std::unique_ptr<ChannelServer> server_;
  std::string addr_;
};

TEST_F(ChannelServerTest, AnswersAuthenticatedEchoes) {
  start();
  EchoResult r = echo();
  EXPECT_TRUE(r.connected);
  EXPECT_EQ(r.failure, EchoFailure::kNone) << r.error;
  EXPECT_EQ(r.rtt_seconds.size(), 3u);
  EXPECT_EQ(r.peer_node, "server-node");
  EXPECT_EQ(r.peer_group, "rack-1");
  EXPECT_TRUE(eventually([&] { return server_->stats().frames == 3; }));
}

TEST_F(ChannelServerTest, WrongSecretIsDroppedAndCounted) {
  start();
  EchoResult r = echo("a-different-secret-entirely");
  EXPECT_TRUE(r.rtt_seconds.empty());
  EXPECT_EQ(r.failure, EchoFailure::kClosed);
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kAuth) == 1; }));
  EXPECT_EQ(server_->stats().frames, 0u);
}

TEST_F(ChannelServerTest, GarbageIsDroppedAtOnce) {
  start();
  EXPECT_TRUE(sentAndClosed(server_->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kMalformed) == 1; }));
}

TEST_F(ChannelServerTest, OversizedLengthPrefixIsDroppedBeforeBuffering) {
  start();
  Frame f;
  f.timestamp_ms = nowUnixMs();
  f.nonce = 1;
  std::string header = encodeFrame(f, kChannelSecret).substr(0, kHeaderSize);
  for (int i = 8; i < 12; ++i) header[i] = '\x7f';  // ~2 GB claimed
  EXPECT_TRUE(sentAndClosed(server_->port(), header));
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kOversized) == 1; }));
}

TEST_F(ChannelServerTest, WrongVersionIsDropped) {
  start();
  Frame f;
  f.timestamp_ms = nowUnixMs();
  f.nonce = 2;
  f.payload = encodeEchoRequest({0, "x"});
  std::string wire = encodeFrame(f, kChannelSecret);
  wire[4] = 9;
  EXPECT_TRUE(sentAndClosed(server_->port(), wire));
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kVersion) == 1; }));
}

TEST_F(ChannelServerTest, ReplayedFrameIsDropped) {
  start();
  Frame f;
  f.timestamp_ms = nowUnixMs();
  f.nonce = 0xabcdef;
  f.payload = encodeEchoRequest({0, "attacker"});
  std::string wire = encodeFrame(f, kChannelSecret);
  int a = connectTo(server_->port());
  ASSERT_GT(::send(a, wire.data(), wire.size(), 0), 0);
  EXPECT_TRUE(eventually([&] { return server_->stats().frames == 1; }));
  int b = connectTo(server_->port());
  ASSERT_GT(::send(b, wire.data(), wire.size(), 0), 0);
  EXPECT_TRUE(closedWithin(b, 2s));
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kReplay) == 1; }));
  ::close(a);
  ::close(b);
}

TEST_F(ChannelServerTest, SlowlorisIsCutOffWithoutStallingOthers) {
  start();
  Frame f;
  f.timestamp_ms = nowUnixMs();
  f.nonce = 3;
  f.payload = encodeEchoRequest({0, "slow"});
  std::string wire = encodeFrame(f, kChannelSecret);
  int fd = connectTo(server_->port());
  ASSERT_EQ(::send(fd, wire.data(), 10, 0), 10);  // part of the header, then nothing
  // Meanwhile the server keeps answering.
  EchoResult r = echo();
  EXPECT_EQ(r.rtt_seconds.size(), 3u) << r.error;
  EXPECT_TRUE(closedWithin(fd, 3s));
  ::close(fd);
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kTimeout) == 1; }));
}

TEST_F(ChannelServerTest, IdleStrangersHoldAQuarterOfTheSlotsAndDisplaceOnlyThemselves) {
  opts_.max_connections = 8;  // two for connections that have not authenticated
  opts_.max_connections_per_address = 100;
  opts_.frame_timeout = 5s;
  start();
  int a1 = connectFrom("127.0.0.2", server_->port());
  int a2 = connectFrom("127.0.0.2", server_->port());
  EXPECT_TRUE(eventually([&] { return server_->stats().open == 2; }));
  // A third from the same address finds no room: it would only displace its own kind.
  int a3 = connectFrom("127.0.0.2", server_->port());
  EXPECT_TRUE(closedWithin(a3, 3s));
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kLimit) == 1; }));
  // A newcomer from another address takes the place of the oldest of the address holding most.
  int b1 = connectFrom("127.0.0.3", server_->port());
  EXPECT_TRUE(closedWithin(a1, 3s));
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kEvicted) == 1; }));
  // A real peer gets in the same way (a2 gives way), and is gone once it has its answers.
  EXPECT_EQ(echo().rtt_seconds.size(), 3u);
  EXPECT_TRUE(closedWithin(a2, 3s));
  EXPECT_TRUE(eventually([&] { return server_->stats().open == 1; }));
  EXPECT_EQ(dropped(*server_, DropReason::kEvicted), 2u);
  for (int fd : {a1, a2, a3, b1}) ::close(fd);
}

TEST_F(ChannelServerTest, AConnectionWithoutAFirstFrameIsClosedAtTheDeadline) {
  start();
  int fd = connectTo(server_->port());
  EXPECT_TRUE(closedWithin(fd, 3s));  // frame_timeout is 300 ms here, idle_timeout 10 s
  ::close(fd);
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kUnauthenticated) == 1; }));
}

TEST_F(ChannelServerTest, PerAddressLimit) {
  opts_.max_connections = 100;
  opts_.max_connections_per_address = 2;
  start();
  int a = connectTo(server_->port()), b = connectTo(server_->port());
  EXPECT_TRUE(eventually([&] { return server_->stats().open == 2; }));
  int c = connectTo(server_->port());
  EXPECT_TRUE(closedWithin(c, 2s));
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kLimit) == 1; }));
  for (int fd : {a, b, c}) ::close(fd);
}

// Fault: a peer killed in the middle of a probe (its connection reset after it read the
// request), and a peer that stops mid-probe (reads, never answers). Each is a classified
// failure within the probe's time limits, never a hang; the next probe of a live peer works.
TEST_F(ChannelServerTest, APeerKilledOrStoppedMidProbeIsAFailureNotAHang) {
  for (bool killed : {true, false}) {
    int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(lfd, 4), 0);
    socklen_t len = sizeof a;
    ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    std::atomic<bool> done{false};
    std::thread peer([&] {
      int c = ::accept(lfd, nullptr, nullptr);
      char buf[256];
      (void)::recv(c, buf, sizeof buf, 0);  // the request is in
      if (killed) {
        linger l{1, 0};  // closed by a dying process: a reset
        ::setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        ::close(c);
      } else {
        while (!done) std::this_thread::sleep_for(10ms);  // stopped: holds it, says nothing
        ::close(c);
      }
    });
    auto t0 = std::chrono::steady_clock::now();
    EchoResult r = runEcho("127.0.0.1:" + std::to_string(ntohs(a.sin_port)),
                           {kChannelSecret, "client", 3, 1000ms, 500ms});
    auto took = std::chrono::steady_clock::now() - t0;
    done = true;
    peer.join();
    ::close(lfd);
    EXPECT_TRUE(r.connected);
    EXPECT_TRUE(r.rtt_seconds.empty());
    EXPECT_EQ(r.failure, killed ? ChannelFailure::kClosed : ChannelFailure::kTimeout)
        << (killed ? "killed: " : "stopped: ") << r.error;
    EXPECT_LT(took, 3s);
  }
  start();
  EXPECT_EQ(echo().rtt_seconds.size(), 3u);
}

TEST_F(ChannelServerTest, ProbeFailuresAreClassified) {
  start();
  int port = server_->port();
  server_->stop();
  EchoOptions o{kChannelSecret, "client", 1, 500ms, 500ms};
  EchoResult refused = runEcho("127.0.0.1:" + std::to_string(port), o);
  EXPECT_EQ(refused.failure, EchoFailure::kRefused);
  EXPECT_FALSE(refused.connected);
  EchoResult bad = runEcho("not-an-address", o);
  EXPECT_EQ(bad.failure, EchoFailure::kError);
}

// Issue 13: 64 idle TCP connections from four source addresses, reopened as the server closes
// them, filled every slot of the channel; real peers were refused and reported the node down,
// and the attacker's own connections were counted under no reason. With the default limits,
// a real peer must keep probing through the whole attack, and every connection the server
// closes on the attacker must be counted.
TEST_F(ChannelServerTest, IdleConnectionsWithoutTheSecretCannotStarveRealPeers) {
  opts_.frame_timeout = 500ms;      // the deadline for a connection's first authenticated frame
  opts_.replay_capacity = 1 << 20;  // the test's peer probes far faster than a real one
  start();
  ASSERT_EQ(opts_.max_connections, 64);
  const char* sources[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"};
  std::atomic<bool> attacking{true};
  std::atomic<uint64_t> attacker_connects{0}, closed_on_attacker{0};
  std::thread attacker([&] {
    std::vector<std::pair<int, int>> held;  // (fd, source index)
    auto top_up = [&] {
      for (int s = 0; s < 4; ++s) {
        int have = 0;
        for (auto& h : held) have += h.second == s;
        for (; have < 16; ++have) {
          int fd = connectFrom(sources[s], server_->port());
          if (fd < 0) break;
          ++attacker_connects;
          held.emplace_back(fd, s);
        }
      }
    };
    top_up();
    while (attacking) {
      std::vector<pollfd> p;
      for (auto& h : held) p.push_back({h.first, POLLIN, 0});
      ::poll(p.data(), p.size(), 20);
      for (size_t i = 0; i < p.size(); ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char b[64];
        if (::recv(p[i].fd, b, sizeof b, MSG_DONTWAIT) > 0) continue;
        ++closed_on_attacker;
        ::close(p[i].fd);
        held[i].first = -1;
      }
      std::erase_if(held, [](const auto& h) { return h.first < 0; });
      top_up();
    }
    for (auto& h : held) ::close(h.first);
  });
  EXPECT_TRUE(eventually([&] { return attacker_connects >= 64; }));
  // A real peer probes again and again, for several first-frame deadlines, while the attacker
  // holds (and reopens) its connections.
  auto until = std::chrono::steady_clock::now() + 2500ms;
  for (int i = 0; i < 15 || std::chrono::steady_clock::now() < until; ++i) {
    EchoResult r = echo();
    EXPECT_EQ(r.rtt_seconds.size(), 3u) << "probe " << i << ": " << r.error << [&] {
      std::string d;
      for (size_t k = 0; k < static_cast<size_t>(DropReason::kCount); ++k)
        d += std::string(" ") + dropReasonName(static_cast<DropReason>(k)) + "=" +
             std::to_string(server_->stats().dropped[k]);
      return d;
    }();
  }
  EXPECT_GT(attacker_connects.load(), 64u) << "the server closed none of the idle connections";
  attacking = false;
  attacker.join();
  auto counted = [&] {
    return dropped(*server_, DropReason::kUnauthenticated) +
           dropped(*server_, DropReason::kEvicted) + dropped(*server_, DropReason::kLimit);
  };
  EXPECT_GT(closed_on_attacker.load(), 0u);
  EXPECT_GE(counted(), closed_on_attacker.load()) << "every connection closed is counted";
}

// The replay guard charges frames to their connection's source address: a member flooding
// frames stamped ahead uses up its own share (counted as replay_budget), and a peer at another
// address is still answered.
TEST_F(ChannelServerTest, AMembersFutureStampedFloodOnlyCostsItsOwnShare) {
  opts_.replay_capacity = 4096;  // 256 per source address
  start();
  int fd = connectFrom("127.0.0.2", server_->port());
  ASSERT_GE(fd, 0);
  std::string wire;
  for (uint64_t i = 0; i < 300; ++i) {
    Frame f;
    f.timestamp_ms = nowUnixMs() + 29000;
    f.nonce = 5000 + i;
    f.payload = encodeEchoRequest({static_cast<uint32_t>(i), "member"});
    wire += encodeFrame(f, kChannelSecret);
  }
  ASSERT_EQ(::send(fd, wire.data(), wire.size(), 0), static_cast<ssize_t>(wire.size()));
  EXPECT_TRUE(closedWithin(fd, 3s));
  ::close(fd);
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kReplayBudget) == 1; }));
  EXPECT_EQ(server_->stats().frames, 256u);
  EXPECT_EQ(echo().rtt_seconds.size(), 3u);
}

constexpr auto kPing = static_cast<FrameType>(static_cast<int>(FrameType::kPrivateFirst));
constexpr auto kPong = static_cast<FrameType>(static_cast<int>(FrameType::kPrivateFirst) + 1);

// A kind's request handler: "ping" is answered with who asked, "busy" declined, the rest is
// malformed.
RequestHandler pingHandler() {
  return {kPing, kPong, 8, [](std::string_view p, const Sender& from) {
            if (p == "ping") return Answer::reply("pong from " + from.address);
            if (p == "busy") return Answer::decline("busy with another session");
            return Answer::malformed();
          }};
}

CallResult call(int port, std::string_view payload, FrameType type = kPing) {
  ChannelClient c(kChannelSecret);
  CallResult r = c.connect("127.0.0.1:" + std::to_string(port), 1000ms);
  return r.failure == ChannelFailure::kNone ? c.call(type, payload, kPong, 1000ms) : r;
}

TEST_F(ChannelServerTest, RoutesAKindsRequestsToItsHandler) {
  opts_.handlers.push_back(pingHandler());
  start();
  CallResult r = call(server_->port(), "ping");
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.payload, "pong from 127.0.0.1");
  CallResult busy = call(server_->port(), "busy");
  EXPECT_EQ(busy.failure, ChannelFailure::kNone);
  EXPECT_EQ(busy.declined, "busy with another session");
  EXPECT_TRUE(eventually([&] { return server_->stats().frames == 2; }));
  // The echo still answers beside it, with this instance's ID.
  EXPECT_NE(echo().peer_instance, 0u);
  EXPECT_EQ(echo().peer_instance, server_->instance());
}

TEST_F(ChannelServerTest, DeclinesRequestTypesItDoesNotServe) {
  start();
  CallResult r = call(server_->port(), "ping");
  EXPECT_EQ(r.failure, ChannelFailure::kNone) << r.error;
  EXPECT_EQ(r.declined, "request type 240 is not served here");
}

TEST_F(ChannelServerTest, RequestsOverTheirHandlersBoundAreDroppedUnread) {
  opts_.handlers.push_back(pingHandler());
  start();
  CallResult r = call(server_->port(), "ping-ping");  // 9 bytes, the handler takes 8
  EXPECT_EQ(r.failure, ChannelFailure::kClosed);
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kOversized) == 1; }));
  CallResult m = call(server_->port(), "pang");
  EXPECT_EQ(m.failure, ChannelFailure::kClosed);
  EXPECT_TRUE(eventually([&] { return dropped(*server_, DropReason::kMalformed) == 1; }));
  EXPECT_EQ(server_->stats().frames, 0u);
}

TEST_F(ChannelServerTest, ARequestTypeHasOneHandler) {
  opts_.handlers = {pingHandler(), pingHandler()};
  ChannelServer twice(opts_);
  EXPECT_FALSE(twice.start());
  opts_.handlers = {pingHandler()};
  opts_.handlers[0].request = FrameType::kEchoRequest;  // the channel's own
  ChannelServer echo(opts_);
  EXPECT_FALSE(echo.start());
}

}  // namespace
}  // namespace fabricwatch::probes
