#pragma once
// Payloads carried in peer-channel frames. The channel puts the request's nonce before every
// reply payload (channel_server.h), so the formats below start after it. An echo reply tells
// who answered (node name, topology group): that is how a node learns the names of peers it
// only knows by address, and how it recognises itself in the membership. Its instance ID is
// drawn at random when the daemon starts, so a new one means the peer restarted and what a kind
// cached about it (a fabric endpoint name) is stale.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabricwatch::probes {

struct EchoRequest {
  uint32_t seq = 0;
  std::string sender;  // the probing node's name, for the server's logs
};

struct EchoReply {
  uint32_t seq = 0;
  std::string node;
  std::string group;
  uint64_t instance = 0;  // 0: not sent (a peer from before instance IDs)
};

std::string encodeEchoRequest(const EchoRequest& r);
std::optional<EchoRequest> decodeEchoRequest(std::string_view payload);
std::string encodeEchoReply(const EchoReply& r);
std::optional<EchoReply> decodeEchoReply(std::string_view payload);

// Why a request was declined (bounded; the caller sanitises it before it reaches a label).
std::string encodeDeclined(std::string_view reason);
std::optional<std::string> decodeDeclined(std::string_view payload);

}  // namespace fabricwatch::probes
