// The fabric engine with real libfabric providers, both sides in this process: a Responder (its
// own thread and endpoint) and an Initiator, on tcp bound to loopback, shm, and udp;ofi_rxd
// where this machine offers them. Latency and bandwidth sessions complete and measure, a
// session against a responder that stops answering ends at its deadline with the endpoint
// reopened, a busy responder declines, and strays (another session's messages) are ignored.
#include "probes/kinds/fabric/pingpong.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <thread>

#include "probes/kinds/fabric/initiator.h"
#include "probes/kinds/fabric/libfabric.h"
#include "probes/kinds/fabric/responder.h"
#include "tests/support/require.h"

namespace fabricwatch::probes::fabric {
namespace {

using namespace std::chrono_literals;

EndpointOptions tcpOptions() {
  EndpointOptions o;
  o.provider = "tcp";
  o.source_address = "127.0.0.1";
  o.max_message = 1 << 20;
  return o;
}

// Skips (with the reason) where a provider is missing, so the suite runs on any libfabric.
bool present(const EndpointOptions& o, std::string* why) {
  ProviderFacts f;
  std::optional<FabricError> err;
  auto ep = Endpoint::open(o, f, err);
  if (!ep) *why = o.provider + ": " + err->message();
  return ep != nullptr;
}

struct Pair {
  explicit Pair(EndpointOptions o, size_t latency = 64) : responder(o, 5s), initiator(o, latency) {
    responder.start();
  }
  bool ready() { return responder.waitOpen(10s) && !initiator.ensureOpen(); }
  fi_addr_t address() {
    std::optional<FabricError> err;
    auto a = initiator.address(responder.hello().name, err);
    EXPECT_TRUE(a) << (err ? err->message() : "");
    return a.value_or(FI_ADDR_UNSPEC);
  }
  Responder responder;
  Initiator initiator;
};

SessionSpec latencySpec(uint32_t count, uint32_t size = 64) {
  return {randomSessionId(), SessionKind::kLatency, size, count, 1, 5000};
}

TEST(FabricPingPongTest, LatencyOverTcpOnLoopback) {
  Pair p(tcpOptions());
  ASSERT_TRUE(p.ready()) << p.initiator.openError()->message();
  EXPECT_EQ(p.initiator.facts().provider, "tcp;ofi_rxm");
  EXPECT_EQ(p.initiator.facts().domain, "lo");
  auto spec = latencySpec(110);
  auto begun = p.responder.begin(spec, p.initiator.name());
  ASSERT_TRUE(std::holds_alternative<uint64_t>(begun)) << std::get<std::string>(begun);
  Measurement m = p.initiator.latency(p.address(), spec, 10, Clock::now() + 10s, nullptr);
  ASSERT_FALSE(m.error) << m.error->message();
  EXPECT_EQ(m.completed, 110u);
  ASSERT_EQ(m.rtt_seconds.size(), 100u);
  for (double s : m.rtt_seconds) {
    EXPECT_GT(s, 0);
    EXPECT_LT(s, 1.0);
  }
  EXPECT_GT(m.elapsed_seconds, 0);
  // The responder's side ends too, cleanly.
  auto deadline = Clock::now() + 10s;
  while (p.responder.stats().sessions < 1 && Clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(p.responder.stats().sessions, 1u);
  EXPECT_EQ(p.responder.stats().failed, 0u);
}

void waitSessions(Responder& r, uint64_t n) {
  auto deadline = Clock::now() + 10s;
  while (r.stats().sessions < n && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
}

class EachProvider : public ::testing::TestWithParam<std::string> {};

TEST_P(EachProvider, LatencyThenBandwidth) {
  EndpointOptions o = tcpOptions();
  o.provider = GetParam();
  std::string why;
  if (!present(o, &why)) FW_UNAVAILABLE("fabric") << why;
  Pair p(o);
  ASSERT_TRUE(p.ready());
  fi_addr_t peer = p.address();
  auto lat = latencySpec(60);
  ASSERT_TRUE(std::holds_alternative<uint64_t>(p.responder.begin(lat, p.initiator.name())));
  Measurement m = p.initiator.latency(peer, lat, 10, Clock::now() + 10s, nullptr);
  ASSERT_FALSE(m.error) << GetParam() << ": " << m.error->message();
  ASSERT_EQ(m.rtt_seconds.size(), 50u);
  waitSessions(p.responder, 1);

  SessionSpec bw{randomSessionId(), SessionKind::kBandwidth, 256 << 10, 4, 8, 5000};
  auto begun = p.responder.begin(bw, p.initiator.name());
  ASSERT_TRUE(std::holds_alternative<uint64_t>(begun)) << std::get<std::string>(begun);
  m = p.initiator.bandwidth(peer, bw, 1, Clock::now() + 10s, nullptr);
  ASSERT_FALSE(m.error) << GetParam() << ": " << m.error->message();
  EXPECT_EQ(m.completed, 4u);
  EXPECT_EQ(m.bytes, uint64_t{3} * 8 * (256 << 10));
  EXPECT_GT(m.elapsed_seconds, 0);
  waitSessions(p.responder, 2);
  EXPECT_EQ(p.responder.stats().failed, 0u);
  EXPECT_EQ(p.initiator.reopened(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Providers, EachProvider, ::testing::Values("tcp", "shm", "udp;ofi_rxd"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == ';') c = '_';
                           return n;
                         });

TEST(FabricPingPongTest, RegistersBuffersWhenAskedEvenWhereTheProviderDoesNot) {
  EndpointOptions o = tcpOptions();
  o.register_buffers = true;
  Pair p(o);
  ASSERT_TRUE(p.ready());
  EXPECT_FALSE(p.initiator.facts().mr_local);  // tcp does not ask for FI_MR_LOCAL
  EXPECT_TRUE(p.initiator.facts().registered);
  auto spec = latencySpec(20);
  ASSERT_TRUE(std::holds_alternative<uint64_t>(p.responder.begin(spec, p.initiator.name())));
  Measurement m = p.initiator.latency(p.address(), spec, 5, Clock::now() + 10s, nullptr);
  ASSERT_FALSE(m.error) << m.error->message();
  EXPECT_EQ(m.rtt_seconds.size(), 15u);
}

TEST(FabricPingPongTest, BusyResponderDeclines) {
  Pair p(tcpOptions());
  ASSERT_TRUE(p.ready());
  auto first = latencySpec(10);
  ASSERT_TRUE(std::holds_alternative<uint64_t>(p.responder.begin(first, p.initiator.name())));
  auto second = p.responder.begin(latencySpec(10), p.initiator.name());
  ASSERT_TRUE(std::holds_alternative<std::string>(second));
  EXPECT_EQ(std::get<std::string>(second), "busy");
  EXPECT_EQ(p.responder.stats().declined_busy, 1u);
  Measurement m = p.initiator.latency(p.address(), first, 0, Clock::now() + 10s, nullptr);
  EXPECT_FALSE(m.error);
}

TEST(FabricPingPongTest, ResponderIgnoresMessagesOfAnotherSession) {
  Pair p(tcpOptions());
  ASSERT_TRUE(p.ready());
  auto accepted = latencySpec(5);
  accepted.timeout_ms = 1000;
  ASSERT_TRUE(std::holds_alternative<uint64_t>(p.responder.begin(accepted, p.initiator.name())));
  // Pings that carry another session ID get no answer: the prober times out.
  auto forged = accepted;
  forged.id ^= 1;
  auto t0 = Clock::now();
  Measurement m = p.initiator.latency(p.address(), forged, 0, Clock::now() + 500ms, nullptr);
  ASSERT_TRUE(m.error);
  EXPECT_EQ(m.error->text, "timed out");
  EXPECT_LT(Clock::now() - t0, 5s);
  waitSessions(p.responder, 1);
  EXPECT_GE(p.responder.stats().stray, 1u);
  EXPECT_EQ(p.responder.stats().failed, 1u);  // its own session timed out
  // Both sides canceled their receive (the ping was injected): each keeps its endpoint (the
  // same epoch: closing rxm's endpoint after a broken-off session is what crashed libfabric),
  // and the next session works.
  ASSERT_FALSE(p.initiator.ensureOpen());
  EXPECT_EQ(p.initiator.reopened(), 0u);
  EXPECT_EQ(p.initiator.retired(), 0u);
  ASSERT_TRUE(p.responder.waitOpen(10s));
  EXPECT_EQ(p.responder.stats().reopened, 0u);
  auto next = latencySpec(5);
  auto begun = p.responder.begin(next, p.initiator.name());
  ASSERT_TRUE(std::holds_alternative<uint64_t>(begun)) << std::get<std::string>(begun);
  EXPECT_EQ(std::get<uint64_t>(begun), 1u);  // the same epoch
  m = p.initiator.latency(p.address(), next, 0, Clock::now() + 10s, nullptr);
  EXPECT_FALSE(m.error) << m.error->message();
}

size_t openFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

TEST(FabricPingPongTest, FailedSessionsLeakNothing) {
  Pair p(tcpOptions());
  ASSERT_TRUE(p.ready());
  auto once = [&](bool fail) {
    auto spec = latencySpec(5);
    spec.timeout_ms = 300;
    auto begun = p.responder.begin(spec, p.initiator.name());
    ASSERT_TRUE(std::holds_alternative<uint64_t>(begun)) << std::get<std::string>(begun);
    auto sent = spec;
    if (fail) sent.id ^= 1;  // the responder ignores it: both sides time out
    uint64_t before = p.responder.stats().sessions;
    Measurement m =
        p.initiator.latency(p.address(), sent, 0, Clock::now() + (fail ? 300ms : 10s), nullptr);
    EXPECT_EQ(m.error.has_value(), fail);
    waitSessions(p.responder, before + 1);
    ASSERT_TRUE(p.responder.waitOpen(10s));
    ASSERT_FALSE(p.initiator.ensureOpen());
  };
  once(false);
  size_t fds = openFds();
  for (int i = 0; i < 5; ++i) once(true);
  once(false);
  // Both sides' failed sessions canceled what they posted and kept their endpoints.
  EXPECT_EQ(p.responder.stats().failed, 5u);
  EXPECT_EQ(p.responder.stats().reopened, 0u);
  EXPECT_EQ(p.initiator.reopened(), 0u);
  EXPECT_EQ(openFds(), fds);
}

TEST(FabricPingPongTest, BandwidthSessionsAbandonedMidTransferCloseCleanly) {
  // The prober gives up within milliseconds, in the middle of rendezvous transfers; the
  // responder's session then fails at its own deadline and its endpoint is reopened. Closing an
  // rxm endpoint with receives still in progress crashed inside libfabric (within 9 sessions);
  // failed sessions now cancel and drain what they posted first.
  EndpointOptions o = tcpOptions();
  Pair p(o);
  ASSERT_TRUE(p.ready());
  for (int i = 0; i < 12; ++i) {
    ASSERT_FALSE(p.initiator.ensureOpen());
    ASSERT_TRUE(p.responder.waitOpen(10s));
    SessionSpec s{randomSessionId(),
                  SessionKind::kBandwidth,
                  256 << 10,
                  200,
                  8,
                  static_cast<uint32_t>(i % 3 == 0 ? 5 : 300)};
    uint64_t before = p.responder.stats().sessions;
    auto begun = p.responder.begin(s, p.initiator.name());
    ASSERT_TRUE(std::holds_alternative<uint64_t>(begun)) << std::get<std::string>(begun);
    Measurement m =
        p.initiator.bandwidth(p.address(), s, 1, Clock::now() + (i % 2 ? 3ms : 30ms), nullptr);
    EXPECT_TRUE(m.error);
    waitSessions(p.responder, before + 1);
  }
  EXPECT_GE(p.responder.stats().failed, 1u);
}

TEST(FabricPingPongTest, AProberSendStillInFlightRetiresTheEndpointUnclosed) {
  // The crash this guards against (observe e2e under ASan): a prober's latency session with a
  // 32 MiB ping timed out, and closing its endpoint with the send in flight crashed
  // libfabric's tcp;ofi_rxm in fi_close (so does removing the peer from its AV). Here the
  // prober gives up 2 ms into 4 MiB pings (rxm's rendezvous over tcp: a send cannot be
  // canceled). The endpoint is retired, not closed, and a new one measures; the old one's
  // connection stays blocked behind the send (sessions on it timed out, tried first).
  EndpointOptions o = tcpOptions();
  o.max_message = 4 << 20;
  Pair p(o, 4 << 20);
  ASSERT_TRUE(p.ready());
  const std::string first = p.initiator.name();
  bool retired = false;
  for (int i = 0; i < 8 && !retired; ++i) {
    ASSERT_FALSE(p.initiator.ensureOpen());
    auto spec = latencySpec(20, 4 << 20);
    spec.timeout_ms = 200;
    uint64_t before = p.responder.stats().sessions;
    auto begun = p.responder.begin(spec, p.initiator.name());
    ASSERT_TRUE(std::holds_alternative<uint64_t>(begun)) << std::get<std::string>(begun);
    Measurement m = p.initiator.latency(p.address(), spec, 0, Clock::now() + 2ms, nullptr);
    ASSERT_TRUE(m.error);
    retired = !m.quiesced;
    EXPECT_EQ(p.initiator.retired(), retired ? 1u : 0u);
    waitSessions(p.responder, before + 1);
    ASSERT_TRUE(p.responder.waitOpen(10s));
  }
  ASSERT_TRUE(retired) << "no session left a send in flight";
  ASSERT_FALSE(p.initiator.ensureOpen());
  EXPECT_NE(p.initiator.name(), first);  // a new endpoint
  EXPECT_EQ(p.initiator.reopened(), 1u);
  EXPECT_EQ(p.initiator.retired(), 1u);  // the old one waits on its send, open
  auto spec = latencySpec(3, 64);
  auto begun = p.responder.begin(spec, p.initiator.name());
  ASSERT_TRUE(std::holds_alternative<uint64_t>(begun)) << std::get<std::string>(begun);
  Measurement m = p.initiator.latency(p.address(), spec, 0, Clock::now() + 5s, nullptr);
  EXPECT_FALSE(m.error) << m.error->message();
}

TEST(FabricPingPongTest, PeerLostMidSessionEndsAtTheDeadline) {
  Pair p(tcpOptions());
  ASSERT_TRUE(p.ready());
  auto spec = latencySpec(100000);
  ASSERT_TRUE(std::holds_alternative<uint64_t>(p.responder.begin(spec, p.initiator.name())));
  fi_addr_t peer = p.address();
  // The responder goes away while the prober is mid-session (100000 ping-pongs take seconds;
  // whenever stop() lands, the prober's deadline is what ends it).
  std::thread killer([&] {
    std::this_thread::sleep_for(100ms);
    p.responder.stop();
  });
  auto t0 = Clock::now();
  Measurement m = p.initiator.latency(peer, spec, 0, Clock::now() + 1s, nullptr);
  killer.join();
  ASSERT_TRUE(m.error);
  EXPECT_LT(Clock::now() - t0, 3s);  // ended at its deadline, not the session's 100000 rounds
  EXPECT_LT(m.completed, 100000u);
}

TEST(FabricPingPongTest, LoadingLibfabricLeavesTheProcessCrashHandlingAlone) {
  // libfabric's psm providers install backtrace handlers that exit(1) on SIGSEGV/SIGABRT: a
  // crashing daemon must still die of its signal (and dump core where that is configured).
  const int kSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE};
  struct sigaction before[5], after[5];
  for (int i = 0; i < 5; ++i) ::sigaction(kSignals[i], nullptr, &before[i]);
  ASSERT_TRUE(libfabric());
  ProviderFacts f;
  std::optional<FabricError> err;
  auto ep = Endpoint::open(tcpOptions(), f, err);  // fi_getinfo initialises every provider
  ASSERT_TRUE(ep);
  for (int i = 0; i < 5; ++i) {
    ::sigaction(kSignals[i], nullptr, &after[i]);
    EXPECT_EQ(reinterpret_cast<void*>(after[i].sa_handler),
              reinterpret_cast<void*>(before[i].sa_handler))
        << "signal " << kSignals[i];
  }
}

TEST(FabricPingPongTest, AbsentProviderSaysWhy) {
  EndpointOptions o = tcpOptions();
  o.provider = "efa";  // no EFA device here
  ProviderFacts f;
  std::optional<FabricError> err;
  auto ep = Endpoint::open(o, f, err);
  ASSERT_FALSE(ep);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->op, "fi_getinfo");
  EXPECT_EQ(err->code, FI_ENODATA);
  EXPECT_EQ(err->text, "No data available");  // fi_strerror(FI_ENODATA)
  EXPECT_FALSE(f.api_version.empty());
}

TEST(FabricPingPongTest, AutoPicksTheBestPresent) {
  EndpointOptions o = tcpOptions();
  o.provider = "auto";
  ProviderFacts f;
  std::optional<FabricError> err;
  auto ep = Endpoint::open(o, f, err);
  ASSERT_TRUE(ep) << err->message();
  // Without efa or verbs devices, tcp;ofi_rxm leads the ranking, bound to loopback.
  EXPECT_EQ(f.provider, "tcp;ofi_rxm");
  EXPECT_EQ(f.domain, "lo");
}

}  // namespace
}  // namespace fabricwatch::probes::fabric
