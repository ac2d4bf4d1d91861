#pragma once
// The peer channel listener: one TCP port, one thread, non-blocking sockets under poll(), so
// no client can stall it. Each connection carries authenticated frames (frame.h). The server
// answers echoes itself (the mesh's hello) and routes every other request type to the handler
// a probe kind registered for it; a type nobody serves is declined, with the reason.
//
// Abuse is dropped and counted by reason: garbage (bad magic), unknown versions, oversized
// length prefixes or requests over their handler's bound, frames failing the HMAC, replays,
// undecodable payloads, frames that do not complete in time (slowloris), clients that do not
// read their replies, and connections beyond the global or per-address limit.
//
// Connections without the secret cannot starve the peers that hold it: a connection counts as
// authenticated once one of its frames has passed the HMAC and the replay guard. Until then it
// must deliver that frame within frame_timeout of being accepted, and unauthenticated
// connections may hold only a quarter of the slots. When a new connection finds no room, the
// oldest unauthenticated connection of the address holding the most of them is closed for it
// ("evicted") if the newcomer's address holds fewer; else an authenticated connection idle for
// longer than frame_timeout when the table is full; else the newcomer is refused ("limit").
// So strangers flooding from fewer addresses than there are unauthenticated slots (16 by
// default) only displace each other. Every connection the server closes is counted.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/result.h"
#include "probes/mesh/frame.h"

namespace fabricwatch::probes {

// Who sent a request. Its frame passed the HMAC and the replay guard: the sender holds the
// mesh's secret.
struct Sender {
  std::string address;  // the connection's source IP
};

// A handler's answer: a reply payload; a decline (understood but not served now: busy, off;
// the reason goes back to the caller); or malformed (the payload does not decode: the
// connection is dropped and counted, as any other bad frame).
struct Answer {
  enum class Kind { kReply, kDecline, kMalformed };
  Kind kind = Kind::kMalformed;
  std::string payload;  // the reply, or the reason of a decline

  static Answer reply(std::string payload) { return {Kind::kReply, std::move(payload)}; }
  static Answer decline(std::string reason) { return {Kind::kDecline, std::move(reason)}; }
  static Answer malformed() { return {}; }
};

// One request type served on the channel. Handlers run on the channel's only thread, so they
// must answer at once: work that takes time (a responder on a fabric endpoint, an NCCL child)
// runs on a thread the kind owns, bounded in time and sessions, and the handler only starts it
// (or declines when one is running).
struct RequestHandler {
  FrameType request = FrameType::kPrivateFirst;
  FrameType reply = FrameType::kPrivateFirst;
  size_t max_request_bytes = 1024;  // longer requests are dropped (oversized), never handled
  std::function<Answer(std::string_view payload, const Sender& from)> handle;
};

struct ChannelServerOptions {
  std::string listen_address = ":19737";  // HOST:PORT or :PORT (IPv4 wildcard)
  std::string secret;
  std::string node_name;  // returned in echo replies
  std::string group;      // topology group, returned in echo replies
  uint64_t instance = 0;  // returned in echo replies; 0: drawn at random at construction
  std::vector<RequestHandler> handlers;  // the probe kinds' request types
  int max_connections = 64;
  int max_connections_per_address = 16;
  // A frame whose first byte has arrived must be complete within this (slowloris), and a new
  // connection must deliver its first authenticated frame within it.
  std::chrono::milliseconds frame_timeout{2000};
  // A connection with no traffic for this long is closed.
  std::chrono::milliseconds idle_timeout{10000};
  uint64_t max_clock_skew_ms = 30000;
  size_t max_pending_output = 256 * 1024;
  // Nonces the replay guard remembers; one source address may hold a sixteenth (frame.h).
  size_t replay_capacity = 1 << 16;
};

enum class DropReason {
  kLimit,      // over max_connections or max_connections_per_address
  kMalformed,  // bad magic or an undecodable payload
  kVersion,
  kOversized,
  kAuth,
  kReplay,
  kTimeout,          // frame not completed in time
  kSlowReader,       // replies piling up unread
  kUnauthenticated,  // no authenticated frame within frame_timeout of connecting
  kEvicted,          // closed to make room for a new connection
  kIdle,             // no traffic for idle_timeout (not abuse; counted all the same)
  kReplayBudget,     // the sender's share of the replay guard is used up (frame.h)
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

  // Binds and starts the thread; an error means nothing runs (also: a request type handled
  // twice).
  core::Status start();
  void stop();
  int port() const { return port_; }
  uint64_t instance() const { return opts_.instance; }
  ChannelStats stats() const;

 private:
  struct Conn;
  void loop();
  void accept(std::vector<std::unique_ptr<Conn>>& conns, std::map<std::string, int>& per_address);
  void onReadable(Conn& c);
  bool handleFrame(Conn& c, const Frame& f);
  Answer answerEcho(std::string_view payload) const;
  void drop(Conn& c, DropReason r);

  ChannelServerOptions opts_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  ReplayGuard replay_;
  std::map<FrameType, RequestHandler> handlers_;  // by request type; read-only once started
  std::atomic<uint64_t> accepted_{0}, frames_{0}, open_{0};
  std::array<std::atomic<uint64_t>, static_cast<size_t>(DropReason::kCount)> dropped_{};
};

}  // namespace fabricwatch::probes
