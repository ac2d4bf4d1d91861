#include "exporter/privileges.h"

#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

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
  // linux/capability.h, in number order (0-40); a newer kernel's extra ones print as cap_N.
  static constexpr const char* kNames[] = {
      "CAP_CHOWN",
      "CAP_DAC_OVERRIDE",
      "CAP_DAC_READ_SEARCH",
      "CAP_FOWNER",
      "CAP_FSETID",
      "CAP_KILL",
      "CAP_SETGID",
      "CAP_SETUID",
      "CAP_SETPCAP",
      "CAP_LINUX_IMMUTABLE",
      "CAP_NET_BIND_SERVICE",
      "CAP_NET_BROADCAST",
      "CAP_NET_ADMIN",
      "CAP_NET_RAW",
      "CAP_IPC_LOCK",
      "CAP_IPC_OWNER",
      "CAP_SYS_MODULE",
      "CAP_SYS_RAWIO",
      "CAP_SYS_CHROOT",
      "CAP_SYS_PTRACE",
      "CAP_SYS_PACCT",
      "CAP_SYS_ADMIN",
      "CAP_SYS_BOOT",
      "CAP_SYS_NICE",
      "CAP_SYS_RESOURCE",
      "CAP_SYS_TIME",
      "CAP_SYS_TTY_CONFIG",
      "CAP_MKNOD",
      "CAP_LEASE",
      "CAP_AUDIT_WRITE",
      "CAP_AUDIT_CONTROL",
      "CAP_SETFCAP",
      "CAP_MAC_OVERRIDE",
      "CAP_MAC_ADMIN",
      "CAP_SYSLOG",
      "CAP_WAKE_ALARM",
      "CAP_BLOCK_SUSPEND",
      "CAP_AUDIT_READ",
      "CAP_PERFMON",
      "CAP_BPF",
      "CAP_CHECKPOINT_RESTORE",
  };
  if (cap >= 0 && cap < static_cast<int>(std::size(kNames))) return kNames[cap];
  return "cap_" + std::to_string(cap);
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

std::optional<unsigned> joinSocketGroup(const std::string& path, std::string* error) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return std::nullopt;
  if (st.st_gid == ::getegid()) return std::nullopt;
  int n = ::getgroups(0, nullptr);
  if (n < 0) return std::nullopt;
  std::vector<gid_t> groups(static_cast<size_t>(n) + 1);
  n = ::getgroups(n, groups.data());
  if (n < 0) return std::nullopt;
  groups.resize(static_cast<size_t>(n));
  if (std::find(groups.begin(), groups.end(), st.st_gid) != groups.end()) return std::nullopt;
  groups.push_back(st.st_gid);
  if (::setgroups(groups.size(), groups.data()) != 0) {
    *error = "setgroups: " + std::string(std::strerror(errno));
    return std::nullopt;
  }
  return static_cast<unsigned>(st.st_gid);
}

}  // namespace fabricwatch::exporter
