#include "probes/peer/messages.h"

#include "probes/peer/frame.h"

namespace fabricwatch::probes::peer {
namespace {

constexpr size_t kMaxName = 253;  // a DNS name at most

}  // namespace

void putString(std::string& out, std::string_view s) {
  s = s.substr(0, kMaxName);
  putU16(out, static_cast<uint16_t>(s.size()));
  out.append(s);
}

bool getString(std::string_view& in, std::string& out) {
  if (in.size() < 2) return false;
  uint16_t n = getU16(in.data());
  if (n > kMaxName || in.size() < 2u + n) return false;
  out.assign(in.data() + 2, n);
  in.remove_prefix(2 + n);
  return true;
}

std::string encodeEchoRequest(const EchoRequest& r) {
  std::string out;
  putU32(out, r.seq);
  putString(out, r.sender);
  return out;
}

std::optional<EchoRequest> decodeEchoRequest(std::string_view in) {
  EchoRequest r;
  if (in.size() < 4) return std::nullopt;
  r.seq = getU32(in.data());
  in.remove_prefix(4);
  if (!getString(in, r.sender) || !in.empty()) return std::nullopt;
  return r;
}

std::string encodeEchoReply(const EchoReply& r) {
  std::string out;
  putU32(out, r.seq);
  putString(out, r.node);
  putString(out, r.group);
  putU64(out, r.instance);
  return out;
}

std::optional<EchoReply> decodeEchoReply(std::string_view in) {
  EchoReply r;
  if (in.size() < 4) return std::nullopt;
  r.seq = getU32(in.data());
  in.remove_prefix(4);
  if (!getString(in, r.node) || !getString(in, r.group)) return std::nullopt;
  if (in.size() == 8) {
    r.instance = getU64(in.data());
    in.remove_prefix(8);
  }
  if (!in.empty()) return std::nullopt;
  return r;
}

std::string encodeDeclined(std::string_view reason) {
  std::string out;
  putString(out, reason);
  return out;
}

std::optional<std::string> decodeDeclined(std::string_view in) {
  std::string reason;
  if (!getString(in, reason) || !in.empty()) return std::nullopt;
  return reason;
}

}  // namespace fabricwatch::probes::peer
