#include "probes/mesh/channel_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "core/log.h"
#include "probes/mesh/messages.h"
#include "probes/mesh/net_util.h"

namespace fabricwatch::probes {

using Clock = std::chrono::steady_clock;

const char* dropReasonName(DropReason r) {
  switch (r) {
    case DropReason::kLimit:
      return "limit";
    case DropReason::kMalformed:
      return "malformed";
    case DropReason::kVersion:
      return "version";
    case DropReason::kOversized:
      return "oversized";
    case DropReason::kAuth:
      return "auth";
    case DropReason::kReplay:
      return "replay";
    case DropReason::kTimeout:
      return "timeout";
    case DropReason::kSlowReader:
      return "slow_reader";
    case DropReason::kUnauthenticated:
      return "unauthenticated";
    case DropReason::kEvicted:
      return "evicted";
    case DropReason::kIdle:
      return "idle";
    case DropReason::kReplayBudget:
      return "replay_budget";
    case DropReason::kCount:
      break;
  }
  return "unknown";
}

struct ChannelServer::Conn {
  int fd = -1;
  std::string address;
  std::string in;
  std::string out;
  Clock::time_point accepted_at;
  Clock::time_point last_activity;
  std::optional<Clock::time_point> frame_deadline;  // set while a frame is partially in
  bool authenticated = false;                       // a frame passed the HMAC and the replay guard
  bool closed = false;
};

ChannelServer::ChannelServer(ChannelServerOptions opts)
    : opts_(std::move(opts)), replay_(opts_.max_clock_skew_ms, opts_.replay_capacity) {
  if (opts_.instance == 0) opts_.instance = randomNonce();
}

ChannelServer::~ChannelServer() { stop(); }

core::Status ChannelServer::start() {
  handlers_.clear();
  handlers_[FrameType::kEchoRequest] = {
      FrameType::kEchoRequest, FrameType::kEchoReply, 4 + 2 + 253,
      [this](std::string_view p, const Sender&) { return answerEcho(p); }};
  for (const auto& h : opts_.handlers) {
    if (!h.handle || !handlers_.emplace(h.request, h).second)
      return core::Error{"peer channel: request type " +
                         std::to_string(static_cast<int>(h.request)) +
                         " has no handler or more than one"};
  }
  auto hp = splitHostPort(opts_.listen_address);
  sockaddr_storage ss;
  socklen_t len = 0;
  if (!hp || !toSockaddr(hp->host, hp->port, ss, len))
    return core::Error{"peer listen address \"" + opts_.listen_address +
                       "\" must be IP:PORT, [IPv6]:PORT or :PORT"};
  int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return core::Error{std::string("peer listener: socket: ") + std::strerror(errno)};
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, 128) != 0) {
    std::string err = std::strerror(errno);
    ::close(fd);
    return core::Error{"peer listener: cannot listen on " + opts_.listen_address + ": " + err};
  }
  sockaddr_storage bound;
  socklen_t blen = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &blen);
  port_ = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                           : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  if (::pipe2(wake_, O_NONBLOCK | O_CLOEXEC) != 0) {
    ::close(fd);
    return core::Error{"peer listener: pipe failed"};
  }
  listen_fd_ = fd;
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
  return core::Status::Ok();
}

void ChannelServer::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  char b = 1;
  [[maybe_unused]] auto n = ::write(wake_[1], &b, 1);
  thread_.join();
  ::close(listen_fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
  listen_fd_ = wake_[0] = wake_[1] = -1;
}

ChannelStats ChannelServer::stats() const {
  ChannelStats s;
  s.accepted = accepted_.load();
  s.frames = frames_.load();
  s.open = open_.load();
  for (size_t i = 0; i < s.dropped.size(); ++i) s.dropped[i] = dropped_[i].load();
  return s;
}

void ChannelServer::drop(Conn& c, DropReason r) {
  if (c.closed) return;
  dropped_[static_cast<size_t>(r)]++;
  c.closed = true;
  core::log::debug("peer", "dropped connection",
                   {{"from", c.address}, {"reason", dropReasonName(r)}});
}

Answer ChannelServer::answerEcho(std::string_view payload) const {
  auto req = decodeEchoRequest(payload);
  if (!req) return Answer::malformed();
  return Answer::reply(encodeEchoReply({req->seq, opts_.node_name, opts_.group, opts_.instance}));
}

