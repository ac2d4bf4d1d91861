#pragma once
// The NCCL probe kind's payloads on the peer channel (its frame types below, 32-47). The prober's
// daemon starts rank 0, which makes NCCL's unique id; it asks the peer's daemon to join as rank
// 1 with that id and the run's parameters (NcclRunRequest: accepted at once, or declined with
// the reason), then asks for the peer's side of the run until it has ended (NcclStatus), and
// cancels it when its own side cannot go on. Every field is bounded; a payload that does not
// decode exactly is malformed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/kinds/nccl/probe_protocol.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes::nccl {

// The kind's frame types, 32..47 (its registration's range): join a run as rank 1 with rank 0's
// unique id, the state of that run on the peer's side, cancel it.
inline constexpr FrameRange kNcclFrames{32, 16};
inline constexpr FrameType kNcclRunRequest{32};
inline constexpr FrameType kNcclRunReply{33};
inline constexpr FrameType kNcclStatusRequest{34};
inline constexpr FrameType kNcclStatusReply{35};
inline constexpr FrameType kNcclCancelRequest{36};
inline constexpr FrameType kNcclCancelReply{37};

inline constexpr size_t kNcclUniqueIdBytes = 128;
inline constexpr size_t kNcclMaxSizes = 16;

struct NcclRunRequest {
  uint64_t session = 0;   // the prober's random run id: status and cancel name it
  std::string prober;     // the prober's node name (for the peer's facts and logs)
  std::string unique_id;  // rank 0's, 256 hex digits (128 bytes on the wire)
  std::string operation;  // all_reduce | send_recv
  uint16_t nranks = 2;
  uint16_t rank = 1;
  uint16_t device = 0;  // with rotate_device: an index, used modulo the peer's GPU count
  bool rotate_device = false;
  uint32_t timeout_ms = 0;  // the peer's child gets at most this (and at most its own timeout)
  uint16_t warmup = 0;
  uint32_t iterations = 0;
  std::vector<uint64_t> sizes;
};

struct NcclRunReply {
  uint64_t session = 0;
  std::string node;  // who accepted
};

// One node's side of a peer run, as the other side learns it.
struct NcclSide {
  std::string state;  // running | ok | unavailable | failed | timeout | crashed | cancelled |
                      // declined (the GPUs were busy when the run was to start)
  std::string reason;
  std::string nccl_version, cuda_runtime_version, cuda_driver_version;
  int32_t gpus = -1;
  int32_t device = -1;
  std::string id;  // the unique id's fingerprint (nccl::uniqueIdFingerprint)
  // From NCCL's log of this side's run ("" without a log).
  std::string inter_node_transport, gdr, network, log_status;
  double seconds = 0;
  std::vector<nccl::SizeResult> results;
};

struct NcclStatusRequest {
  uint64_t session = 0;
};

struct NcclStatusReply {
  uint64_t session = 0;
  bool known = false;  // false: the peer has no such run (restarted, or forgot it)
  NcclSide side;       // when known
};

struct NcclCancelRequest {
  uint64_t session = 0;
};

struct NcclCancelReply {
  uint64_t session = 0;
  bool cancelled = false;  // a running session was told to stop
};

std::string encodeNcclRunRequest(const NcclRunRequest& r);
std::optional<NcclRunRequest> decodeNcclRunRequest(std::string_view payload);
std::string encodeNcclRunReply(const NcclRunReply& r);
std::optional<NcclRunReply> decodeNcclRunReply(std::string_view payload);
std::string encodeNcclStatusRequest(const NcclStatusRequest& r);
std::optional<NcclStatusRequest> decodeNcclStatusRequest(std::string_view payload);
std::string encodeNcclStatusReply(const NcclStatusReply& r);
std::optional<NcclStatusReply> decodeNcclStatusReply(std::string_view payload);
std::string encodeNcclCancelRequest(const NcclCancelRequest& r);
std::optional<NcclCancelRequest> decodeNcclCancelRequest(std::string_view payload);
std::string encodeNcclCancelReply(const NcclCancelReply& r);
std::optional<NcclCancelReply> decodeNcclCancelReply(std::string_view payload);

}  // namespace fabricwatch::probes::nccl
