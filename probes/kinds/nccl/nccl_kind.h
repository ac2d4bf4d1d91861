#pragma once
// The nccl probe kind: NCCL between this node and one peer of the mesh, to see what NCCL
// really chooses between two nodes (IB, RoCE, EFA or TCP sockets; GPUDirect RDMA or not) and
// how fast it goes. This node's daemon starts the probe child as rank 0 of a two-rank
// communicator; the child makes NCCL's unique id and reports it at once (it needs no GPU);
// the daemon sends it with the run's shape (operation, sizes, iterations, device, time left)
// to the peer's daemon over the authenticated channel, whose responder (nccl_responder.h)
// starts its own child as rank 1 or declines, saying why. Each side's child is bounded by the
// same hard timeout; this side follows the peer's with status requests, cancels its own child
// when the peer's side ended (or the peer vanished) and cancels the peer's when its own ended
// badly, so that neither waits out its timeout for a partner that is gone.
//
// It is heavy, so: exclusive, one peer per run, every `interval / probe.interval` rounds at a
// phase drawn per node; never while this node runs another NCCL run (the heavy gate it shares
// with the local probe) or another process holds a GPU; with the node's recommended NCCL
// environment ([probes.nccl.env]). NCCL's log of this side's run is analysed: its transport
// and GPUDirect RDMA verdict is the point. Facts probes.nccl.peers[] and probes.nccl.served[],
// metrics fabricwatch_probe_nccl_*, docs/nccl.md.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "probes/kinds/nccl/heavy_gate.h"
#include "probes/kinds/nccl/nccl_messages.h"
#include "probes/kinds/nccl/probe_run.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes::nccl {

struct NcclKindOptions {
  nccl::RunSettings run;
  std::string rootfs = "/";
  std::string node_name;
  std::string secret;
  bool peers = true;  // false: probes nobody, declines every request (probes.nccl.peers)
  std::string operation = "all_reduce";
  int device = -1;  // -1: the next GPU each run (same index on both nodes, modulo their GPUs)
  uint64_t every_rounds = 180;
  std::shared_ptr<nccl::HeavyGate> gate = nccl::HeavyGate::process();
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds call_timeout{2000};  // each request to the peer
  std::chrono::milliseconds poll_interval{200};  // between status requests
  // When one side has ended and the other has not, how long the other gets to end by itself
  // (and report its own reason) before it is cancelled.
  std::chrono::milliseconds side_grace{10000};
  std::chrono::milliseconds serve_min_interval{60000};  // NcclResponderOptions
};

// One peer run, as this node saw it.
struct NcclPeerResult : ProbeResult {
  std::string state;  // ok | skipped | unavailable | failed | timeout | crashed | declined |
                      // unreachable | lost
  std::string reason;
  std::string operation;
  std::chrono::system_clock::time_point started;
  double seconds = 0;
  nccl::RunOutcome self;                     // this node's rank 0 (state "" when it never started)
  bool asked = false;                        // the peer was asked to join
  std::optional<NcclSide> peer;              // the peer's side, as it last reported it
  std::string id;                            // the unique id's fingerprint
  std::vector<nccl::GpuHolder> gpu_holders;  // skipped: who holds this node's GPUs
  std::map<std::string, std::string> env;
};

// The state codes of fabricwatch_probe_nccl_peer_state.
int ncclPeerStateCode(const std::string& state);

std::shared_ptr<ProbeKind> makeNcclKind(NcclKindOptions opts);
// From [probes.nccl] (and probe.interval for its every_rounds); off by default.
KindRegistration ncclKindRegistration();

}  // namespace fabricwatch::probes::nccl
