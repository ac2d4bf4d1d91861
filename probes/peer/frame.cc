#include "probes/peer/frame.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <chrono>
#include <cstring>
#include <random>

namespace fabricwatch::probes::peer {
namespace {

constexpr char kMagic[4] = {'F', 'W', 'P', 'C'};

void mac(std::string_view data, std::string_view secret, unsigned char out[kMacSize]) {
  unsigned int len = kMacSize;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
}

}  // namespace

void putU16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}
void putU32(std::string& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>(v >> s));
}
void putU64(std::string& out, uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>(v >> s));
}
uint16_t getU16(const char* p) {
  auto u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>((u[0] << 8) | u[1]);
}
uint32_t getU32(const char* p) {
  auto u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}
uint64_t getU64(const char* p) { return (uint64_t{getU32(p)} << 32) | getU32(p + 4); }

const char* decodeStatusName(DecodeStatus s) {
  switch (s) {
    case DecodeStatus::kOk:
      return "ok";
    case DecodeStatus::kNeedMore:
      return "truncated";
    case DecodeStatus::kBadMagic:
      return "malformed";
    case DecodeStatus::kBadVersion:
      return "version";
    case DecodeStatus::kOversized:
      return "oversized";
    case DecodeStatus::kBadMac:
      return "auth";
  }
  return "unknown";
}

std::string encodeFrame(const Frame& f, std::string_view secret) {
  std::string out;
  out.reserve(kHeaderSize + f.payload.size() + kMacSize);
  out.append(kMagic, 4);
  out.push_back(static_cast<char>(kFrameVersion));
  out.push_back(static_cast<char>(f.type));
  putU16(out, 0);
  putU32(out, static_cast<uint32_t>(f.payload.size()));
  putU64(out, f.timestamp_ms);
  putU64(out, f.nonce);
  out += f.payload;
  unsigned char m[kMacSize];
  mac(out, secret, m);
  out.append(reinterpret_cast<const char*>(m), kMacSize);
  return out;
}

DecodeResult decodeFrame(std::string_view buf, std::string_view secret) {
  DecodeResult r;
  // Judge the magic on whatever prefix has arrived, so garbage is refused at its first bytes.
  size_t have = std::min<size_t>(buf.size(), 4);
  if (std::memcmp(buf.data(), kMagic, have) != 0) {
    r.status = DecodeStatus::kBadMagic;
    return r;
  }
  if (buf.size() < kHeaderSize) return r;
  if (static_cast<uint8_t>(buf[4]) != kFrameVersion) {
    r.status = DecodeStatus::kBadVersion;
    return r;
  }
  uint32_t len = getU32(buf.data() + 8);
  if (len > kMaxPayload) {
    r.status = DecodeStatus::kOversized;
    return r;
  }
  size_t total = kHeaderSize + len + kMacSize;
  if (buf.size() < total) return r;
  unsigned char m[kMacSize];
  mac(buf.substr(0, kHeaderSize + len), secret, m);
  if (CRYPTO_memcmp(m, buf.data() + kHeaderSize + len, kMacSize) != 0) {
    r.status = DecodeStatus::kBadMac;
    return r;
  }
  r.frame.type = static_cast<FrameType>(buf[5]);
  r.frame.timestamp_ms = getU64(buf.data() + 12);
  r.frame.nonce = getU64(buf.data() + 20);
  r.frame.payload.assign(buf.data() + kHeaderSize, len);
  r.consumed = total;
  r.status = DecodeStatus::kOk;
  return r;
}

bool ReplayGuard::accept(uint64_t ts, uint64_t nonce, uint64_t now_ms) {
  std::lock_guard lock(mu_);
  uint64_t lo = now_ms > max_skew_ms_ ? now_ms - max_skew_ms_ : 0;
  if (ts < lo || ts > now_ms + max_skew_ms_ || ts <= floor_ms_) return false;
  // Forget nonces whose frames would be refused as stale anyway.
  while (!order_.empty() && order_.front().timestamp_ms < lo) {
    seen_.erase(order_.front().nonce);
    order_.pop_front();
  }
  if (seen_.count(nonce)) return false;
  while (order_.size() >= max_entries_) {
    floor_ms_ = std::max(floor_ms_, order_.front().timestamp_ms);
    seen_.erase(order_.front().nonce);
    order_.pop_front();
  }
  if (ts <= floor_ms_) return false;
  seen_.insert(nonce);
  // Keep order_ sorted by timestamp so expiry from the front is exact.
  auto it = order_.end();
  while (it != order_.begin() && std::prev(it)->timestamp_ms > ts) --it;
  order_.insert(it, Entry{ts, nonce});
  return true;
}

uint64_t nowUnixMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

uint64_t randomNonce() {
  uint64_t v = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&v), sizeof v) != 1) {
    // RAND_bytes fails only without entropy; fall back to the OS generator, never to zero.
    std::random_device rd;
    v = (uint64_t{rd()} << 32) | rd();
  }
  return v;
}

}  // namespace fabricwatch::probes::peer
