#pragma once
// `fabricwatch serve` keeps only the capabilities its configuration needs and gives up the
// rest at start, before any thread exists (capabilities are per thread; threads and the NCCL
// probe's child inherit what the main thread holds then):
//   CAP_IPC_LOCK         registered (pinned) memory past RLIMIT_MEMLOCK for the fabric and NCCL
//                        probes (the DaemonSet's one capability);
//   CAP_SYS_PTRACE,      the workloads source: /proc/PID/{environ,maps,root} of processes that
//   CAP_DAC_READ_SEARCH  hold capabilities fabricwatch lacks or run as another user (only with
//                        the workloads source on; components/workloads adds them).
// Every other capability is dropped from the effective, permitted, inheritable and ambient
// sets, and from the bounding set where the process may (CAP_SETPCAP; a container's bounding
// set is already what the pod spec granted). PR_SET_NO_NEW_PRIVS is set too, so no later
// execve (the NCCL probe's child is fabricwatch itself) gains anything back. No libcap: two
// system calls (capget/capset) and prctl do it. docs/security.md.

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace fabricwatch::exporter {

// Capability numbers (linux/capability.h) the configuration needs.
std::vector<int> neededCapabilities(const config::Config& cfg);

struct PrivilegeReport {
  bool no_new_privs = false;
  std::vector<std::string> kept;     // held and kept ("CAP_IPC_LOCK")
  std::vector<std::string> dropped;  // held and given up
  std::string error;                 // why something could not be dropped ("" when all went)
};

// Sets PR_SET_NO_NEW_PRIVS and keeps only `keep` of the capabilities held now. Call it while
// the process has one thread.
PrivilegeReport dropPrivileges(const std::vector<int>& keep);

std::string capabilityName(int cap);

// lldpd's control socket belongs to lldpd's group (Debian: _lldpd, mode 0770), so without
// CAP_DAC_OVERRIDE, which serve gives up, only a member of that group may connect to it. Adds
// the group of the socket at `path` to the supplementary groups when it is not one of them
// yet and the process may (CAP_SETGID; call it before dropPrivileges). Returns the group's id
// when it joined it; nullopt when there was nothing to do (no socket, already a member) or it
// could not (`error` says why). A container holds no CAP_SETGID: there the pod's
// securityContext.supplementalGroups does the same (docs/topology.md).
std::optional<unsigned> joinSocketGroup(const std::string& path, std::string* error);

}  // namespace fabricwatch::exporter
