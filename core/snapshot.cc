#include "core/snapshot.h"

namespace fabricwatch::core {

void mergeFacts(Value& dst, const Value& src) {
  if (!src.isMap()) return;
  for (const auto& [k, v] : src.asMap()) {
    Value& slot = dst[k];
    if (slot.isMap() && v.isMap())
      mergeFacts(slot, v);
    else
      slot = v;
  }
}

}  // namespace fabricwatch::core
