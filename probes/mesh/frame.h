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
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace fabricwatch::probes {

inline constexpr uint8_t kFrameVersion = 1;
inline constexpr size_t kHeaderSize = 4 + 1 + 1 + 2 + 4 + 8 + 8;
inline constexpr size_t kMacSize = 32;
inline constexpr size_t kMaxPayload = 16 * 1024;  // echo and rendezvous frames are small

// A frame's type is all that routes it to its handler (channel_server.h), so no two kinds may
// share one: the channel's own are here, and each kind declares its range with its registration
// (probe_kind.h, FrameRange), which the registry checks (probes/registry.h). A reply's payload
// starts with the nonce of the request it answers.
enum class FrameType : uint8_t {
  // The channel's own. The echo is the mesh's hello (knocks, the tcp probe, who a peer is and
  // which instance of it runs); kDeclined answers a request that is not served (busy, disabled,
  // unknown type) with the reason.
  kEchoRequest = 1,
  kEchoReply = 2,
  kDeclined = 3,
  // 16..239: the probe kinds' (fabric 16-31, nccl 32-47: their registrations say).
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

// Replay protection. A frame is fresh when its timestamp is within `max_skew_ms` of the local
// clock and the guard has not accepted it before. A replay repeats the timestamp and the nonce
// (the MAC covers both), so nonces are kept in buckets by timestamp second, and a bucket is
// forgotten as a whole once all of its second has left the window. Time can step back: a
// timestamp at or below the end of a forgotten bucket stays refused.
//
// Bounded, and no sender can poison it for others (issue 13: a member once filled the window
// with 65,536 frames stamped 29 s ahead and locked every genuine frame out for 25 s). The guard
// holds at most `max_entries` nonces, and one sender (the connection's source address) at most
// `max_per_sender`. A frame it has no room to remember is refused, never accepted unremembered,
// so the bound cannot let a replay through; a sender that floods, with timestamps anywhere in
// the window (the future included), uses up only its own share, which frees itself as its
// timestamps leave the window. Locking everyone out takes max_entries / max_per_sender source
// addresses that hold the secret. The sender is not authenticated (all members share one
// secret) and need not be: it only decides whose share a frame is charged to.
enum class ReplayVerdict {
  kFresh,       // accepted and remembered
  kStale,       // outside the window (too old, too far ahead, or in a forgotten second)
  kReplay,      // seen before
  kSenderFull,  // the sender's share is used up
  kFull,        // the guard is full
};
const char* replayVerdictName(ReplayVerdict v);

class ReplayGuard {
 public:
  explicit ReplayGuard(uint64_t max_skew_ms = 30000, size_t max_entries = 1 << 16,
                       size_t max_per_sender = 0 /* 0: max_entries / 16 */);

  ReplayVerdict check(uint64_t timestamp_ms, uint64_t nonce, uint64_t now_ms,
                      std::string_view sender = {});
  // True (and remembers the nonce) when the frame is fresh.
  bool accept(uint64_t timestamp_ms, uint64_t nonce, uint64_t now_ms,
              std::string_view sender = {}) {
    return check(timestamp_ms, nonce, now_ms, sender) == ReplayVerdict::kFresh;
  }
  size_t size() const;  // nonces remembered now

 private:
  struct Bucket {
    std::unordered_set<uint64_t> nonces;
    std::map<std::string, uint32_t, std::less<>> senders;  // nonces per sender
  };
  void expire(uint64_t lo);

  mutable std::mutex mu_;
  uint64_t max_skew_ms_;
  size_t max_entries_;
  size_t max_per_sender_;
  uint64_t forgotten_below_ms_ = 0;     // timestamps below this lay in forgotten buckets
  std::map<uint64_t, Bucket> buckets_;  // by timestamp second
  std::map<std::string, size_t, std::less<>> per_sender_;
  size_t total_ = 0;
};

// Unix time in milliseconds and a random 64-bit nonce (getrandom(2)).
uint64_t nowUnixMs();
uint64_t randomNonce();

// Big-endian helpers shared by the payload formats.
void putU16(std::string& out, uint16_t v);
void putU32(std::string& out, uint32_t v);
void putU64(std::string& out, uint64_t v);
uint16_t getU16(const char* p);
uint32_t getU32(const char* p);
uint64_t getU64(const char* p);

}  // namespace fabricwatch::probes
