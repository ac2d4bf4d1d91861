#include "exporter/descriptor_table.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace fabricwatch::exporter {

int reserveDescriptorTable(int slots) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    slots = static_cast<int>(std::min<rlim_t>(static_cast<rlim_t>(slots), rl.rlim_cur));
  if (slots <= 0) return 0;
  int top = slots - 1;
  if (fcntl(top, F_GETFD) != -1) return slots;  // in use: the table reaches there already
  // Any descriptor will do as the source of the duplicate: one of its own, so that closed
  // stdio does not matter.
  int src = open("/", O_PATH | O_CLOEXEC);
  if (src < 0) return 0;
  bool ok = dup3(src, top, O_CLOEXEC) == top;
  if (ok) close(top);
  close(src);
  return ok ? slots : 0;
}

}  // namespace fabricwatch::exporter
