#pragma once
// The entries of a sysfs directory (RDMA devices, PCI functions), each scanned once while it
// lives. An entry is scanned again when its name comes back with a new identity (the device
// was removed and added again) or when its last scan was incomplete; entries no longer listed
// are dropped, and with them their kept descriptors. Read under another host root, it starts
// afresh.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "probes/node/fact_reader.h"
#include "probes/node/kept_file.h"

namespace fabricwatch::probes::node {

// Entry: movable, with `FileId id() const` and `bool complete() const`.
template <typename Entry>
class ScannedDir {
 public:
  // The entries for `names` (entries of `dir`), in that order; a name that vanished since the
  // listing is skipped. scan(name, id) -> Entry builds a new one.
  template <typename Scan>
  std::vector<Entry*> refresh(const DirReader& dir, const std::vector<std::string>& names,
                              Scan&& scan) {
    if (dir.root() != root_) {
      entries_.clear();
      root_ = dir.root();
    }
    std::map<std::string, Entry> seen;
    std::vector<Entry*> out;
    out.reserve(names.size());
    for (const auto& name : names) {
      std::optional<FileId> id = fileId(dir, name);
      if (!id) continue;
      auto it = entries_.find(name);
      if (it == entries_.end() || it->second.id() != *id || !it->second.complete()) {
        if (it != entries_.end()) entries_.erase(it);
        it = entries_.emplace(name, scan(name, *id)).first;
      }
      auto node = entries_.extract(it);
      out.push_back(&node.mapped());  // node handles keep their element's address
      seen.insert(std::move(node));
    }
    entries_ = std::move(seen);
    return out;
  }

 private:
  std::string root_;  // the host root the entries were scanned under
  std::map<std::string, Entry> entries_;
};

}  // namespace fabricwatch::probes::node
