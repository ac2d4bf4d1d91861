#include "exporter/privileges.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace fabricwatch::exporter {
namespace {

struct Caps {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  bool has(int cap, uint32_t __user_cap_data_struct::*set) const {
    return (data[cap / 32].*set >> (cap % 32)) & 1u;
  }
  void set(int cap, uint32_t __user_cap_data_struct::*set) {
    data[cap / 32].*set |= 1u << (cap % 32);
  }
};

int lastCap() {
  std::ifstream in("/proc/sys/kernel/cap_last_cap");
  int n = 0;
  if (in >> n && n > 0 && n < 64) return n;
  return CAP_LAST_CAP;
}

}  // namespace

std::string capabilityName(int cap) {
  switch (cap) {
    case CAP_IPC_LOCK:
      return "CAP_IPC_LOCK";
    case CAP_SYS_PTRACE:
      return "CAP_SYS_PTRACE";
    case CAP_DAC_READ_SEARCH:
      return "CAP_DAC_READ_SEARCH";
    case CAP_DAC_OVERRIDE:
      return "CAP_DAC_OVERRIDE";
    case CAP_CHOWN:
      return "CAP_CHOWN";
    case CAP_FOWNER:
      return "CAP_FOWNER";
    case CAP_KILL:
      return "CAP_KILL";
    case CAP_SETUID:
      return "CAP_SETUID";
    case CAP_SETGID:
      return "CAP_SETGID";
    case CAP_SETPCAP:
      return "CAP_SETPCAP";
    case CAP_NET_BIND_SERVICE:
      return "CAP_NET_BIND_SERVICE";
    case CAP_NET_ADMIN:
      return "CAP_NET_ADMIN";
    case CAP_NET_RAW:
      return "CAP_NET_RAW";
    case CAP_SYS_ADMIN:
      return "CAP_SYS_ADMIN";
    case CAP_SYS_MODULE:
      return "CAP_SYS_MODULE";
    case CAP_SYS_RESOURCE:
      return "CAP_SYS_RESOURCE";
    default:
      return "cap_" + std::to_string(cap);
  }
}

std::vector<int> neededCapabilities(const config::Config& cfg) {
  std::vector<int> keep = {CAP_IPC_LOCK};
  if (cfg.sourceConfig("workloads").enabled) {
    keep.push_back(CAP_SYS_PTRACE);
    keep.push_back(CAP_DAC_READ_SEARCH);
  }
  return keep;
}

PrivilegeReport dropPrivileges(const std::vector<int>& keep) {
  PrivilegeReport r;
  auto note = [&](const std::string& what) {
    if (r.error.empty()) r.error = what + ": " + std::strerror(errno);
  };
  r.no_new_privs = ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
  if (!r.no_new_privs) note("PR_SET_NO_NEW_PRIVS");
  Caps now;
  if (::syscall(SYS_capget, &now.header, now.data) != 0) {
    note("capget");
    return r;
  }
  auto kept = [&](int cap) { return std::find(keep.begin(), keep.end(), cap) != keep.end(); };
  const int last = lastCap();
  // The bounding set first: dropping from it needs CAP_SETPCAP, which goes with the rest below.
  bool may_drop_bounding = now.has(CAP_SETPCAP, &__user_cap_data_struct::effective);
  Caps next;
  for (int cap = 0; cap <= last; ++cap) {
    bool held = now.has(cap, &__user_cap_data_struct::permitted);
    if (kept(cap)) {
      if (held) {
        next.set(cap, &__user_cap_data_struct::permitted);
        next.set(cap, &__user_cap_data_struct::effective);
        r.kept.push_back(capabilityName(cap));
      }
      continue;
    }
    if (held) r.dropped.push_back(capabilityName(cap));
    if (may_drop_bounding && ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
        ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
      note("PR_CAPBSET_DROP " + capabilityName(cap));
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    note("PR_CAP_AMBIENT_CLEAR_ALL");
  if (::syscall(SYS_capset, &next.header, next.data) != 0) note("capset");
  return r;
}

}  // namespace fabricwatch::exporter
