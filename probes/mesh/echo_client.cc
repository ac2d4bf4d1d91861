#include "probes/mesh/echo_client.h"

#include "probes/mesh/messages.h"

namespace fabricwatch::probes {

EchoResult runEcho(const std::string& address, const EchoOptions& opts) {
  EchoResult res;
  ChannelClient client(opts.secret);
  CallResult c = client.connect(address, opts.connect_timeout);
  if (c.failure != ChannelFailure::kNone) {
    res.failure = c.failure;
    res.error = c.error;
    return res;
  }
  res.connected = true;
  res.connect_seconds = c.seconds;
  for (int i = 0; i < opts.samples; ++i) {
    auto seq = static_cast<uint32_t>(i);
    ++res.sent;
    CallResult r = client.call(FrameType::kEchoRequest, encodeEchoRequest({seq, opts.node_name}),
                               FrameType::kEchoReply, opts.echo_timeout);
    if (r.failure != ChannelFailure::kNone) {
      res.failure = r.failure;
      res.error = r.error;
      break;
    }
    auto reply = r.declined ? std::nullopt : decodeEchoReply(r.payload);
    if (!reply || reply->seq != seq) {
      res.failure = ChannelFailure::kAuth;
      res.error = "reply does not answer our request";
      break;
    }
    res.rtt_seconds.push_back(r.seconds);
    res.peer_node = reply->node;
    res.peer_group = reply->group;
    res.peer_instance = reply->instance;
  }
  return res;
}

}  // namespace fabricwatch::probes
