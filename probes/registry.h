#pragma once
// The one list of what this binary runs: its fact sources and its probe kinds, in order (sources
// merge their facts in this order; a round runs kinds in this order, tcp first: its echo tells
// the kinds after it who the peer is). Everything that needs to know them reads this list: the
// pipeline that schedules sources (exporter/pipeline.cc), the configuration's schema and flags
// (every kind's table), the names [collect.sources.<name>] and [probes.<kind>] may take, the
// policy engine's fact roots, and the mesh (peer_setup.h). A new kind is one line in
// registry.cc; tests register kinds of their own at run time.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/schema.h"
#include "probes/mesh/probe_kind.h"
#include "probes/mesh/source_registration.h"

namespace fabricwatch::probes {

// Every kind: the built-in ones and those registered at run time (a test's own kind).
// Registering a name again replaces it.
void registerProbeKind(KindRegistration r);
std::vector<KindRegistration> probeKinds();
std::vector<std::string> probeKindNames();

// Every source: the node's, then the mesh's (peer), then those the kinds bring (nccl_probe).
std::vector<SourceRegistration> sources();
std::vector<std::string> sourceNames();
// One fresh instance of each of the node's own sources (those that need no mesh and no
// configuration), in order: what tests and benchmarks collect a host root with.
std::vector<std::shared_ptr<core::Source>> makeNodeSources();
// What policies may read: every source's fact roots, in list order, each once.
std::vector<std::string> factRoots();

// The configuration's schema: the daemon's tables, then every kind's.
std::shared_ptr<const config::Schema> configSchema();
// The optional families each source's and kind's table may turn on ("collect.sources.rdma",
// "probes.fabric"); the pipeline's own ("collect") and the policy stage's ("policy") live above
// this layer (exporter/pipeline.h adds them).
std::map<std::string, std::vector<core::OptionalMetric>, std::less<>> optionalMetricsByTable();

// Nullopt when no two kinds' frame ranges overlap each other, the channel's own types (1-15)
// or the private range (240-255); else which do.
std::optional<std::string> checkFrameRanges(const std::vector<KindRegistration>& kinds);

}  // namespace fabricwatch::probes
