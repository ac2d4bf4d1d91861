#include "exporter/one_shot_heap.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace fabricwatch::exporter {

void prepareOneShotHeap(size_t bytes) {
  constexpr uintptr_t kHuge = 2 << 20;
  constexpr int kCollapse = 25;  // MADV_COLLAPSE, which glibc 2.36's headers lack
  auto cur = reinterpret_cast<uintptr_t>(sbrk(0));
  uintptr_t from = (cur + kHuge - 1) & ~(kHuge - 1);
  // The break moves up to the next 2 MiB boundary by hand: glibc's malloc tolerates a foreign
  // sbrk() and starts its next growth there, so that what it allocates from then on lies in
  // whole huge pages. The gap is address space only: nothing touches it.
  if (from > cur && sbrk(static_cast<intptr_t>(from - cur)) == reinterpret_cast<void*>(-1)) return;
  // Never trimmed: what the heap grows to stays (and stays backed by huge pages).
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(bytes * 4));
  // The next growth adds `bytes` beyond what it was asked for.
  mallopt(M_TOP_PAD, static_cast<int>(bytes));
  // Blocks below any mmap threshold (glibc's default is 128 KiB) until malloc grows the heap
  // for one: what is left at its top is a few of them. volatile: a malloc() freed unused may
  // be left out by the compiler.
  void* volatile blocks[16] = {};
  for (auto& b : blocks) {
    b = std::malloc(64 << 10);
    if (reinterpret_cast<uintptr_t>(sbrk(0)) > from) break;
  }
  for (auto& b : blocks) std::free(b);
  mallopt(M_TOP_PAD, 128 << 10);  // glibc's default again
  uintptr_t to = reinterpret_cast<uintptr_t>(sbrk(0)) & ~(kHuge - 1);
  if (to <= from) return;
  madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
  // malloc wrote its chunk headers into the first 2 MiB before the advice, so that range is
  // mapped with small pages already: collapsed into a huge page now (Linux 6.1; an older
  // kernel says EINVAL and the range keeps its small pages).
  madvise(reinterpret_cast<void*>(from), kHuge, kCollapse);
}

}  // namespace fabricwatch::exporter
