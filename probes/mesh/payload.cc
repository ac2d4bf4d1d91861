#include "probes/mesh/payload.h"

#include "probes/mesh/frame.h"

namespace fabricwatch::probes {

void putString(std::string& out, std::string_view s) {
  s = s.substr(0, kMaxPayloadString);
  putU16(out, static_cast<uint16_t>(s.size()));
  out.append(s);
}

bool getString(std::string_view& in, std::string& out) {
  if (in.size() < 2) return false;
  uint16_t n = getU16(in.data());
  if (n > kMaxPayloadString || in.size() < 2u + n) return false;
  out.assign(in.data() + 2, n);
  in.remove_prefix(2 + n);
  return true;
}

const char* PayloadReader::take(size_t n) {
  if (!ok_ || in_.size() < n) {
    ok_ = false;
    return nullptr;
  }
  const char* p = in_.data();
  in_.remove_prefix(n);
  return p;
}

uint8_t PayloadReader::u8() {
  const char* p = take(1);
  return p ? static_cast<uint8_t>(*p) : 0;
}

uint16_t PayloadReader::u16() {
  const char* p = take(2);
  return p ? getU16(p) : 0;
}

uint32_t PayloadReader::u32() {
  const char* p = take(4);
  return p ? getU32(p) : 0;
}

uint64_t PayloadReader::u64() {
  const char* p = take(8);
  return p ? getU64(p) : 0;
}

std::string PayloadReader::string() {
  std::string s;
  if (ok_ && !getString(in_, s)) ok_ = false;
  return s;
}

std::string_view PayloadReader::bytes(size_t n) {
  const char* p = take(n);
  return p ? std::string_view(p, n) : std::string_view();
}

}  // namespace fabricwatch::probes
