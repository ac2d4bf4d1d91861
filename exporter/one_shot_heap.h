#pragma once
// The heap of a one-shot command (`check`, `facts`). Such a command's heap grows to about
// 1.5 MiB on a p5 node (the facts document, the compiled packs), and every 4 KiB page of it
// costs a page fault the first time it is touched: about 400 faults, and in a virtual machine
// (PVM guests, where a fault takes ~11 us of CPU) that was a fifth of `fabricwatch check`'s
// CPU. prepareOneShotHeap() grows the heap once, by `bytes`, and asks for transparent huge
// pages over it (MADV_HUGEPAGE), so that it faults in 2 MiB at a time where the kernel allows
// it (transparent_hugepage "madvise" or "always"); elsewhere nothing changes. Memory is not
// given back to the kernel afterwards: the process is short-lived. The daemon never calls it
// (its resident memory counts).

#include <cstddef>

namespace fabricwatch::exporter {

void prepareOneShotHeap(size_t bytes);

}  // namespace fabricwatch::exporter
