#include "probes/mesh/messages.h"

#include "probes/mesh/frame.h"
#include "probes/mesh/payload.h"

namespace fabricwatch::probes {

std::string encodeEchoRequest(const EchoRequest& r) {
  std::string out;
  putU32(out, r.seq);
  putString(out, r.sender);
  return out;
}

std::optional<EchoRequest> decodeEchoRequest(std::string_view payload) {
  PayloadReader in(payload);
  EchoRequest r;
  r.seq = in.u32();
  r.sender = in.string();
  if (!in.done()) return std::nullopt;
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

std::optional<EchoReply> decodeEchoReply(std::string_view payload) {
  PayloadReader in(payload);
  EchoReply r;
  r.seq = in.u32();
  r.node = in.string();
  r.group = in.string();
  if (in.ok() && in.left() == 8) r.instance = in.u64();  // absent from older peers
  if (!in.done()) return std::nullopt;
  return r;
}

std::string encodeDeclined(std::string_view reason) {
  std::string out;
  putString(out, reason);
  return out;
}

std::optional<std::string> decodeDeclined(std::string_view payload) {
  PayloadReader in(payload);
  std::string reason = in.string();
  if (!in.done()) return std::nullopt;
  return reason;
}

}  // namespace fabricwatch::probes
