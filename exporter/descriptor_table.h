#pragma once
// The kernel's descriptor table grows by doubling (64, 128, 256, ... slots), and in a process
// with more than one thread every growth waits for an RCU grace period (fs/file.c,
// expand_fdtable: synchronize_rcu() while the table is shared): milliseconds each in a virtual
// machine. The first collection opens and keeps ~630 sysfs files on a p5 node from the sources'
// threads, so `fabricwatch check` spent 25-30 ms of its ~40 ms waiting on three growths.
// reserveDescriptorTable() grows the table once, while the process still has one thread (no
// grace period to wait for), by duplicating a descriptor onto the highest slot wanted and
// closing it again: the table never shrinks, so later opens up to there find room.

namespace fabricwatch::exporter {

// Grows the table to hold `slots` descriptors (at most the open-file limit); call it before
// the process starts a thread. Returns the slots the table has room for afterwards (0 when
// unknown).
int reserveDescriptorTable(int slots);

}  // namespace fabricwatch::exporter
