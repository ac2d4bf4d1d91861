#include "probes/mesh/frame.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

namespace fabricwatch::probes {
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

const char* replayVerdictName(ReplayVerdict v) {
  switch (v) {
    case ReplayVerdict::kFresh:
      return "fresh";
    case ReplayVerdict::kStale:
      return "stale";
    case ReplayVerdict::kReplay:
      return "replay";
    case ReplayVerdict::kSenderFull:
      return "sender_full";
    case ReplayVerdict::kFull:
      return "full";
  }
  return "unknown";
}

ReplayGuard::ReplayGuard(uint64_t max_skew_ms, size_t max_entries, size_t max_per_sender)
    : max_skew_ms_(max_skew_ms),
      max_entries_(std::max<size_t>(max_entries, 1)),
      max_per_sender_(max_per_sender ? max_per_sender : std::max<size_t>(max_entries_ / 16, 1)) {}

size_t ReplayGuard::size() const {
  std::lock_guard lock(mu_);
  return total_;
}

void ReplayGuard::expire(uint64_t lo) {
  // A bucket goes when its last millisecond is below the window: every frame it remembers
  // would be refused as stale anyway.
  while (!buckets_.empty() && buckets_.begin()->first * 1000 + 999 < lo) {
    auto node = buckets_.extract(buckets_.begin());
    total_ -= node.mapped().nonces.size();
    for (const auto& [sender, n] : node.mapped().senders) {
      auto it = per_sender_.find(sender);
      if (it != per_sender_.end() && (it->second -= std::min<size_t>(it->second, n)) == 0)
        per_sender_.erase(it);
    }
    forgotten_below_ms_ = std::max(forgotten_below_ms_, node.key() * 1000 + 1000);
  }
}

ReplayVerdict ReplayGuard::check(uint64_t ts, uint64_t nonce, uint64_t now_ms,
                                 std::string_view sender) {
  std::lock_guard lock(mu_);
  uint64_t lo = now_ms > max_skew_ms_ ? now_ms - max_skew_ms_ : 0;
  if (ts < lo || ts > now_ms + max_skew_ms_ || ts < forgotten_below_ms_)
    return ReplayVerdict::kStale;
  expire(lo);
  auto bucket = buckets_.find(ts / 1000);
  if (bucket != buckets_.end() && bucket->second.nonces.count(nonce)) return ReplayVerdict::kReplay;
  if (total_ >= max_entries_) return ReplayVerdict::kFull;
  auto mine = per_sender_.find(sender);
  if (mine != per_sender_.end() && mine->second >= max_per_sender_)
    return ReplayVerdict::kSenderFull;
  if (bucket == buckets_.end()) bucket = buckets_.emplace(ts / 1000, Bucket{}).first;
  bucket->second.nonces.insert(nonce);
  auto in_bucket = bucket->second.senders.find(sender);
  if (in_bucket == bucket->second.senders.end())
    bucket->second.senders.emplace(std::string(sender), 1);
  else
    ++in_bucket->second;
  if (mine == per_sender_.end())
    per_sender_.emplace(std::string(sender), 1);
  else
    ++mine->second;
  ++total_;
  return ReplayVerdict::kFresh;
}

uint64_t nowUnixMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

uint64_t randomNonce() {
  uint64_t v = 0;
  // getrandom(2), the kernel's CSPRNG (what RAND_bytes seeds from): a nonce needs no OpenSSL.
  if (getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v)) {
    // Fails only when a signal interrupts it: std::random_device then, never zero.
    std::random_device rd;
    v = (uint64_t{rd()} << 32) | rd();
  }
  return v;
}

}  // namespace fabricwatch::probes
