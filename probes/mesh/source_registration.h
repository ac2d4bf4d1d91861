#pragma once
// What a fact source is to the binary: its name ([collect.sources.<name>]), the fact roots it
// fills (what policy expressions may name), its optional series, and how to make it for a
// configuration. probes/registry.cc lists every source once; the scheduler's pipeline, the
// configuration loader and the policy engine all read that one list.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/metric_selection.h"
#include "core/scheduler.h"
#include "core/source.h"

namespace fabricwatch::probes {

class PeerProber;

struct SourceSetup {
  const config::Config& config;
  // The mesh, when this process runs one (serve): the peer source copies its results.
  std::shared_ptr<const PeerProber> prober;
  // A daemon (serve) runs heavy sources (an NCCL run); a one-shot facts or check never does.
  bool daemon = false;
};

struct SourceRegistration {
  std::string name;
  std::vector<std::string> fact_roots;                 // top-level keys of the facts it returns
  std::vector<core::OptionalMetric> optional_metrics;  // [collect.sources.<name>] extra_metrics
  // The source for this configuration and command; null when they leave it out.
  std::function<std::shared_ptr<core::Source>(const SourceSetup&)> make;
  // Its schedule; unset: [collect.sources.<name>] over [collect] (Config::sourceConfig).
  std::function<core::Schedule(const config::Config&)> schedule;
  // Whether the scheduler may start a fresh instance in place of a run that is stuck.
  bool restartable = false;
};

}  // namespace fabricwatch::probes
