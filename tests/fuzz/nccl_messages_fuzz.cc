// Fuzzes the NCCL probe kind's payloads as a member sends them (probes/kinds/nccl/
// nccl_messages.h): every decoder on any bytes. A payload either fails to decode or gives a
// value that holds the bounds the kind relies on (a run request exactly as the child accepts it:
// a known operation, rank 1 of at least 2, at most 16 sizes of 4 B-16 GiB, iterations, warm-up,
// device and timeout in range, the unique id as 256 hex digits; names at most 253 bytes and texts
// at most 1024, valid UTF-8 without control bytes, as they reach facts and labels; finite,
// non-negative numbers; at most 16 results), whose encoding decodes to the same value (a round
// trip), and whose encoding cut short anywhere does not decode (a payload decodes exactly).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "core/utf8.h"
#include "probes/kinds/nccl/nccl_messages.h"

namespace {

namespace nk = fabricwatch::probes::nccl;

[[noreturn]] void ncclFail(const char* what) {
  std::fprintf(stderr, "nccl_messages_fuzz: %s\n", what);
  std::abort();
}

// Valid UTF-8, no control bytes (what core::sanitizeUtf8 promises), at most max bytes.
void checkText(const std::string& s, size_t max, const char* what) {
  if (s.size() > max) ncclFail(what);
  if (!fabricwatch::core::isValidUtf8(s)) ncclFail(what);
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) ncclFail(what);
}

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void checkNumber(double d, const char* what) {
  if (!(d >= 0) || d > 1.7976931348623157e308) ncclFail(what);
}

// A strict prefix of an accepted payload never decodes (a sample of cut points: all of them
// would make a long payload quadratic).
template <typename Decode>
void checkCuts(const std::string& wire, Decode decode, const char* what) {
  size_t step = 1 + wire.size() / 24;
  for (size_t n = 0; n < wire.size(); n += step)
    if (decode(std::string_view(wire).substr(0, n))) ncclFail(what);
  if (!wire.empty() && decode(std::string_view(wire).substr(0, wire.size() - 1))) ncclFail(what);
}

bool sameRequest(const nk::NcclRunRequest& a, const nk::NcclRunRequest& b) {
  return a.session == b.session && a.prober == b.prober && a.unique_id == b.unique_id &&
         a.operation == b.operation && a.nranks == b.nranks && a.rank == b.rank &&
         a.device == b.device && a.rotate_device == b.rotate_device &&
         a.timeout_ms == b.timeout_ms && a.warmup == b.warmup && a.iterations == b.iterations &&
         a.sizes == b.sizes;
}

void runRequest(std::string_view p) {
  auto r = nk::decodeNcclRunRequest(p);
  if (!r) return;
  checkText(r->prober, 253, "run request: prober name");
  if (r->unique_id.size() != 2 * nk::kNcclUniqueIdBytes) ncclFail("run request: id length");
  for (char c : r->unique_id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) ncclFail("run request: id hex");
  if (r->operation != "all_reduce" && r->operation != "send_recv")
    ncclFail("run request: operation");
  if (r->nranks < 2 || r->rank == 0 || r->rank >= r->nranks) ncclFail("run request: ranks");
  if (r->device > 1023 || r->timeout_ms == 0 || r->warmup > 1000) ncclFail("run request: bounds");
  if (r->iterations < 1 || r->iterations > 10000) ncclFail("run request: iterations");
  if (r->sizes.empty() || r->sizes.size() > nk::kNcclMaxSizes) ncclFail("run request: sizes");
  for (uint64_t s : r->sizes)
    if (s < 4 || s > (uint64_t{16} << 30)) ncclFail("run request: a size");
  std::string wire = nk::encodeNcclRunRequest(*r);
  auto back = nk::decodeNcclRunRequest(wire);
  if (!back || !sameRequest(*r, *back)) ncclFail("run request: round trip");
  checkCuts(wire, nk::decodeNcclRunRequest, "run request: a cut payload decoded");
}