bool ChannelServer::handleFrame(Conn& c, const Frame& f) {
  switch (replay_.check(f.timestamp_ms, f.nonce, nowUnixMs(), c.address)) {
    case ReplayVerdict::kFresh:
      break;
    case ReplayVerdict::kStale:
    case ReplayVerdict::kReplay:
      drop(c, DropReason::kReplay);
      return false;
    case ReplayVerdict::kSenderFull:
    case ReplayVerdict::kFull:
      drop(c, DropReason::kReplayBudget);
      return false;
  }
  c.authenticated = true;
  Answer answer;
  FrameType reply_type = FrameType::kDeclined;
  if (auto it = handlers_.find(f.type); it == handlers_.end()) {
    answer = Answer::decline("request type " + std::to_string(static_cast<int>(f.type)) +
                             " is not served here");
  } else if (f.payload.size() > it->second.max_request_bytes) {
    drop(c, DropReason::kOversized);
    return false;
  } else {
    answer = it->second.handle(f.payload, Sender{c.address});
    reply_type = it->second.reply;
  }
  if (answer.kind == Answer::Kind::kMalformed) {
    drop(c, DropReason::kMalformed);
    return false;
  }
  frames_++;
  Frame reply;
  reply.type = reply_type;
  reply.timestamp_ms = nowUnixMs();
  reply.nonce = randomNonce();
  putU64(reply.payload, f.nonce);  // binds the reply to its request
  if (answer.kind == Answer::Kind::kDecline) {
    reply.type = FrameType::kDeclined;
    reply.payload += encodeDeclined(answer.payload);
  } else if (answer.payload.size() > kMaxPayload - 8) {
    reply.type = FrameType::kDeclined;
    reply.payload += encodeDeclined("reply too large");
  } else {
    reply.payload += answer.payload;
  }
  c.out += encodeFrame(reply, opts_.secret);
  return true;
}

void ChannelServer::onReadable(Conn& c) {
  char buf[16384];
  while (!c.closed) {
    ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n == 0) {
      c.closed = true;  // orderly close by the client
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) c.closed = true;
      break;
    }
    c.in.append(buf, static_cast<size_t>(n));
    c.last_activity = Clock::now();
    while (!c.in.empty() && !c.closed) {
      DecodeResult r = decodeFrame(c.in, opts_.secret);
      switch (r.status) {
        case DecodeStatus::kOk:
          c.in.erase(0, r.consumed);
          c.frame_deadline.reset();
          handleFrame(c, r.frame);
          continue;
        case DecodeStatus::kNeedMore:
          if (!c.frame_deadline) c.frame_deadline = Clock::now() + opts_.frame_timeout;
          break;
        case DecodeStatus::kBadMagic:
          drop(c, DropReason::kMalformed);
          break;
        case DecodeStatus::kBadVersion:
          drop(c, DropReason::kVersion);
          break;
        case DecodeStatus::kOversized:
          drop(c, DropReason::kOversized);
          break;
        case DecodeStatus::kBadMac:
          drop(c, DropReason::kAuth);
          break;
      }
      break;
    }
    if (c.out.size() > opts_.max_pending_output) drop(c, DropReason::kSlowReader);
  }
}

