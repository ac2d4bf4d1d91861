#include "nccl/nccl_list.h"

#include <cstdlib>

namespace fabricwatch::nccl {

NcclList parseNcclList(std::string_view v) {
  NcclList out;
  if (!v.empty() && v.front() == '^') {
    out.exclude = true;
    v.remove_prefix(1);
  }
  if (!v.empty() && v.front() == '=') {
    out.exact = true;
    v.remove_prefix(1);
  }
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    std::string_view item =
        v.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    NcclListEntry e;
    if (auto colon = item.find(':'); colon != std::string_view::npos) {
      e.name = std::string(item.substr(0, colon));
      e.port = std::atoi(std::string(item.substr(colon + 1)).c_str());
    } else {
      e.name = std::string(item);
    }
    if (!e.name.empty()) out.entries.push_back(std::move(e));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

bool ncclEntryMatches(const NcclList& list, const NcclListEntry& e, std::string_view name,
                      int port) {
  bool name_ok = list.exact ? name == e.name : name.substr(0, e.name.size()) == e.name;
  bool port_ok = e.port == -1 || port == -1 || e.port == port;
  return name_ok && port_ok;
}

bool ncclSelects(const NcclList& list, std::string_view name, int port) {
  bool hit = list.entries.empty();  // NCCL: an empty user list matches everything
  for (const auto& e : list.entries) hit = hit || ncclEntryMatches(list, e, name, port);
  return hit != list.exclude;
}

}  // namespace fabricwatch::nccl
