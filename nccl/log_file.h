#pragma once
// Reading NCCL log files: the probe's own, and a running workload's NCCL_DEBUG_FILE, which is
// named by a hostile environment and lies in another root file system.

#include <optional>
#include <string>
#include <string_view>

namespace fabricwatch::nccl {

// The part of an open log worth parsing, bounded: the whole file up to head + tail bytes, else
// its first `head` bytes (NCCL's choices at initialisation) and its last `tail` bytes (the
// latest communicators and errors), each cut to whole lines. Non-regular files read as empty.
std::string readLogHeadTail(int fd, size_t head = 64 * 1024, size_t tail = 256 * 1024);

// NCCL_DEBUG_FILE's expansion, as NCCL's debug.cc does it: %h the host name (cut at the first
// '.', with '%' and '/' made '-'), %p the PID, %% a '%'; anything else is kept as written.
std::string expandDebugFileName(std::string_view pattern, std::string_view hostname,
                                std::string_view pid);

// Opens `path` as a process sees it: an absolute path inside the directory `root_dir` (its
// /proc/PID/root), a relative one below `cwd_dir` (its /proc/PID/cwd). Neither symlinks nor
// ".." can leave those directories (openat2 RESOLVE_IN_ROOT / RESOLVE_BENEATH; on kernels
// without openat2, paths with ".." and a final symlink are refused). Returns an fd opened
// O_RDONLY|O_NONBLOCK|O_CLOEXEC, or -1 with errno set.
int openInProcessRoot(const std::string& root_dir, const std::string& cwd_dir,
                      const std::string& path);

}  // namespace fabricwatch::nccl
