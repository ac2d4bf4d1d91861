#pragma once
// Network interfaces from /sys/class/net (net.interfaces): operstate, MTU, speed, MAC, IPv4
// (netlink) and IPv6 (/proc/net/if_inet6) addresses and, for hardware interfaces, the PCI
// function, ECN per priority where the driver shows it (mlx5's ecn/roce_np, ecn/roce_rp) and
// PFC per priority from the kernel's DCB netlink interface (dcb_netlink.h) where it answers;
// and whether fabricwatch shares the host's network namespace (net.host_network),
// without which the addresses it could see would be its own pod's, so none are reported.

#include "core/source.h"

namespace fabricwatch::facts {

class NetSource : public core::Source {
 public:
  std::string_view name() const override { return "net"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  // Metrics cover the interfaces that carry the fabric's traffic: those backed by a PCI
  // function, bonds, those an effective NCCL_SOCKET_IFNAME names and the net devices of RDMA
  // ports, so that per-pod veth interfaces never multiply series; the facts keep every one.
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
};

}  // namespace fabricwatch::facts
