// The daemon in process: SIGHUP's reload path while HTTP handlers serve. Runs in the TSan suite
// (scripts/dev test --sanitize=thread), where a handler reading state that reload() assigns
// without synchronisation is a reported race, not a rare wrong answer.
#include "exporter/daemon.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "exporter/config_flags.h"
#include "probes/mesh/channel_server.h"
#include "tests/support/eventually.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::exporter {
namespace {

using testing::eventually;

using namespace std::chrono_literals;

// A configuration on a fixture root whose sources run once per scheduler (each reload builds
// one), with this node name: /api/v1/peers answers it while the mesh is off.
std::string configText(const std::string& node_name) {
  return "[web]\nlisten_address = \"127.0.0.1:0\"\n[host]\nrootfs = \"" +
         testing::fixture("no_rdma") + "\"\n[collect]\ninterval = \"1h\"\n[peer]\nnode_name = \"" +
         node_name + "\"\n";
}

// `fabricwatch serve --config.file=FILE`'s flags and configuration; the flags outlive the
// daemon, which keeps a reference to them (for reloads).
struct Serve {
  FlagSet flags{"test"};
  config::Config config;
  explicit Serve(const std::string& file) {
    addConfigFlags(flags, {.web = true, .policy = true});
    EXPECT_FALSE(flags.parse({"--config.file=" + file}));
    config::LoadResult r = loadConfigWithFlags(flags);
    EXPECT_TRUE(r.ok()) << core::formatAll(r.problems);
    config = std::move(r.config);
  }
};

TEST(DaemonReloadTest, HandlersServeWhileReloadsReplaceTheConfiguration) {
  testing::TempDir dir;
  Serve serve(dir.write("fw.toml", configText("node-0")));
  Daemon daemon(serve.flags, serve.config);
  ASSERT_TRUE(daemon.start().ok()) << "cannot start";
  int port = daemon.port();
  ASSERT_GT(port, 0);

  std::atomic<bool> done{false};
  std::atomic<int> answered{0};
  auto client = [&](const char* path) {
    while (!done.load()) {
      auto res = testing::httpGet("127.0.0.1", port, path);
      if (res && res->status == 200) ++answered;
    }
  };
  std::thread peers(client, "/api/v1/peers");
  std::thread metrics(client, "/metrics");
  constexpr int kReloads = 12;
  for (int i = 1; i <= kReloads; ++i) {
    dir.write("fw.toml", configText("node-" + std::to_string(i)));
    EXPECT_TRUE(daemon.reload());
    // Let the handlers run between reloads, so each reload overlaps requests.
    int before = answered.load();
    EXPECT_TRUE(eventually([&] { return answered.load() >= before + 2; }));
  }
  done = true;
  peers.join();
  metrics.join();
  // The reloaded configuration is the one answered.
  std::string want = "\"node-" + std::to_string(kReloads) + "\"";
  EXPECT_TRUE(eventually([&] {
    auto res = testing::httpGet("127.0.0.1", port, "/api/v1/peers");
    return res && res->body.find(want) != std::string::npos;
  })) << want;
  daemon.stop();
}

// The mesh under the same storm (TSan, issue 13): the daemon's prober probes a peer (a channel
// server in this process) every 100 ms with the tcp and dns kinds, the peer source copies the
// results into snapshots, and every reload stops the mesh (prober, channel server, kinds) and
// starts a new one, while clients fetch /api/v1/peers, /api/v1/facts, /api/v1/violations and
// /metrics without pause.
TEST(DaemonReloadTest, TheMeshAndTheApiServeWhileReloadsRestartTheMesh) {
  testing::TempDir dir;
  const std::string kSecret = "tsan-mesh-secret-0123456789abcdef";
  std::string secret = dir.write("secret", kSecret + "\n");
  probes::ChannelServerOptions po;
  po.listen_address = "127.0.0.1:0";
  po.secret = kSecret;
  po.node_name = "localhost";  // the dns kind resolves the peer's name: keep it local
  probes::ChannelServer peer(po);
  ASSERT_TRUE(peer.start().ok());
  std::string peer_addr = "127.0.0.1:" + std::to_string(peer.port());
  auto mesh = [&](int i) {
    return configText("node-" + std::to_string(i)) + "listen_address = \"127.0.0.1:0\"\n" +
           "secret_file = \"" + secret + "\"\n[probe]\ninterval = \"100ms\"\npeers = [\"" +
           peer_addr + "\"]\n";
  };
  Serve serve(dir.write("fw.toml", mesh(0)));
  Daemon daemon(serve.flags, serve.config);
  ASSERT_TRUE(daemon.start().ok());
  int port = daemon.port();
  std::atomic<bool> done{false};
  std::atomic<int> answered{0};
  auto client = [&](const char* path) {
    while (!done.load()) {
      auto res = testing::httpGet("127.0.0.1", port, path);
      if (res && res->status == 200) ++answered;
    }
  };
  std::vector<std::thread> clients;
  for (const char* path : {"/api/v1/peers", "/api/v1/facts", "/api/v1/violations", "/metrics"})
    clients.emplace_back(client, path);
  auto probed = [&](int i) {
    auto res = testing::httpGet("127.0.0.1", port, "/api/v1/peers");
    return res && res->body.find("\"node-" + std::to_string(i) + "\"") != std::string::npos &&
           res->body.find("\"reachable\":true") != std::string::npos;
  };
  EXPECT_TRUE(eventually([&] { return probed(0); }));
  constexpr int kReloads = 6;
  for (int i = 1; i <= kReloads; ++i) {
    dir.write("fw.toml", mesh(i));
    EXPECT_TRUE(daemon.reload());
    EXPECT_TRUE(eventually([&] { return probed(i); })) << "the mesh of reload " << i;
  }
  done = true;
  for (auto& t : clients) t.join();
  EXPECT_GT(answered.load(), 4 * kReloads);
  EXPECT_GT(peer.stats().frames, 0u) << "the daemon's probes reached the peer";
  daemon.stop();
  peer.stop();
}

// Issue 13: a SIGHUP whose configuration named a missing peer secret kept the old mesh but
// reported fabricwatch_config_last_reload_successful 1. The reload fails as a whole: 0, the
// error logged, and the running mesh and configuration stay.
TEST(DaemonReloadTest, AMissingPeerSecretFailsTheReloadAndKeepsWhatRuns) {
  testing::TempDir dir;
  std::string secret = dir.write("secret", "reload-secret-0123456789abcdef\n");
  auto mesh = [&](const std::string& node, const std::string& secret_file) {
    return configText(node) + "listen_address = \"127.0.0.1:0\"\nsecret_file = \"" + secret_file +
           "\"\n[probe]\ninterval = \"1h\"\npeers = [\"127.0.0.1:1\"]\n";
  };
  Serve serve(dir.write("fw.toml", mesh("node-a", secret)));
  Daemon daemon(serve.flags, serve.config);
  ASSERT_TRUE(daemon.start().ok());
  int port = daemon.port();
  dir.write("fw.toml", mesh("node-b", dir.path() + "/no-such-secret"));
  EXPECT_FALSE(daemon.reload());
  auto m = testing::httpGet("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("\nfabricwatch_config_last_reload_successful 0\n"), std::string::npos);
  // /api/v1/peers answers from the snapshot: 503 until the peer source has run once.
  auto peers = testing::httpGet("127.0.0.1", port, "/api/v1/peers");
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       peers && peers->status == 503 && std::chrono::steady_clock::now() < end;
       peers = testing::httpGet("127.0.0.1", port, "/api/v1/peers"))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(peers);
  EXPECT_NE(peers->body.find("\"enabled\":true"), std::string::npos) << peers->body;
  EXPECT_NE(peers->body.find("\"node-a\""), std::string::npos) << peers->body;
  // A good file afterwards reloads again.
  dir.write("fw.toml", mesh("node-c", secret));
  EXPECT_TRUE(daemon.reload());
  m = testing::httpGet("127.0.0.1", port, "/metrics");
  EXPECT_NE(m->body.find("\nfabricwatch_config_last_reload_successful 1\n"), std::string::npos);
  daemon.stop();
}

// The start order (docs/architecture.md): the packs load before the mesh starts and the
// listener binds, so an invalid pack is reported as such, with its position, whatever else
// would fail later (here the HTTP port is taken), and nothing was opened for it.
TEST(DaemonStartTest, InvalidPacksAreReportedBeforeTheListenerBinds) {
  int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(taken, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(taken, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int port = ntohs(addr.sin_port);

  testing::TempDir dir;
  std::string bad = dir.write("bad.yaml", "apiVersion: fabricwatch.io/v1\nkind: PolicyPack\n");
  std::string file =
      dir.write("fw.toml", "[web]\nlisten_address = \"127.0.0.1:" + std::to_string(port) +
                               "\"\n[host]\nrootfs = \"" + testing::fixture("no_rdma") +
                               "\"\n[policy]\npaths = [\"" + bad + "\"]\n");
  Serve serve(file);
  Daemon daemon(serve.flags, serve.config);
  core::Status st = daemon.start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("invalid policy packs"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(bad + ":1:1"), std::string::npos) << st.message();
  ::close(taken);
}

}  // namespace
}  // namespace fabricwatch::exporter
