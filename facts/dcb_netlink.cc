#include "facts/dcb_netlink.h"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace fabricwatch::facts {
namespace {

constexpr size_t kNlAttrHeader = NLA_HDRLEN;

// The attributes in [p, p+n): calls f(type, payload, payload size) for each well-formed one and
// stops at the first that overruns.
template <typename F>
void eachAttribute(const char* p, size_t n, F&& f) {
  while (n >= kNlAttrHeader) {
    nlattr a;
    std::memcpy(&a, p, sizeof a);
    if (a.nla_len < kNlAttrHeader || a.nla_len > n) return;
    f(a.nla_type & NLA_TYPE_MASK, p + kNlAttrHeader, a.nla_len - kNlAttrHeader);
    size_t step = NLA_ALIGN(a.nla_len);
    if (step >= n) return;
    p += step;
    n -= step;
  }
}

std::string errnoText(int err) {
  switch (err) {
    case EOPNOTSUPP:
      return "the device has no DCB (EOPNOTSUPP)";
    case ENODEV:
      return "no such device (ENODEV)";
    default:
      return std::strerror(err);
  }
}

}  // namespace

std::string dcbIeeeGetRequest(const std::string& ifname, uint32_t seq) {
  const size_t name_len = ifname.size() + 1;  // NLA_STRING with its NUL, as iproute2 sends it
  const size_t attr_len = kNlAttrHeader + name_len;
  const size_t total = NLMSG_LENGTH(sizeof(dcbmsg)) + NLA_ALIGN(attr_len);
  std::string out(total, '\0');
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(total);
  h.nlmsg_type = RTM_GETDCB;
  h.nlmsg_flags = NLM_F_REQUEST;
  h.nlmsg_seq = seq;
  std::memcpy(out.data(), &h, sizeof h);
  dcbmsg d{};
  d.dcb_family = AF_UNSPEC;
  d.cmd = DCB_CMD_IEEE_GET;
  std::memcpy(out.data() + NLMSG_HDRLEN, &d, sizeof d);
  nlattr a{};
  a.nla_len = static_cast<uint16_t>(attr_len);
  a.nla_type = DCB_ATTR_IFNAME;
  char* at = out.data() + NLMSG_LENGTH(sizeof(dcbmsg));
  std::memcpy(at, &a, sizeof a);
  std::memcpy(at + kNlAttrHeader, ifname.c_str(), name_len);
  return out;
}

DcbPfc parseDcbAnswer(std::string_view bytes, uint32_t seq) {
  DcbPfc out;
  out.error = "no answer to the request";
  const char* p = bytes.data();
  size_t n = bytes.size();
  while (n >= sizeof(nlmsghdr)) {
    nlmsghdr h;
    std::memcpy(&h, p, sizeof h);
    if (h.nlmsg_len < sizeof h || h.nlmsg_len > n) {
      out.error = "a truncated netlink message";
      return out;
    }
    const char* body = p + NLMSG_HDRLEN;
    size_t body_len = h.nlmsg_len - NLMSG_HDRLEN;
    if (h.nlmsg_seq == seq && h.nlmsg_type == NLMSG_ERROR) {
      nlmsgerr e;
      if (body_len < sizeof e.error) {
        out.error = "a truncated netlink error";
        return out;
      }
      std::memcpy(&e.error, body, sizeof e.error);
      if (e.error == 0) {  // an acknowledgement: no answer came before it
        out.error = "the kernel acknowledged without an answer";
        return out;
      }
      out.error = errnoText(-e.error);
      return out;
    }
    if (h.nlmsg_seq == seq && h.nlmsg_type == RTM_GETDCB) {
      if (body_len < NLMSG_ALIGN(sizeof(dcbmsg))) {
        out.error = "a truncated DCB answer";
        return out;
      }
      out.supported = true;
      out.error.clear();
      const char* attrs = body + NLMSG_ALIGN(sizeof(dcbmsg));
      eachAttribute(attrs, body_len - NLMSG_ALIGN(sizeof(dcbmsg)),
                    [&](uint16_t type, const char* v, size_t len) {
                      if (type != DCB_ATTR_IEEE) return;
                      eachAttribute(v, len, [&](uint16_t t, const char* pv, size_t plen) {
                        if (t != DCB_ATTR_IEEE_PFC || plen < sizeof(ieee_pfc)) return;
                        ieee_pfc pfc;
                        std::memcpy(&pfc, pv, sizeof pfc);
                        out.has_pfc = true;
                        out.pfc_cap = pfc.pfc_cap;
                        out.pfc_en = pfc.pfc_en;
                        for (int i = 0; i < 8; ++i) {
                          out.requests[i] = pfc.requests[i];
                          out.indications[i] = pfc.indications[i];
                        }
                      });
                    });
      return out;
    }
    size_t step = NLMSG_ALIGN(h.nlmsg_len);
    if (step >= n) break;
    p += step;
    n -= step;
  }
  return out;
}

