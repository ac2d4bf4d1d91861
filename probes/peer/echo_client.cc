#include "probes/peer/echo_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "probes/peer/frame.h"
#include "probes/peer/messages.h"
#include "probes/peer/net_util.h"

namespace fabricwatch::probes::peer {

using Clock = std::chrono::steady_clock;

const char* echoFailureName(EchoFailure f) {
  switch (f) {
    case EchoFailure::kNone:
      return "none";
    case EchoFailure::kTimeout:
      return "timeout";
    case EchoFailure::kRefused:
      return "refused";
    case EchoFailure::kClosed:
      return "closed";
    case EchoFailure::kAuth:
      return "auth";
    case EchoFailure::kError:
      return "error";
  }
  return "error";
}

namespace {

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool sendAll(int fd, const std::string& data, Clock::time_point deadline) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, msUntil(deadline)) <= 0) return false;
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace

EchoResult runEcho(const std::string& address, const EchoOptions& opts) {
  EchoResult res;
  auto hp = splitHostPort(address);
  sockaddr_storage ss;
  socklen_t len = 0;
  if (!hp || !toSockaddr(hp->host, hp->port, ss, len)) {
    res.failure = EchoFailure::kError;
    res.error = "not a numeric IP:PORT address: " + address;
    return res;
  }
  auto t0 = Clock::now();
  auto fd = connectWithTimeout(ss, len, opts.connect_timeout);
  if (!fd) {
    const std::string& e = fd.error().message;
    res.failure = e.rfind("timeout", 0) == 0   ? EchoFailure::kTimeout
                  : e.rfind("refused", 0) == 0 ? EchoFailure::kRefused
                                               : EchoFailure::kError;
    res.error = e;
    return res;
  }
  res.connected = true;
  res.connect_seconds = secondsSince(t0);
  int sock = *fd;
  std::string in;
  for (int i = 0; i < opts.samples; ++i) {
    Frame req;
    req.type = FrameType::kEchoRequest;
    req.timestamp_ms = nowUnixMs();
    req.nonce = randomNonce();
    req.payload = encodeEchoRequest({static_cast<uint32_t>(i), opts.node_name});
    std::string wire = encodeFrame(req, opts.secret);
    auto start = Clock::now();
    auto deadline = start + opts.echo_timeout;
    ++res.sent;
    if (!sendAll(sock, wire, deadline)) {
      res.failure = EchoFailure::kClosed;
      res.error = "send failed";
      break;
    }
    bool done = false;
    while (!done && res.failure == EchoFailure::kNone) {
      DecodeResult d = decodeFrame(in, opts.secret);
      if (d.status == DecodeStatus::kOk) {
        in.erase(0, d.consumed);
        auto reply = decodeEchoReply(d.frame.payload);
        if (d.frame.type != FrameType::kEchoReply || !reply || reply->request_nonce != req.nonce ||
            reply->seq != static_cast<uint32_t>(i)) {
          res.failure = EchoFailure::kAuth;
          res.error = "reply does not answer our request";
          break;
        }
        res.rtt_seconds.push_back(secondsSince(start));
        res.peer_node = reply->node;
        res.peer_group = reply->group;
        done = true;
        break;
      }
      if (d.status != DecodeStatus::kNeedMore) {
        res.failure = EchoFailure::kAuth;
        res.error = std::string("bad reply: ") + decodeStatusName(d.status);
        break;
      }
      pollfd p{sock, POLLIN, 0};
      int n = ::poll(&p, 1, msUntil(deadline));
      if (n == 0) {
        res.failure = EchoFailure::kTimeout;
        res.error = "no reply within the echo timeout";
        break;
      }
      char buf[4096];
      ssize_t r = ::recv(sock, buf, sizeof buf, 0);
      if (r > 0) {
        in.append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        res.failure = EchoFailure::kClosed;
        res.error = "connection closed by peer";
      }
    }
    if (!done) break;
  }
  ::close(sock);
  return res;
}

}  // namespace fabricwatch::probes::peer
