#include "probes/kinds/nccl/nccl_messages.h"

#include <cmath>
#include <cstring>

#include "core/utf8.h"
#include "probes/mesh/frame.h"
#include "probes/mesh/payload.h"

namespace fabricwatch::probes::nccl {
namespace {

constexpr size_t kMaxText = 1024;  // reasons: CUDA's or NCCL's words, a command line

// The payload reader with the NCCL formats' own fields: numbers (a double's bits, finite and
// not negative), names and texts as valid UTF-8 (they reach facts and labels).
class Reader : public PayloadReader {
 public:
  using PayloadReader::PayloadReader;
  double number() {
    uint64_t bits = u64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d) || d < 0) fail();
    return d;
  }
  std::string name() { return core::sanitizeUtf8(string(), kMaxPayloadString); }
  std::string text() {
    uint16_t n = u16();
    if (n > kMaxText) fail();
    std::string_view s = ok() ? PayloadReader::bytes(n) : std::string_view();
    return core::sanitizeUtf8(s, kMaxText);
  }
  std::string bytes(size_t n) { return std::string(PayloadReader::bytes(n)); }
};

void putText(std::string& out, std::string_view s) {
  s = s.substr(0, kMaxText);
  putU16(out, static_cast<uint16_t>(s.size()));
  out.append(s);
}

void putNumber(std::string& out, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof d);
  putU64(out, bits);
}

int hexValue(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

}  // namespace

std::string encodeNcclRunRequest(const NcclRunRequest& r) {
  std::string out;
  putU64(out, r.session);
  putString(out, r.prober);
  // The id as its 128 bytes; a malformed hex id (never sent by fabricwatch) goes as zeros.
  std::string raw(kNcclUniqueIdBytes, '\0');
  if (r.unique_id.size() == 2 * kNcclUniqueIdBytes) {
    for (size_t i = 0; i < kNcclUniqueIdBytes; ++i) {
      int hi = hexValue(r.unique_id[2 * i]), lo = hexValue(r.unique_id[2 * i + 1]);
      raw[i] = static_cast<char>(hi < 0 || lo < 0 ? 0 : hi << 4 | lo);
    }
  }
  out += raw;
  putString(out, r.operation);
  putU16(out, r.nranks);
  putU16(out, r.rank);
  putU16(out, r.device);
  out.push_back(r.rotate_device ? 1 : 0);
  putU32(out, r.timeout_ms);
  putU16(out, r.warmup);
  putU32(out, r.iterations);
  size_t n = std::min(r.sizes.size(), kNcclMaxSizes);
  out.push_back(static_cast<char>(n));
  for (size_t i = 0; i < n; ++i) putU64(out, r.sizes[i]);
  return out;
}

std::optional<NcclRunRequest> decodeNcclRunRequest(std::string_view payload) {
  Reader in(payload);
  NcclRunRequest r;
  r.session = in.u64();
  r.prober = in.name();
  static const char* kHex = "0123456789abcdef";
  for (unsigned char c : in.bytes(kNcclUniqueIdBytes)) {
    r.unique_id += kHex[c >> 4];
    r.unique_id += kHex[c & 15];
  }
  r.operation = in.name();
  r.nranks = in.u16();
  r.rank = in.u16();
  r.device = in.u16();
  uint8_t rotate = in.u8();
  r.rotate_device = rotate == 1;
  r.timeout_ms = in.u32();
  r.warmup = in.u16();
  r.iterations = in.u32();
  uint8_t n = in.u8();
  for (uint8_t i = 0; i < n && i < kNcclMaxSizes; ++i) r.sizes.push_back(in.u64());
  // Exactly what the child accepts (probe_protocol.cc), so that a bad request is refused here
  // rather than by a child started for nothing.
  bool valid = in.done() && rotate <= 1 && n >= 1 && n <= kNcclMaxSizes &&
               nccl::validOperation(r.operation) && r.nranks >= 2 && r.rank < r.nranks &&
               r.rank > 0 && r.device <= 1023 && r.timeout_ms > 0 && r.warmup <= 1000 &&
               r.iterations >= 1 && r.iterations <= 10000 &&
               r.unique_id.size() == 2 * kNcclUniqueIdBytes;
  for (uint64_t s : r.sizes) valid = valid && s >= 4 && s <= (uint64_t{16} << 30);
  if (!valid) return std::nullopt;
  return r;
}

