#pragma once
// The peer channel's wire format: one pure codec, no I/O. Every frame is
//
//   magic "FWPC" | version u8 | type u8 | reserved u16 | payload length u32 |
//   timestamp (unix ms) u64 | nonce u64 | payload | HMAC-SHA256(header + payload)
//
// (integers big-endian). The MAC covers everything before it, so a frame cannot be altered,
// truncated or re-typed without the shared secret. The length is checked against a hard limit
// before anything is buffered, and ReplayGuard rejects stale timestamps and repeated nonces, so
// a captured frame cannot be played back.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace fabricwatch::probes::peer {

inline constexpr uint8_t kFrameVersion = 1;
inline constexpr size_t kHeaderSize = 4 + 1 + 1 + 2 + 4 + 8 + 8;
inline constexpr size_t kMacSize = 32;
inline constexpr size_t kMaxPayload = 16 * 1024;  // echo and rendezvous frames are small

// Every frame type of every probe kind is allocated here, so that no two kinds share one: a
// frame's type is all that routes it to its handler (channel_server.h). A reply's payload starts
// with the nonce of the request it answers.
enum class FrameType : uint8_t {
  // The channel's own. The echo is the mesh's hello (knocks, the tcp probe, who a peer is and
  // which instance of it runs); kDeclined answers a request that is not served (busy, disabled,
  // unknown type) with the reason.
  kEchoRequest = 1,
  kEchoReply = 2,
  kDeclined = 3,
  // 16..31: the fabric (libfabric) probe (fabric_wire.h): its endpoint's name, and sessions.
  kFabricHelloRequest = 16,
  kFabricHelloReply = 17,
  kFabricSessionRequest = 18,
  kFabricSessionReply = 19,
  // 32..47: the NCCL probe (nccl_messages.h): join a run as rank 1 with rank 0's unique id, the
  // state of that run on the peer's side, cancel it.
  kNcclRunRequest = 32,
  kNcclRunReply = 33,
  kNcclStatusRequest = 34,
  kNcclStatusReply = 35,
  kNcclCancelRequest = 36,
  kNcclCancelReply = 37,
  // 240..255: never sent by fabricwatch itself; free for tests and experiments.
  kPrivateFirst = 240,
};

struct Frame {
  FrameType type = FrameType::kEchoRequest;
  uint64_t timestamp_ms = 0;
  uint64_t nonce = 0;
  std::string payload;
};

enum class DecodeStatus {
  kOk,
  kNeedMore,    // not a whole frame yet
  kBadMagic,    // not our protocol (garbage, an HTTP client ...)
  kBadVersion,  // a version this build does not speak
  kOversized,   // length prefix over kMaxPayload
  kBadMac,      // unauthenticated or tampered
};

const char* decodeStatusName(DecodeStatus s);

struct DecodeResult {
  DecodeStatus status = DecodeStatus::kNeedMore;
  Frame frame;          // valid when kOk
  size_t consumed = 0;  // bytes of the input that made up the frame (kOk)
};

// Serialises and authenticates a frame (the payload must not exceed kMaxPayload).
std::string encodeFrame(const Frame& frame, std::string_view secret);

// Decodes the first frame in `buf`. Reports kNeedMore until the frame is complete; reports a
// bad header (magic, version, length) as soon as the header is in, before the payload arrives.
DecodeResult decodeFrame(std::string_view buf, std::string_view secret);

// Replay protection: a frame is fresh when its timestamp is within `max_skew_ms` of the local
// clock and its nonce has not been seen within that window. Memory is bounded by `max_entries`;
// when full, the oldest nonces are forgotten and the accepted window shrinks to match, so an
// old frame can never slip through a forgotten nonce.
class ReplayGuard {
 public:
  explicit ReplayGuard(uint64_t max_skew_ms = 30000, size_t max_entries = 1 << 16)
      : max_skew_ms_(max_skew_ms), max_entries_(max_entries) {}

  // True (and remembers the nonce) when the frame is fresh.
  bool accept(uint64_t timestamp_ms, uint64_t nonce, uint64_t now_ms);

 private:
  struct Entry {
    uint64_t timestamp_ms;
    uint64_t nonce;
  };
  std::mutex mu_;
  uint64_t max_skew_ms_;
  size_t max_entries_;
  uint64_t floor_ms_ = 0;  // frames at or below this timestamp are refused (evicted window)
  std::deque<Entry> order_;
  std::unordered_set<uint64_t> seen_;
};

// Unix time in milliseconds and a random 64-bit nonce (OpenSSL's RAND_bytes).
uint64_t nowUnixMs();
uint64_t randomNonce();

// Big-endian helpers shared by the payload formats.
void putU16(std::string& out, uint16_t v);
void putU32(std::string& out, uint32_t v);
void putU64(std::string& out, uint64_t v);
uint16_t getU16(const char* p);
uint32_t getU32(const char* p);
uint64_t getU64(const char* p);

}  // namespace fabricwatch::probes::peer
