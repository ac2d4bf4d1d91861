#pragma once
// A host root for the GPU-holder scan and what yields to it (tests/gpu, the NCCL probe).

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {

// A host root whose /proc has a training process holding GPU 3, a monitoring daemon holding
// GPU 0, and a process with only a socket open.
inline TempDir hostWithGpuUsers() {
  TempDir root;
  auto proc = [&](const std::string& pid, const std::string& comm,
                  std::vector<std::pair<std::string, std::string>> fds) {
    root.write("proc/" + pid + "/comm", comm + "\n");
    std::filesystem::create_directories(root.path() + "/proc/" + pid + "/fd");
    for (auto& [fd, target] : fds)
      std::filesystem::create_symlink(target, root.path() + "/proc/" + pid + "/fd/" + fd);
  };
  // The kernel keeps 15 bytes of a name: nvidia-persistenced's comm.
  proc("1200", "nvidia-persiste", {{"3", "/dev/nvidiactl"}, {"4", "/dev/nvidia0"}});
  proc("4242", "python3", {{"0", "/dev/null"}, {"17", "/dev/nvidia-uvm"}, {"18", "/dev/nvidia3"}});
  proc("5000", "sshd", {{"3", "socket:[12345]"}});
  return root;
}

}  // namespace fabricwatch::testing
