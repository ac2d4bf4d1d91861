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

#include "facts/fact_reader.h"
#include "facts/kept_file.h"

namespace fabricwatch::facts {

// Entry: movable, with `FileId id() const` and `bool complete() const`.
template <typename Entry>
class ScannedDir {
 public:
  using Stale = std::vector<std::pair<std::string, FileId>>;  // names to scan, with identities

  // The entries for `names` (entries of `dir`), in that order; a name that vanished since the
  // listing is skipped. scan(name, id) -> Entry builds a new one.
  template <typename Scan>
  std::vector<Entry*> refresh(const DirReader& dir, const std::vector<std::string>& names,
                              Scan&& scan) {
    return refreshAll(dir, names, [&](const Stale& stale) {
      std::vector<Entry> out;
      out.reserve(stale.size());
      for (const auto& [name, id] : stale) out.push_back(scan(name, id));
      return out;
    });
  }

  // The same, with the entries to scan handed over at once: scan_all(stale) -> the new entries,
  // in that order (a first collection may scan them on more than one thread).
  template <typename ScanAll>
  std::vector<Entry*> refreshAll(const DirReader& dir, const std::vector<std::string>& names,
                                 ScanAll&& scan_all) {
    if (dir.root() != root_) {
      entries_.clear();
      root_ = dir.root();
    }
    std::vector<std::pair<const std::string*, FileId>> listed;
    listed.reserve(names.size());
    Stale stale;
    for (const auto& name : names) {
      std::optional<FileId> id = fileId(dir, name);
      if (!id) continue;
      listed.emplace_back(&name, *id);
      auto it = entries_.find(name);
      if (it == entries_.end() || it->second.id() != *id || !it->second.complete()) {
        // Dropped before the new scan, so that its kept descriptors are free for it.
        if (it != entries_.end()) entries_.erase(it);
        stale.emplace_back(name, *id);
      }
    }
    if (!stale.empty()) {
      std::vector<Entry> scanned = scan_all(stale);
      for (size_t i = 0; i < stale.size(); ++i)
        entries_.emplace(std::move(stale[i].first), std::move(scanned[i]));
    }
    std::map<std::string, Entry> seen;
    std::vector<Entry*> out;
    out.reserve(listed.size());
    for (const auto& [name, id] : listed) {
      auto node = entries_.extract(*name);
      if (node.empty()) continue;     // a name listed twice
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

}  // namespace fabricwatch::facts