void ChannelServer::accept(std::vector<std::unique_ptr<Conn>>& conns,
                           std::map<std::string, int>& per_address) {
  const int max_unauthenticated = std::max(1, opts_.max_connections / 4);
  while (true) {
    sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd =
        ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    auto now = Clock::now();
    std::string addr = sockaddrHost(ss);
    int open = 0, unauthenticated = 0;
    std::map<std::string_view, std::pair<int, Conn*>> strangers;  // per address: count, oldest
    Conn* idlest = nullptr;  // authenticated, idle for over frame_timeout
    for (auto& c : conns) {
      if (c->closed) continue;
      ++open;
      if (!c->authenticated) {
        ++unauthenticated;
        auto& [n, oldest] = strangers[c->address];
        ++n;
        if (!oldest || c->accepted_at < oldest->accepted_at) oldest = c.get();
      } else if (now - c->last_activity > opts_.frame_timeout &&
                 (!idlest || c->last_activity < idlest->last_activity)) {
        idlest = c.get();
      }
    }
    auto it = per_address.find(addr);
    bool admit = it == per_address.end() || it->second < opts_.max_connections_per_address;
    if (admit && (open >= opts_.max_connections || unauthenticated >= max_unauthenticated)) {
      // Make room. Among unauthenticated connections, the oldest of the address that holds the
      // most gives way, and only to a newcomer whose address holds fewer: a stranger flooding
      // from a few addresses only ever displaces itself, and a real peer's connection, usually
      // its address's only one, is not displaced before it has sent its first frame. An idle
      // authenticated connection gives way only when the whole table is full.
      Conn* victim = nullptr;
      int most = 0;
      for (const auto& [a, entry] : strangers) {
        if (entry.first > most) {
          most = entry.first;
          victim = entry.second;
        }
      }
      auto mine = strangers.find(addr);
      if (victim && most <= (mine == strangers.end() ? 0 : mine->second.first)) victim = nullptr;
      if (!victim && unauthenticated < max_unauthenticated) victim = idlest;
      if (victim) {
        drop(*victim, DropReason::kEvicted);
        if (--per_address[victim->address] <= 0) per_address.erase(victim->address);
        victim->address.clear();  // its slot is released here, not again at cleanup
      } else {
        admit = false;
      }
    }
    if (!admit) {
      dropped_[static_cast<size_t>(DropReason::kLimit)]++;
      ::close(fd);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->address = addr;
    c->accepted_at = c->last_activity = now;
    per_address[addr]++;
    accepted_++;
    open_++;
    conns.push_back(std::move(c));
  }
}

void ChannelServer::loop() {
  std::vector<std::unique_ptr<Conn>> conns;
  std::map<std::string, int> per_address;
  std::vector<pollfd> fds;
  while (!stopping_) {
    // Close finished connections first, then wait for the next event or deadline.
    for (auto& c : conns) {
      if (!c->closed) {
        // Flush replies; a client that stops reading is dropped once its backlog is too big.
        while (!c->out.empty()) {
          ssize_t n = ::send(c->fd, c->out.data(), c->out.size(), MSG_NOSIGNAL);
          if (n > 0) {
            c->out.erase(0, static_cast<size_t>(n));
            continue;
          }
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
          c->closed = true;
          break;
        }
      }
      if (c->closed) {
        ::close(c->fd);
        if (!c->address.empty() && --per_address[c->address] <= 0) per_address.erase(c->address);
        open_--;
      }
    }
    std::erase_if(conns, [](const auto& c) { return c->closed; });

    auto now = Clock::now();
    auto next = now + std::chrono::seconds(1);
    fds.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    fds.push_back({wake_[0], POLLIN, 0});
    for (auto& c : conns) {
      short ev = POLLIN;
      if (!c->out.empty()) ev |= POLLOUT;
      fds.push_back({c->fd, ev, 0});
      auto until = c->last_activity + opts_.idle_timeout;
      if (c->frame_deadline) until = std::min(until, *c->frame_deadline);
      if (!c->authenticated) until = std::min(until, c->accepted_at + opts_.frame_timeout);
      next = std::min(next, until);
    }
    int n = ::poll(fds.data(), fds.size(), msUntil(next));
    if (n < 0 && errno != EINTR) {
      core::log::error("peer", "poll failed", {{"error", std::strerror(errno)}});
      break;
    }
    if (stopping_) break;
    now = Clock::now();
    for (size_t i = 0; i < conns.size(); ++i) {
      Conn& c = *conns[i];
      short re = fds[i + 2].revents;
      if (re & (POLLIN | POLLHUP | POLLERR)) onReadable(c);
      if (c.closed) continue;
      if (!c.authenticated && now >= c.accepted_at + opts_.frame_timeout) {
        // A first frame still coming in is a slow frame; nothing at all, an idle stranger.
        drop(c, c.frame_deadline ? DropReason::kTimeout : DropReason::kUnauthenticated);
      } else if (c.frame_deadline && now >= *c.frame_deadline) {
        drop(c, DropReason::kTimeout);
      } else if (now >= c.last_activity + opts_.idle_timeout) {
        drop(c, DropReason::kIdle);
      }
    }
    if (fds[0].revents & POLLIN) accept(conns, per_address);
  }
  for (auto& c : conns) ::close(c->fd);
  open_ = 0;
}

}  // namespace fabricwatch::probes
