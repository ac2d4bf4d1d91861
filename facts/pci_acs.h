#pragma once
// ACS (Access Control Services) of the PCIe bridges between GPUs and the NICs beside them, read
// from each bridge's configuration space on every collection (setpci changes it at run time).
// Request or Completion Redirect, or Upstream Forwarding, on a switch's downstream port sends
// GPUDirect RDMA's peer-to-peer traffic up to the root complex instead of across the switch,
// which cuts its bandwidth or hangs it (NCCL's troubleshooting guide).

#include <string>

#include "core/value.h"
#include "facts/fact_reader.h"

namespace fabricwatch::facts {

// The gpu.pci_bridges entry of the bridge `address` whose sysfs directory is `dir` (a host
// path under /sys/devices; empty when unknown): config_extended, and where that is true
// acs_capability, acs_control and acs_redirect. A config file that ends before 0x100 (what a
// reader without CAP_SYS_ADMIN sees: 64 bytes) gives config_extended false and nothing else:
// unknown, not clean. Without a config file only the address.
core::Value readBridgeAcs(FactReader& r, const std::string& address, const std::string& dir);

// The directory of `bridge` on a function's device path ("/sys/devices/pci0000:10/0000:10:01.0/
// 0000:11:00.0/..."), or "" when the path does not pass through it.
std::string bridgeDir(const std::string& device_path, const std::string& bridge);

}  // namespace fabricwatch::facts