DcbQuery::DcbQuery(std::chrono::milliseconds timeout) : timeout_(timeout) {
  fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd_ < 0) {
    open_error_ = std::string("netlink socket: ") + std::strerror(errno);
    return;
  }
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    open_error_ = std::string("netlink bind: ") + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
  }
}

DcbQuery::~DcbQuery() {
  if (fd_ >= 0) ::close(fd_);
}

DcbPfc DcbQuery::pfc(const std::string& ifname) {
  DcbPfc out;
  if (fd_ < 0) {
    out.error = open_error_;
    return out;
  }
  if (ifname.empty() || ifname.size() >= 16) {  // IFNAMSIZ
    out.error = "not an interface name";
    return out;
  }
  uint32_t seq = ++seq_;
  std::string req = dcbIeeeGetRequest(ifname, seq);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd_, req.data(), req.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof kernel) != static_cast<ssize_t>(req.size())) {
    out.error = std::string("netlink send: ") + std::strerror(errno);
    return out;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  std::vector<char> buf(kDcbAnswerMax);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.error = "no answer within " + std::to_string(timeout_.count()) + " ms";
      return out;
    }
    pollfd pfd{fd_, POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      out.error = "no answer within " + std::to_string(timeout_.count()) + " ms";
      return out;
    }
    sockaddr_nl from{};
    socklen_t from_len = sizeof from;
    // MSG_TRUNC: the length of the whole datagram, so that a longer one is told, not cut.
    ssize_t got = ::recvfrom(fd_, buf.data(), buf.size(), MSG_TRUNC | MSG_DONTWAIT,
                             reinterpret_cast<sockaddr*>(&from), &from_len);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      out.error = std::string("netlink receive: ") + std::strerror(errno);
      return out;
    }
    if (from.nl_pid != 0) continue;  // only the kernel answers
    if (static_cast<size_t>(got) > buf.size()) {
      out.error = "an answer over " + std::to_string(kDcbAnswerMax) + " bytes";
      return out;
    }
    out = parseDcbAnswer(std::string_view(buf.data(), static_cast<size_t>(got)), seq);
    // A late answer to an earlier, timed-out request carries another number: read on.
    if (out.supported || out.error != "no answer to the request") return out;
  }
}

core::Value pfcFact(const DcbPfc& p) {
  core::Value v = core::Value::map();
  v["supported"] = p.supported;
  if (!p.error.empty()) v["error"] = p.error;
  if (!p.supported || !p.has_pfc) return v;
  v["capable"] = static_cast<int64_t>(p.pfc_cap);
  core::Value enabled = core::Value::map(), sent = core::Value::map(),
              received = core::Value::map();
  for (int i = 0; i < 8; ++i) {
    std::string k = std::to_string(i);
    enabled[k] = ((p.pfc_en >> i) & 1) != 0;
    sent[k] = p.requests[i];  // u64: above INT64_MAX a double
    received[k] = p.indications[i];
  }
  v["enabled"] = std::move(enabled);
  v["pause_sent"] = std::move(sent);
  v["pause_received"] = std::move(received);
  return v;
}

}  // namespace fabricwatch::facts
