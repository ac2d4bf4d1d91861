#pragma once
// The fabric kind's payloads on the peer channel (its frame types below, 16-31). The channel
// authenticates them and binds each reply to its request; these are the bytes inside.
//   hello:   the prober names its provider; the reply carries the responder's provider,
//            fabric, endpoint name (the address to insert into an AV) and epoch (new whenever
//            the responder reopened its endpoint, so a cached name is known stale).
//   session: the prober asks the responder to take part in one measurement (pingpong.h's
//            SessionSpec) with the prober's endpoint name; the reply carries the responder's
//            epoch. A busy responder declines (the channel's declined frame).
// Endpoint names are binary (a sockaddr, an EFA GID and QPN ...), at most 253 bytes.
// Rails (rails.h): hello and session name the rail they are about (a trailing u32; absent, as
// from a prober of before rails: rail 0), and the hello reply says which rails the responder's
// node has (a mask of rails 0..63) and the rail's domain. A node that lacks the rail declines
// with kRailMissing. A node whose GPUs a job holds declines bandwidth sessions with kGpusHeld
// (latency sessions it serves on): the prober counts that as skipped, not failed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "probes/kinds/fabric/pingpong.h"
#include "probes/mesh/frame.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes::fabric {

// The kind's frame types, 16..31 (its registration's range): its endpoint's name, and sessions.
inline constexpr FrameRange kFabricFrames{16, 16};
inline constexpr FrameType kFabricHelloRequest{16};
inline constexpr FrameType kFabricHelloReply{17};
inline constexpr FrameType kFabricSessionRequest{18};
inline constexpr FrameType kFabricSessionReply{19};

// The decline of a hello or session for a rail the node does not have.
inline constexpr std::string_view kRailMissing = "rail missing";
// The decline of a bandwidth session while a job holds the node's GPUs ("gpus held: the GPUs
// are in use: python3 (pid 4242) holds /dev/nvidia3").
inline constexpr std::string_view kGpusHeld = "gpus held";

struct FabricHello {
  std::string provider;
  uint32_t rail = 0;
};

struct FabricHelloReply {
  std::string provider;
  std::string fabric;
  uint64_t epoch = 0;
  std::string name;
  uint32_t rail = 0;
  uint64_t rails = 1;  // bit i: the node has rail i
  std::string domain;  // the rail's domain on that node
};

struct FabricSessionRequest {
  fabric::SessionSpec spec;
  std::string provider;
  std::string name;  // the prober's endpoint
  uint32_t rail = 0;
};

struct FabricSessionReply {
  uint64_t epoch = 0;
};

std::string encodeFabricHello(const FabricHello& m);
std::optional<FabricHello> decodeFabricHello(std::string_view in);
std::string encodeFabricHelloReply(const FabricHelloReply& m);
std::optional<FabricHelloReply> decodeFabricHelloReply(std::string_view in);
std::string encodeFabricSessionRequest(const FabricSessionRequest& m);
std::optional<FabricSessionRequest> decodeFabricSessionRequest(std::string_view in);
std::string encodeFabricSessionReply(const FabricSessionReply& m);
std::optional<FabricSessionReply> decodeFabricSessionReply(std::string_view in);

}  // namespace fabricwatch::probes::fabric