void statusReply(std::string_view p) {
  auto r = nk::decodeNcclStatusReply(p);
  if (!r) return;
  const nk::NcclSide& s = r->side;
  if (!r->known) {
    if (!s.state.empty() || !s.reason.empty() || !s.results.empty() || s.gpus != -1)
      ncclFail("status reply: an unknown run with a side");
  }
  for (const std::string* name :
       {&s.state, &s.nccl_version, &s.cuda_runtime_version, &s.cuda_driver_version, &s.id,
        &s.inter_node_transport, &s.gdr, &s.network, &s.log_status})
    checkText(*name, 253, "status reply: a name");
  checkText(s.reason, 1024, "status reply: reason");
  checkNumber(s.seconds, "status reply: seconds");
  if (s.results.size() > nk::kNcclMaxSizes) ncclFail("status reply: results");
  for (const auto& x : s.results) {
    checkNumber(x.time_us, "status reply: time");
    checkNumber(x.algbw_gbps, "status reply: algbw");
    checkNumber(x.busbw_gbps, "status reply: busbw");
  }
  std::string wire = nk::encodeNcclStatusReply(*r);
  auto back = nk::decodeNcclStatusReply(wire);
  if (!back) ncclFail("status reply: round trip refused");
  const nk::NcclSide& b = back->side;
  bool same = back->session == r->session && back->known == r->known && b.state == s.state &&
              b.reason == s.reason && b.nccl_version == s.nccl_version &&
              b.cuda_runtime_version == s.cuda_runtime_version &&
              b.cuda_driver_version == s.cuda_driver_version && b.gpus == s.gpus &&
              b.device == s.device && b.id == s.id &&
              b.inter_node_transport == s.inter_node_transport && b.gdr == s.gdr &&
              b.network == s.network && b.log_status == s.log_status &&
              sameBits(b.seconds, s.seconds) && b.results.size() == s.results.size();
  for (size_t i = 0; same && i < s.results.size(); ++i) {
    const auto &x = s.results[i], &y = b.results[i];
    same = x.bytes == y.bytes && sameBits(x.time_us, y.time_us) &&
           sameBits(x.algbw_gbps, y.algbw_gbps) && sameBits(x.busbw_gbps, y.busbw_gbps);
  }
  if (!same) ncclFail("status reply: round trip changed it");
  checkCuts(wire, nk::decodeNcclStatusReply, "status reply: a cut payload decoded");
}

void smallOnes(std::string_view p) {
  if (auto r = nk::decodeNcclRunReply(p)) {
    checkText(r->node, 253, "run reply: node");
    std::string wire = nk::encodeNcclRunReply(*r);
    auto back = nk::decodeNcclRunReply(wire);
    if (!back || back->session != r->session || back->node != r->node)
      ncclFail("run reply: round trip");
    checkCuts(wire, nk::decodeNcclRunReply, "run reply: a cut payload decoded");
  }
  // Session-only messages: exactly 8 bytes, which they give back.
  if (nk::decodeNcclStatusRequest(p).has_value() != (p.size() == 8) ||
      nk::decodeNcclCancelRequest(p).has_value() != (p.size() == 8))
    ncclFail("session request: not exactly 8 bytes");
  if (auto r = nk::decodeNcclStatusRequest(p)) {
    if (nk::encodeNcclStatusRequest(*r) != p) ncclFail("status request: round trip");
  }
  if (auto r = nk::decodeNcclCancelRequest(p)) {
    if (nk::encodeNcclCancelRequest(*r) != p) ncclFail("cancel request: round trip");
  }
  if (auto r = nk::decodeNcclCancelReply(p)) {
    // 8 bytes and 0 or 1: its encoding is the payload itself.
    if (nk::encodeNcclCancelReply(*r) != p) ncclFail("cancel reply: round trip");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  runRequest(bytes);
  statusReply(bytes);
  smallOnes(bytes);
  return 0;
}
