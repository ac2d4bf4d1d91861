#pragma once
// The body of the hidden subcommand `fabricwatch __nccl-probe`, which the NCCL probe starts
// (through /proc/self/exe) for each run: it reads a ChildRequest from standard input, loads
// libcudart and libnccl with dlopen, runs the all-reduce and writes a ChildResult to descriptor
// 3 (standard output when descriptor 3 is not open, for a run by hand). NCCL logs to the file
// its environment names (NCCL_DEBUG_FILE). Returns the process exit code.

namespace fabricwatch::probes::nccl {

int runProbeChild();

}  // namespace fabricwatch::probes::nccl
