#include "probes/mesh/channel_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "probes/mesh/messages.h"
#include "probes/mesh/net_util.h"

namespace fabricwatch::probes {

using Clock = std::chrono::steady_clock;

const char* channelFailureName(ChannelFailure f) {
  switch (f) {
    case ChannelFailure::kNone:
      return "none";
    case ChannelFailure::kTimeout:
      return "timeout";
    case ChannelFailure::kRefused:
      return "refused";
    case ChannelFailure::kClosed:
      return "closed";
    case ChannelFailure::kAuth:
      return "auth";
    case ChannelFailure::kError:
      return "error";
  }
  return "error";
}

namespace {

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

CallResult failed(ChannelFailure f, std::string error) {
  CallResult r;
  r.failure = f;
  r.error = std::move(error);
  return r;
}

}  // namespace

void ChannelClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  in_.clear();
}

CallResult ChannelClient::connect(const std::string& address, std::chrono::milliseconds timeout) {
  close();
  auto hp = splitHostPort(address);
  sockaddr_storage ss;
  socklen_t len = 0;
  if (!hp || !toSockaddr(hp->host, hp->port, ss, len))
    return failed(ChannelFailure::kError, "not a numeric IP:PORT address: " + address);
  auto t0 = Clock::now();
  auto fd = connectWithTimeout(ss, len, timeout);
  if (!fd) {
    const std::string& e = fd.error().message;
    return failed(e.rfind("timeout", 0) == 0   ? ChannelFailure::kTimeout
                  : e.rfind("refused", 0) == 0 ? ChannelFailure::kRefused
                                               : ChannelFailure::kError,
                  e);
  }
  fd_ = *fd;
  CallResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

CallResult ChannelClient::call(FrameType request, std::string_view payload, FrameType reply,
                               std::chrono::milliseconds timeout) {
  if (fd_ < 0) return failed(ChannelFailure::kClosed, "not connected");
  Frame req;
  req.type = request;
  req.timestamp_ms = nowUnixMs();
  req.nonce = randomNonce();
  req.payload = std::string(payload);
  std::string wire = encodeFrame(req, secret_);
  auto start = Clock::now();
  auto deadline = start + timeout;
  CallResult r;
  auto fail = [&](ChannelFailure f, std::string error) {
    close();
    r.failure = f;
    r.error = std::move(error);
    return r;
  };
  if (!sendAll(fd_, wire, deadline)) return fail(ChannelFailure::kClosed, "send failed");
  while (true) {
    DecodeResult d = decodeFrame(in_, secret_);
    if (d.status == DecodeStatus::kOk) {
      in_.erase(0, d.consumed);
      std::string_view body = d.frame.payload;
      if (body.size() < 8 || getU64(body.data()) != req.nonce)
        return fail(ChannelFailure::kAuth, "reply does not answer our request");
      body.remove_prefix(8);
      r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (d.frame.type == FrameType::kDeclined) {
        r.declined = decodeDeclined(body).value_or("(unreadable reason)");
        return r;
      }
      if (d.frame.type != reply)
        return fail(ChannelFailure::kAuth, "reply does not answer our request");
      r.payload = std::string(body);
      return r;
    }
    if (d.status != DecodeStatus::kNeedMore)
      return fail(ChannelFailure::kAuth, std::string("bad reply: ") + decodeStatusName(d.status));
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, msUntil(deadline)) == 0)
      return fail(ChannelFailure::kTimeout, "no reply in time");
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0)
      in_.append(buf, static_cast<size_t>(n));
    else if (n == 0 || (errno != EAGAIN && errno != EINTR))
      return fail(ChannelFailure::kClosed, "connection closed by peer");
  }
}

}  // namespace fabricwatch::probes
