#pragma once
// One RDMA device of /sys/class/infiniband, read in two parts. scan() reads what cannot change
// while the device's sysfs directory lives (its PCI function, node type, firmware, GUIDs, which
// ports, GID entries and counters it has, each port's link layer) and opens the attributes that
// do change; read() then costs one pread() per changing attribute (port state and rate, GIDs,
// counters, PCIe link). The source scans again when the directory's identity changes.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/value.h"
#include "facts/fact_reader.h"
#include "facts/kept_file.h"
#include "facts/pci.h"

namespace fabricwatch::facts {

class RdmaDevice {
 public:
  // cls: the open /sys/class/infiniband; bus: the open /sys/bus/pci/devices (may be absent from
  // a host root: the device's own device/ tells what it is).
  static RdmaDevice scan(FactReader& r, const DirReader& cls, const DirReader& bus,
                         const std::string& name, FileId id);

  // The device's facts now (an rdma.devices entry).
  core::Value read(FactReader& r);

  const FileId& id() const { return id_; }
  // False when a fixed attribute could not be read at the scan: the next collection scans
  // again, so that the error is counted each time as any other read error is, and the fact
  // appears once the file is readable.
  bool complete() const { return complete_; }

 private:
  struct Counter {
    std::string name;
    KeptFile file;
  };
  struct Gid {
    int64_t index = 0;
    KeptFile address;
    // Opened when the entry is first seen in use: most of a RoCE table (255 entries) is zeros.
    std::optional<KeptFile> type, ndev;
  };
  struct Port {
    int64_t number = 0;
    core::Value fixed = core::Value::map();  // port, link_layer
    std::string dir;                         // host path, to open GID attributes on demand
    bool gid_attrs = false;                  // the port has gid_attrs/ (EFA ports have none)
    KeptFile state, phys_state, rate, lid, sm_lid;
    std::vector<Gid> gids;
    // Absent: no such directory.
    std::optional<std::vector<Counter>> counters, counters_ext, hw_counters;
  };

  static void readHardware(FactReader& r, const DirReader& dir, const DirReader& bus,
                           core::Value& d, std::optional<PcieLink>& link);
  static std::optional<std::vector<Counter>> openCounters(const DirReader& dir, const char* rel);
  static core::Value readCounters(FactReader& r, std::vector<Counter>& counters);
  core::Value readPort(FactReader& r, Port& p,
                       const std::vector<std::pair<std::string, int64_t>>& dev_netdevs);
  void readRoceMtu(FactReader& r, const Port& port,
                   const std::vector<std::pair<std::string, int64_t>>& dev_netdevs,
                   const std::set<std::string>& netdevs, core::Value& p) const;

  FileId id_;
  bool complete_ = true;
  core::Value fixed_ = core::Value::map();
  std::string net_dir_;  // host path of the PCI function's net/ (its members get renamed)
  std::optional<PcieLink> link_;
  std::optional<std::vector<Counter>> hw_counters_;  // the device's own; absent: no such directory
  std::vector<Port> ports_;
};

}  // namespace fabricwatch::facts
