#pragma once
// Payloads carried in peer-channel frames. An echo reply names the request it answers (its
// nonce and sequence number), so an authentic reply cannot be replayed against another request,
// and tells who answered (node name, topology group): that is how a node learns the names of
// peers it only knows by address, and how it recognises itself in the membership.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabricwatch::probes::peer {

struct EchoRequest {
  uint32_t seq = 0;
  std::string sender;  // the probing node's name, for the server's logs
};

struct EchoReply {
  uint64_t request_nonce = 0;
  uint32_t seq = 0;
  std::string node;
  std::string group;
};

std::string encodeEchoRequest(const EchoRequest& r);
std::optional<EchoRequest> decodeEchoRequest(std::string_view payload);
std::string encodeEchoReply(const EchoReply& r);
std::optional<EchoReply> decodeEchoReply(std::string_view payload);

}  // namespace fabricwatch::probes::peer
