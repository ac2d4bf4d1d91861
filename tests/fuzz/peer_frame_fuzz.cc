// Fuzzes what a peer sends: the frame decoder (any bytes, then the same bytes inside a frame
// with a valid MAC, as a member holding the secret could send), the payload decoders of the
// channel's own requests, and the replay guard driven by the bytes as a sequence of
// (clock step, timestamp, nonce, sender): it must never accept a frame twice while its
// timestamp is inside the window, and never hold more than its bound.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "core/openssl.h"
#include "probes/mesh/frame.h"
#include "probes/mesh/messages.h"
#include "probes/mesh/payload.h"

namespace {

namespace peer = fabricwatch::probes;
const std::string kSecret = "fuzz-secret-0123456789abcdef";

void payloads(std::string_view p) {
  (void)peer::decodeEchoRequest(p);
  if (auto r = peer::decodeEchoReply(p)) {
    if (peer::decodeEchoReply(peer::encodeEchoReply(*r))->node != r->node) std::abort();
  }
  (void)peer::decodeDeclined(p);
  std::string_view in = p;
  std::string s;
  while (peer::getString(in, s)) {
  }
}

void replay(std::string_view b) {
  constexpr size_t kMax = 64;
  peer::ReplayGuard g(2000, kMax, 16);
  uint64_t now = 1700000000000;
  std::map<std::pair<uint64_t, uint64_t>, int> accepted;
  static const char* kSenders[] = {"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"};
  for (size_t i = 0; i + 4 <= b.size(); i += 4) {
    auto u = [&](size_t k) { return static_cast<uint8_t>(b[i + k]); };
    now += u(0) * 10;                      // the clock moves forward 0-2.5 s
    if (u(0) == 255) now -= 3000;          // or steps back
    uint64_t ts = now - 2500 + u(1) * 20;  // around the window, both sides
    uint64_t nonce = u(2) & 63;
    if (g.accept(ts, nonce, now, kSenders[u(3) & 3])) {
      if (++accepted[{ts, nonce}] > 1) std::abort();  // a replay accepted
    }
    if (g.size() > kMax) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The frame MAC is libcrypto's HMAC, loaded as the mesh loads it (core/openssl.h).
  static const bool kLoaded = fabricwatch::core::openssl::require("the frame fuzzer").ok();
  if (!kLoaded) std::abort();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  peer::DecodeResult r = peer::decodeFrame(bytes, kSecret);
  if (r.status == peer::DecodeStatus::kOk && r.consumed > size) std::abort();
  // The same bytes as the payload of an authentic frame of every type.
  peer::Frame f;
  f.type = static_cast<peer::FrameType>(size ? data[0] : 1);
  f.timestamp_ms = 1700000000000;
  f.nonce = size;
  f.payload.assign(bytes.substr(0, peer::kMaxPayload));
  std::string wire = peer::encodeFrame(f, kSecret);
  peer::DecodeResult back = peer::decodeFrame(wire, kSecret);
  if (back.status != peer::DecodeStatus::kOk || back.frame.payload != f.payload) std::abort();
  // Every prefix of it is "need more", never anything else.
  if (peer::decodeFrame(std::string_view(wire).substr(0, wire.size() / 2), kSecret).status !=
      peer::DecodeStatus::kNeedMore)
    std::abort();
  payloads(bytes);
  replay(bytes);
  return 0;
}