std::string encodeNcclRunReply(const NcclRunReply& r) {
  std::string out;
  putU64(out, r.session);
  putString(out, r.node);
  return out;
}

std::optional<NcclRunReply> decodeNcclRunReply(std::string_view payload) {
  Reader in(payload);
  NcclRunReply r;
  r.session = in.u64();
  r.node = in.name();
  if (!in.done()) return std::nullopt;
  return r;
}

std::string encodeNcclStatusRequest(const NcclStatusRequest& r) {
  std::string out;
  putU64(out, r.session);
  return out;
}

std::optional<NcclStatusRequest> decodeNcclStatusRequest(std::string_view payload) {
  Reader in(payload);
  NcclStatusRequest r;
  r.session = in.u64();
  if (!in.done()) return std::nullopt;
  return r;
}

std::string encodeNcclStatusReply(const NcclStatusReply& r) {
  std::string out;
  putU64(out, r.session);
  out.push_back(r.known ? 1 : 0);
  if (!r.known) return out;
  const NcclSide& s = r.side;
  putString(out, s.state);
  putText(out, s.reason);
  putString(out, s.nccl_version);
  putString(out, s.cuda_runtime_version);
  putString(out, s.cuda_driver_version);
  putU32(out, static_cast<uint32_t>(s.gpus));
  putU32(out, static_cast<uint32_t>(s.device));
  putString(out, s.id);
  putString(out, s.inter_node_transport);
  putString(out, s.gdr);
  putString(out, s.network);
  putString(out, s.log_status);
  putNumber(out, s.seconds);
  size_t n = std::min(s.results.size(), kNcclMaxSizes);
  out.push_back(static_cast<char>(n));
  for (size_t i = 0; i < n; ++i) {
    putU64(out, s.results[i].bytes);
    putNumber(out, s.results[i].time_us);
    putNumber(out, s.results[i].algbw_gbps);
    putNumber(out, s.results[i].busbw_gbps);
  }
  return out;
}

std::optional<NcclStatusReply> decodeNcclStatusReply(std::string_view payload) {
  Reader in(payload);
  NcclStatusReply r;
  r.session = in.u64();
  uint8_t known = in.u8();
  r.known = known == 1;
  if (known > 1) return std::nullopt;
  if (r.known) {
    NcclSide& s = r.side;
    s.state = in.name();
    s.reason = in.text();
    s.nccl_version = in.name();
    s.cuda_runtime_version = in.name();
    s.cuda_driver_version = in.name();
    s.gpus = static_cast<int32_t>(in.u32());
    s.device = static_cast<int32_t>(in.u32());
    s.id = in.name();
    s.inter_node_transport = in.name();
    s.gdr = in.name();
    s.network = in.name();
    s.log_status = in.name();
    s.seconds = in.number();
    uint8_t n = in.u8();
    if (n > kNcclMaxSizes) return std::nullopt;
    for (uint8_t i = 0; i < n; ++i) {
      nccl::SizeResult x;
      x.bytes = in.u64();
      x.time_us = in.number();
      x.algbw_gbps = in.number();
      x.busbw_gbps = in.number();
      s.results.push_back(x);
    }
  }
  if (!in.done()) return std::nullopt;
  return r;
}

std::string encodeNcclCancelRequest(const NcclCancelRequest& r) {
  std::string out;
  putU64(out, r.session);
  return out;
}

std::optional<NcclCancelRequest> decodeNcclCancelRequest(std::string_view payload) {
  Reader in(payload);
  NcclCancelRequest r;
  r.session = in.u64();
  if (!in.done()) return std::nullopt;
  return r;
}

std::string encodeNcclCancelReply(const NcclCancelReply& r) {
  std::string out;
  putU64(out, r.session);
  out.push_back(r.cancelled ? 1 : 0);
  return out;
}

std::optional<NcclCancelReply> decodeNcclCancelReply(std::string_view payload) {
  Reader in(payload);
  NcclCancelReply r;
  r.session = in.u64();
  uint8_t c = in.u8();
  r.cancelled = c == 1;
  if (!in.done() || c > 1) return std::nullopt;
  return r;
}

}  // namespace fabricwatch::probes::nccl
