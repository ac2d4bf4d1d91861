#pragma once
// The encoding shared by every kind's payloads on the peer channel: integers in network order
// (frame.h's putU16/putU32/putU64), length-prefixed strings (u16 length, at most 253 bytes: a
// DNS name, an endpoint name), and a bounded reader that decodes them. Payloads come from
// peers: every read checks the bytes left, and the first short read fails the whole decode.

#include <cstdint>
#include <string>
#include <string_view>

namespace fabricwatch::probes {

inline constexpr size_t kMaxPayloadString = 253;

// Appends `s` (cut to kMaxPayloadString bytes) with its length.
void putString(std::string& out, std::string_view s);
// Takes one putString from the front of `in`; false (and `in` as it was) when it is not there.
bool getString(std::string_view& in, std::string& out);

// Reads a payload front to back. Once a read finds too few bytes, it and every later read
// return zero or empty and ok() stays false; done() says whether all of it was read, exactly.
class PayloadReader {
 public:
  explicit PayloadReader(std::string_view in) : in_(in) {}
  uint8_t u8();
  uint16_t u16();
  uint32_t u32();
  uint64_t u64();
  std::string string();              // putString's format, the bytes as sent
  std::string_view bytes(size_t n);  // the next n bytes
  void fail() { ok_ = false; }       // a field read whole but invalid
  size_t left() const { return in_.size(); }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && in_.empty(); }

 private:
  const char* take(size_t n);
  std::string_view in_;
  bool ok_ = true;
};

}  // namespace fabricwatch::probes
