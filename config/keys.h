#pragma once
// The daemon's own tables (config/*_keys.cc), which Schema::daemon() lists in this order.

#include "config/duration.h"
#include "config/schema.h"

namespace fabricwatch::config {

TableDef webTable();       // server_keys.cc
TableDef logTable();       // server_keys.cc
TableDef hostTable();      // server_keys.cc
TableDef collectTable();   // collect_keys.cc
TableDef peerTable();      // mesh_keys.cc
TableDef probeTable();     // mesh_keys.cc
TableDef probesTable();    // collect_keys.cc: every kind's `enabled` and `extra_metrics`
TableDef policyTable();    // policy_keys.cc
TableDef topologyTable();  // topology_keys.cc
KeyDef policyExtraMetricsKey();

}  // namespace fabricwatch::config
