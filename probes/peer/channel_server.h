#pragma once
// The peer channel listener: one TCP port, one thread, non-blocking sockets under poll(), so
// no client can stall it. Each connection carries authenticated frames (frame.h); the server
// answers echo requests and will route rendezvous frames for the fabric and NCCL probes.
//
// Abuse is dropped and counted by reason: garbage (bad magic), unknown versions, oversized
// length prefixes, frames failing the HMAC, replays, frames that do not complete in time
// (slowloris), clients that do not read their replies, and connections beyond the global or
// per-address limit.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "core/result.h"
#include "probes/peer/frame.h"

namespace fabricwatch::probes::peer {

struct ChannelServerOptions {
  std::string listen_address = ":19737";  // HOST:PORT or :PORT (IPv4 wildcard)
  std::string secret;
  std::string node_name;  // returned in echo replies
  std::string group;      // topology group, returned in echo replies
  int max_connections = 64;
  int max_connections_per_address = 16;
  // A frame whose first byte has arrived must be complete within this (slowloris).
  std::chrono::milliseconds frame_timeout{2000};
  // A connection with no traffic for this long is closed.
  std::chrono::milliseconds idle_timeout{10000};
  uint64_t max_clock_skew_ms = 30000;
  size_t max_pending_output = 256 * 1024;
};

enum class DropReason {
  kLimit,      // over max_connections or max_connections_per_address
  kMalformed,  // bad magic or an undecodable payload
  kVersion,
  kOversized,
  kAuth,
  kReplay,
  kTimeout,     // frame not completed in time
  kSlowReader,  // replies piling up unread
  kCount
};
const char* dropReasonName(DropReason r);

struct ChannelStats {
  uint64_t accepted = 0;
  uint64_t frames = 0;  // authenticated frames handled
  uint64_t open = 0;
  std::array<uint64_t, static_cast<size_t>(DropReason::kCount)> dropped{};
};

class ChannelServer {
 public:
  explicit ChannelServer(ChannelServerOptions opts);
  ~ChannelServer();
  ChannelServer(const ChannelServer&) = delete;
  ChannelServer& operator=(const ChannelServer&) = delete;

  // Binds and starts the thread; an error means nothing runs.
  core::Status start();
  void stop();
  int port() const { return port_; }
  ChannelStats stats() const;

 private:
  struct Conn;
  void loop();
  void onReadable(Conn& c);
  bool handleFrame(Conn& c, const Frame& f);
  void drop(Conn& c, DropReason r);

  ChannelServerOptions opts_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  ReplayGuard replay_;
  std::atomic<uint64_t> accepted_{0}, frames_{0}, open_{0};
  std::array<std::atomic<uint64_t>, static_cast<size_t>(DropReason::kCount)> dropped_{};
};

}  // namespace fabricwatch::probes::peer
