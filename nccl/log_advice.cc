// The words of the verdict: for each thing an NCCL log can show, what it means and what to do,
// fitted to the hardware (InfiniBand, RoCE, EFA, sockets) and the era of the log.
#include "nccl/log_advice.h"

#include <algorithm>

#include "nccl/log_text.h"

namespace fabricwatch::nccl {
namespace {

using namespace text;

std::string str(sv s) { return std::string(s); }

std::string env(const LogSummary& s, const std::string& name) {
  auto it = s.env.find(name);
  return it == s.env.end() ? "" : it->second;
}

// A GID a RoCE v2 packet can be routed to: not empty, not link-local fe80::, not all zero.
bool routableGid(const std::string& g) {
  if (g.empty() || g == "::" || g == "::ffff:" || startsWith(lower(g), "fe80")) return false;
  return g.find_first_not_of(":0") != std::string::npos;
}

struct StatusInfo {
  int status;
  const char* name;
  const char* meaning;
  const char* advice;
};

// Every ibv_wc_status NCCL can print, with what it means for NCCL and what to do.
constexpr StatusInfo kStatuses[] = {
    {1, "IBV_WC_LOC_LEN_ERR", "local length error",
     "a message arrived that is longer than the buffer posted for it: the two ranks disagree on "
     "the protocol (different NCCL or plugin versions) or the ports' MTUs differ: run the same "
     "NCCL everywhere and give both ports the same MTU"},
    {2, "IBV_WC_LOC_QP_OP_ERR", "local queue-pair operation error",
     "the NIC rejected a work request NCCL posted (too many scatter entries, inline data too "
     "large): an NCCL/plugin version mismatch or a driver bug; update the plugin to match NCCL"},
    {3, "IBV_WC_LOC_EEC_OP_ERR", "local EE context error", "a driver or firmware fault"},
    {4, "IBV_WC_LOC_PROT_ERR", "local protection error",
     "the NIC was refused access to a local buffer NCCL registered, almost always GPU memory: "
     "the classic GPUDirect RDMA failure"},
    {5, "IBV_WC_WR_FLUSH_ERR", "work request flushed",
     "the queue pair was already in error, so this completion is a consequence of an earlier "
     "failure on it (the first completion error, or the peer going away), not a cause"},
    {6, "IBV_WC_MW_BIND_ERR", "memory window bind error", "a driver fault"},
    {7, "IBV_WC_BAD_RESP_ERR", "bad response",
     "the peer answered with an unexpected transport opcode: a faulty NIC, switch or firmware on "
     "the path"},
    {8, "IBV_WC_LOC_ACCESS_ERR", "local access error",
     "the NIC could not access a local buffer with the rights it needed: the memory registration "
     "(GPUDirect RDMA for GPU memory) is broken"},
    {9, "IBV_WC_REM_INV_REQ_ERR", "remote invalid request",
     "the peer rejected the request (too long for its buffer, an opcode it does not accept): the "
     "ranks run different NCCL or plugin versions, or the MTUs differ"},
    {10, "IBV_WC_REM_ACCESS_ERR", "remote access error",
     "the peer refused an RDMA write into its memory: its registration (often its GPUDirect "
     "RDMA) is broken, or it freed the buffer because it aborted: read the peer's log"},
    {11, "IBV_WC_REM_OP_ERR", "remote operation error",
     "the peer could not complete the operation on its side: read the peer's log"},
    {12, "IBV_WC_RETRY_EXC_ERR", "retry exceeded",
     "the NIC got no acknowledgement from the peer after NCCL_IB_RETRY_CNT retries of "
     "NCCL_IB_TIMEOUT each"},
    {13, "IBV_WC_RNR_RETRY_EXC_ERR", "receiver-not-ready retries exceeded",
     "the peer had no receive posted in time: it is stuck or gone"},
    {14, "IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation", "a driver fault"},
    {15, "IBV_WC_REM_INV_RD_REQ_ERR", "remote invalid RD request", "a driver fault on the peer"},
    {16, "IBV_WC_REM_ABORT_ERR", "remote aborted", "the peer aborted the operation"},
    {17, "IBV_WC_INV_EECN_ERR", "invalid EE context number", "a driver fault"},
    {18, "IBV_WC_INV_EEC_STATE_ERR", "invalid EE context state", "a driver fault"},
    {19, "IBV_WC_FATAL_ERR", "fatal error",
     "the NIC hit a fatal error: look for mlx5 health or firmware errors in dmesg; the NIC needs "
     "a reset or a replacement"},
    {20, "IBV_WC_RESP_TIMEOUT_ERR", "response timeout",
     "the peer did not respond in time: check the peer and the path"},
    {21, "IBV_WC_GENERAL_ERR", "general error", "look at dmesg and the NIC firmware"},
};

const StatusInfo* statusInfo(int status) {
  for (const auto& i : kStatuses)
    if (i.status == status) return &i;
  return nullptr;
}

std::string gdrCauses(const AdviceContext& ctx) {
  std::string peer = ctx.eraBefore(2, 13)
                         ? "the peer-memory module is loaded (nv_peer_mem; nvidia_peermem from "
                           "driver 470 on)"
                         : "the peer-memory path works (nvidia_peermem loaded and matching the "
                           "driver, or DMA-BUF)";
  return "Check that " + peer +
         ", that PCIe ACS is disabled on the switches between GPU and NIC (ACS sends their "
         "peer-to-peer traffic through the root complex), and that the IOMMU is off or in "
         "passthrough (iommu=pt); with NCCL_NET_GDR_LEVEL=LOC (no GPUDirect RDMA) the error goes "
         "away if this is the cause";
}

Problem make(const char* severity, const std::string& code, std::string message,
             std::string evidence, uint64_t line) {
  return Problem{severity, code, std::move(message), std::move(evidence), line};
}

std::string ibvCallAdvice(const Finding& f) {
  const std::string& t = f.text;
  if (contains(t, "timed out"))
    return "an RDMA verbs call timed out (ETIMEDOUT) moving the queue pair to ready-to-receive "
           "(RTR): the local RoCE NIC could not reach the remote GID at all. On rail-optimised "
           "fabrics a NIC reaches only the same rail on other nodes: set NCCL_CROSS_NIC=0; "
           "otherwise check NCCL_IB_GID_INDEX, the routes between the RoCE subnets and that the "
           "remote port is up";
  if (contains(t, "unreachable"))
    return "no route from the GID NCCL uses to the peer's (ENETUNREACH): NCCL_IB_GID_INDEX "
           "selects a GID whose address has no route to the peer (a link-local fe80:: GID, an "
           "IPv6 GID where only IPv4 is routed), or the ports sit in subnets or VLANs that are not "
           "routed to each other";
  if (contains(t, "Invalid argument"))
    return "the NIC rejected the queue-pair attributes NCCL set (EINVAL): NCCL_IB_GID_INDEX names "
           "no valid RoCE v2 GID of this port, the MTU does not fit the port, the port is down, "
           "or NCCL_IB_HCA takes in a port of another link layer";
  if (contains(t, "No such device"))
    return "NCCL_IB_GID_INDEX points to a GID entry this port does not have (pods or hosts with "
           "different GID tables): set it per host, or leave it unset for NCCL to choose";
  if (contains(t, "Cannot allocate memory") || contains(t, "ibv_create") ||
      contains(t, "ibv_alloc"))
    return "the NIC ran out of a resource NCCL asked for: raise the locked-memory limit (ulimit -l "
           "unlimited, LimitMEMLOCK in the container runtime) and check the NIC's queue-pair "
           "limits";
  if (contains(t, "ibv_reg") || contains(t, "reg_mr") || contains(t, "dmabuf"))
    return "registering memory with the NIC failed: for GPU memory that is GPUDirect RDMA "
           "(nvidia_peermem or DMA-BUF), for host memory the locked-memory limit (ulimit -l)";
  return "an RDMA verbs call failed, so NCCL could not connect over the fabric: check "
         "NCCL_IB_HCA (ports that are up), NCCL_IB_GID_INDEX on RoCE and that the NICs can reach "
         "each other";
}

std::string socketInterfaceAdvice(const Finding& f, const AdviceContext& ctx) {
  std::string ifname = env(ctx.s, "NCCL_SOCKET_IFNAME");
  if (!ifname.empty() &&
      (contains(f.text, "neither AF_INET") || contains(f.text, "no socket interface found")))
    return "NCCL_SOCKET_IFNAME=" + ifname +
           " matches no interface with an address on this host, so NCCL has no bootstrap "
           "address: name an interface that exists on every node (ip -br addr), a prefix (eth), "
           "or a list";
  if (contains(f.text, "Address family") || ctx.s.oob_empty)
    return "NCCL could not create a socket of the address family it needs: the interface it "
           "picked has no address" +
           std::string(ctx.s.oob_empty ? " (NCCL printed an empty OOB interface)" : "") +
           " or only the other family (IPv4/IPv6): set NCCL_SOCKET_IFNAME to an interface with "
           "an address, and NCCL_SOCKET_FAMILY if needed";
  return "NCCL found no usable network interface (it skips lo and docker*): set "
         "NCCL_SOCKET_IFNAME to the interface the nodes reach each other on";
}

std::string ofiInitAdvice(const Finding& f, const AdviceContext& ctx) {
  std::string lib = ctx.eraBefore(2, 19)
                        ? "the libfabric and aws-ofi-nccl of the EFA installer"
                        : "a recent EFA installer's libfabric (1.22 or later) with aws-ofi-nccl";
  if (contains(f.text, "Couldn't open AV"))
    return "aws-ofi-nccl could not open its address vector (the table of peer addresses): the "
           "EFA driver and libfabric do not match, or the instance's EFA resources are used up; "
           "use " +
           lib;
  return "aws-ofi-nccl failed to set up its endpoints, so NCCL cannot use the OFI network: check "
         "that the EFA devices are in the container (/dev/infiniband/uverbs*), FI_PROVIDER, and "
         "use " +
         lib;
}

}  // namespace

std::string evidenceAt(uint64_t line, uint64_t count, sv text) {
  std::string n = count > 1 ? " (" + std::to_string(count) + " lines)" : "";
  return "line " + std::to_string(line) + n + ": " + std::string(text);
}

std::string ibStatusName(int status) {
  const StatusInfo* i = statusInfo(status);
  return i ? i->name : "status " + std::to_string(status);
}

Problem completionProblem(const Completion& c, const AdviceContext& ctx, bool others) {
  const StatusInfo* info = statusInfo(c.status);
  std::string head = "NET/IB completion error " + std::to_string(c.status) + " (" +
                     (info ? std::string(info->name) + ", " + info->meaning : "unknown status") +
                     ")" + (c.direction.empty() ? "" : " on a " + c.direction) +
                     (c.peer.empty() ? "" : " with peer " + c.peer) +
                     (c.hca.empty() ? "" : " on " + c.hca) + ": ";
  std::string ev = evidenceAt(c.line, c.count, c.text);
  if (c.vendor_err >= 0) ev += " (vendor syndrome " + std::to_string(c.vendor_err) + ")";
  if (c.status == 5)
    return make(others ? "info" : "critical", "ib_flushed",
                head + info->advice + (others ? "" : "; the failure itself is on the peer"), ev,
                c.line);
  if (c.status == 4)
    return make("critical", "ib_local_protection", head + info->advice + ". " + gdrCauses(ctx), ev,
                c.line);
  if (c.status == 12) {
    std::string why = head + info->advice + ". ";
    bool routable = routableGid(c.local_gid) && routableGid(c.remote_gid);
    std::string lossy =
        "the fabric drops packets between them (PFC/ECN on RoCE, a flapping link or bad "
        "optics, congestion) or the peer node died: check the port error counters of both ends "
        "(symbol errors, link downs) and run ib_write_bw between the two hosts";
    bool local_ll = startsWith(lower(c.local_gid), "fe80");
    bool remote_ll = startsWith(lower(c.remote_gid), "fe80");
    if (routable) {
      why += "Both GIDs are routable (" + c.local_gid + " to " + c.remote_gid +
             "), so it is not the GID choice: " + lossy;
    } else if (local_ll || remote_ll) {
      why += std::string("The ") + (local_ll ? "local" : "remote") + " GID " +
             (local_ll ? c.local_gid : c.remote_gid) +
             " is link-local (fe80::), which RoCE v2 cannot route between hosts: the GID index "
             "on " +
             (local_ll ? "this node" : "the peer's node") +
             " is wrong: set NCCL_IB_GID_INDEX there to the RoCE v2 GID of a routable address "
             "(show_gids), or leave it unset for NCCL 2.19+ to pick one";
    } else if (c.after_progress) {
      why += "Traffic flowed before it, so the path worked: now " + lossy;
    } else {
      why +=
          "At the first transfer it means the NICs cannot reach each other: on RoCE "
          "NCCL_IB_GID_INDEX must select the RoCE v2 GID of a routed address (show_gids) and the "
          "VLANs and routes must join the ports; on InfiniBand check the partitions and the "
          "subnet manager. Later in a run it means " +
          lossy;
    }
    return make("critical", "ib_retry_exceeded", why, ev, c.line);
  }
  std::string code = info ? "ib_" + lower(str(info->name).substr(7)) : "ib_completion";
  return make("critical", code, head + (info ? info->advice : "look at dmesg on both hosts"), ev,
              c.line);
}

Problem watchdogProblem(const Watchdog& w) {
  std::string ops;
  for (const auto& o : w.ops) ops += (ops.empty() ? "" : ", ") + o;
  std::string ranks;
  for (int64_t r : w.ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  std::string who = w.ranks.empty()       ? ""
                    : w.ranks.size() == 1 ? " on rank " + ranks
                                          : " on ranks " + ranks;
  std::string seq = w.seq_min < 0            ? ""
                    : w.seq_min == w.seq_max ? " (SeqNum " + std::to_string(w.seq_min) + ")"
                                             : " (SeqNum " + std::to_string(w.seq_min) + " to " +
                                                   std::to_string(w.seq_max) + ")";
  std::string limit =
      w.timeout_ms > 0 ? " within " + std::to_string(w.timeout_ms / 1000) + " s" : "";
  std::string msg = "PyTorch's NCCL watchdog timed out: " + (ops.empty() ? "a collective" : ops) +
                    seq + " did not complete" + who + limit +
                    ". That is a hang, not a slow network: one rank never joined this collective "
                    "(it crashed, is stuck outside NCCL, or called collectives in a different "
                    "order: a desync), or NCCL's traffic stalled.";
  if (w.seq_min >= 0 && w.seq_max > w.seq_min)
    msg += " The SeqNums differ, so the ranks are not all in the same collective.";
  msg +=
      " Find the rank that is behind (TORCH_NCCL_DESYNC_DEBUG=1, the flight recorder with "
      "TORCH_NCCL_TRACE_BUFFER_SIZE) and read its NCCL_DEBUG=INFO log";
  return make("critical", "pytorch_watchdog", msg, evidenceAt(w.line, w.count, w.text), w.line);
}

Problem frameworkProblem(const FrameworkError& e) {
  std::string who = e.reporter.empty() ? "the framework" : e.reporter;
  std::string what = e.nccl_error.empty() ? "an NCCL error" : e.nccl_error;
  std::string msg = who + " reports " + what + ": ";
  if (e.nccl_error == "ncclRemoteError")
    msg +=
        "another rank failed first or the network between them broke; this rank only sees "
        "the consequence: find the rank whose log has the first error";
  else if (e.nccl_error == "ncclSystemError")
    msg +=
        "a system or library call failed inside NCCL (a socket, ibverbs, shared memory); "
        "NCCL's WARN line (NCCL_DEBUG=WARN) names it";
  else if (e.nccl_error == "ncclInternalError")
    msg +=
        "an internal check failed, usually a set-up mismatch (NCCL or plugin versions that "
        "differ between ranks, an interface without an address)";
  else if (e.nccl_error == "ncclInvalidUsage" || e.nccl_error == "ncclInvalidArgument")
    msg +=
        "NCCL rejected how it was called (ranks passing different counts, a destroyed "
        "communicator) or its configuration (NCCL_SOCKET_IFNAME matching nothing)";
  else if (e.nccl_error == "ncclUnhandledCudaError")
    msg +=
        "a CUDA call failed (a GPU fault with an Xid in dmesg, out of memory, a driver older "
        "than the CUDA NCCL was built for)";
  else
    msg += "run with NCCL_DEBUG=INFO to see NCCL's own error";
  std::string ev = evidenceAt(e.line, e.count, e.text);
  if (!e.last_error.empty())
    ev += "; line " + std::to_string(e.last_error_line) + ": Last error: " + e.last_error;
  return make("critical", "framework_error", msg, ev, e.line);
}

Problem gdrProblem(const AdviceContext& ctx, const std::string& gdr) {
  const LogSummary& s = ctx.s;
  uint64_t line = s.gdr_disabled_line ? s.gdr_disabled_line : s.first_plain_net_channel_line;
  std::string ev;
  if (line == s.gdr_disabled_line && line != 0) {
    std::string hcas;
    for (const auto& d : s.gdr_disabled) hcas += (hcas.empty() ? "" : ", ") + d;
    ev = "line " + std::to_string(line) + ": GPU Direct RDMA Disabled for " + hcas;
  } else if (line != 0) {
    ev = "line " + std::to_string(line) + ": a NET channel without /GDRDMA";
  }
  if (s.net_channels > 0)
    ev += (ev.empty() ? "" : "; ") + std::to_string(s.net_channels_gdr) + " of " +
          std::to_string(s.net_channels) + " NET connections with /GDRDMA";
  std::string head = "GPUDirect RDMA was " + gdr + ": NIC traffic is staged through host memory";
  if (ctx.transport == "efa" || ctx.transport == "ofi") {
    if (ctx.eraBefore(2, 7))
      return make("info", "gdr_off",
                  head +
                      ", as on all EFA of that generation (p3dn, before "
                      "NCCL 2.7 and p4d): nothing to fix",
                  ev, line);
    return make("warning", "gdr_off",
                head +
                    ". EFA on p4d and later supports it: set FI_EFA_USE_DEVICE_RDMA=1 (older "
                    "libfabric and aws-ofi-nccl need it; newer ones turn it on themselves) and "
                    "use an aws-ofi-nccl that knows the instance type",
                ev, line);
  }
  if (startsWith(s.gdr_disabled_reason, "distance"))
    return make("warning", "gdr_off",
                head + ": NCCL judged the GPU and the NIC too far apart (" + s.gdr_disabled_reason +
                    ": their PCIe path crosses the CPU). Give each GPU the NIC next to it, or "
                    "raise NCCL_NET_GDR_LEVEL (SYS) where the platform does peer-to-peer across "
                    "the CPU well",
                ev, line);
  std::string fix = ctx.eraBefore(2, 13)
                        ? ". Load the peer-memory module (nv_peer_mem; nvidia_peermem from driver "
                          "470 on)"
                        : ". Load nvidia_peermem (matching the driver; NCCL looks for "
                          "/sys/kernel/mm/memory_peers/nv_mem/version) or use DMA-BUF (the open "
                          "GPU kernel modules on Linux 5.12 or later)";
  return make("warning", "gdr_off",
              head + fix +
                  ", keep GPUs and NICs under one PCIe switch, and check "
                  "NCCL_NET_GDR_LEVEL",
              ev, line);
}

Tier tierOf(const std::string& code) {
  if (code == "socket_remote" || code == "ib_flushed") return Tier::kPeerCause;
  if (code == "proxy_failed" || code == "nccl_trace" || code == "framework_error" ||
      code == "ofi_init_failed")
    return Tier::kConsequence;
  return Tier::kCause;
}

Problem findingProblem(const Finding& f, const AdviceContext& ctx) {
  std::string ev = evidenceAt(f.line, f.count, f.text);
  if (!f.trace.empty()) ev += "; line " + std::to_string(f.trace_line) + ": " + f.trace;
  const std::string& k = f.kind;
  auto p = [&](const char* severity, const std::string& msg) {
    return make(severity, k, msg, ev, f.line);
  };
  if (k == "ibv_call") return p("critical", ibvCallAdvice(f));
  if (k == "ib_async_event") {
    if (contains(f.text, "GID table change"))
      return p("critical",
               "the port's GID table changed while the job ran (an address on the RoCE "
               "interface was added or removed: DHCP, NetworkManager, a link flap), so queue "
               "pairs built on the old GID lose their path: keep the interface's addresses "
               "static while jobs run");
    return p("critical",
             "the NIC reported an asynchronous event (a port going down, a fatal NIC error): "
             "check the link and dmesg on this host");
  }
  if (k == "ib_gid_type")
    return p("critical",
             "NCCL could not read the RoCE version of the GID it picked: that GID index holds no "
             "GID here (pods with different GID tables, macvlan interfaces): set "
             "NCCL_IB_GID_INDEX per pod, or leave it unset for NCCL to choose");
  if (k == "efa_not_usable")
    return p("critical",
             "aws-ofi-nccl found no usable EFA device (libfabric's efa provider returned "
             "nothing): the EFA devices are not in the container (pass /dev/infiniband/uverbs*, "
             "vpc.amazonaws.com/efa on Kubernetes), the instance type has no EFA, or libfabric "
             "lacks the efa provider. Between nodes NCCL then falls back to TCP sockets; on a "
             "single node it does not matter");
  if (k == "ofi_request")
    return p("critical",
             "a libfabric request through aws-ofi-nccl failed: the peer endpoint could not be "
             "reached (UNDELIVERABLE, EHOSTUNREACH): the peer's process exited or its node left "
             "the fabric, or on EFA the security group does not allow all traffic between the "
             "nodes: read the peer's log first");
  if (k == "ofi_rails")
    return p("critical",
             "the two ends of an aws-ofi-nccl connection disagree on how many rails (NICs) a "
             "device has: the nodes group their EFA devices differently, which NCCL 2.28's GIN "
             "proxy does not accept: set OFI_NCCL_FORCE_NUM_RAILS to the same value on every "
             "node, or run without GIN (NCCL_GIN_ENABLE=0)");
  if (k == "ofi_mr")
    return p("critical",
             "aws-ofi-nccl could not register GPU memory with the NIC: with NCCL 2.19 or later "
             "use EFA installer 1.29 or later, or set FI_EFA_SET_CUDA_SYNC_MEMOPS=0");
  if (k == "ofi_init") return p("critical", ofiInitAdvice(f, ctx));
  if (k == "ofi_init_failed")
    return p("critical",
             "aws-ofi-nccl did not initialise, so NCCL falls back to its own transports (TCP "
             "sockets between nodes): the line before it says why");
  if (k == "ofi_warn") return p("warning", "aws-ofi-nccl warned");
  if (k == "cuda") return p("critical", "a CUDA call failed inside NCCL");
  if (k == "symbol_version")
    return p(f.severity.c_str(),
             "a library version mismatch: the container's libraries do not match the providers "
             "loaded with them (rdma-core's IBVERBS_PRIVATE_*, libefa's EFA_*, glibc); use the "
             "rdma-core/EFA stack that matches the host, or the one the platform mounts");
  if (k == "ib_no_device")
    return p(ctx.single_node ? "info" : "warning",
             ctx.single_node ? "NCCL found no RDMA device: fine on a single node"
                             : "NCCL found no usable RDMA device and could only use sockets");
  if (k == "ibverbs_missing")
    return p(ctx.single_node ? "info" : "warning",
             ctx.single_node
                 ? "libibverbs could not be loaded: no RDMA NIC will be used, and one node needs "
                   "none"
                 : "libibverbs could not be loaded: NCCL cannot use InfiniBand or RoCE");
  if (k == "ibverbs_driver")
    return p("info", "libibverbs could not load a provider (harmless unless it is the NIC's own)");
  if (k == "pci_topology")
    return p("critical",
             "NCCL could not find a GPU's or NIC's PCI device in /sys, so it cannot build its "
             "topology: under WSL2, in a VM or a container without the host's /sys this fails; "
             "give the container /sys, or NCCL_TOPO_FILE");
  if (k == "collnet_sharp")
    return p("critical",
             "CollNet over IB SHARP failed: the SHARP group could not be created (a streaming "
             "aggregation tree that could not be locked: another job holds the SHARP trees, or "
             "the aggregation manager refused the quota): check sharp_am, or run without it "
             "(NCCL_COLLNET_ENABLE=0, or SHARP_COLL_ENABLE_SAT=0)");
  if (k == "socket_interface") return p("critical", socketInterfaceAdvice(f, ctx));
  if (k == "socket_remote")
    return p("critical",
             "a peer closed or reset the connection: its process exited (a crash or an abort on "
             "that rank) or its node lost the network; the error to fix is in that peer's log, "
             "not in this remote end's");
  if (k == "proxy_failed")
    return p("critical",
             std::string("a rank lost the connection to an NCCL proxy thread: the proxy's process "
                         "exited or its socket broke") +
                 (contains(f.trace, "p2p.cc")
                      ? "; it happened setting up the P2P transport (transport/p2p.cc), where the "
                        "container's IPC limits (--ipc=host, /dev/shm size) are the usual suspect"
                      : ""));
  if (k == "shm")
    return p("critical",
             "NCCL could not create its shared-memory segment: /dev/shm in the container is too "
             "small (Docker's default is 64 MB): run with --shm-size or --ipc=host");
  return p(f.severity == "critical" ? "critical" : "warning", "NCCL warned");
}

}  // namespace fabricwatch::nccl
