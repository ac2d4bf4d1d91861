#pragma once
// The mesh's face in the snapshot pipeline: a core::Source whose collect() copies the prober's
// latest results into the facts document (node.name, probes.mesh, probes.tcp, probes.dns) and
// captures the peer metrics and the /api/v1/peers document with them (Collection::metrics,
// Collection::api), so that a scrape or an API call answers from the snapshot, never from the
// live prober. It never probes: the prober runs its own rounds,
// and the scheduler calls collect() on its own interval.

#include <memory>

#include "core/source.h"
#include "probes/mesh/peer_prober.h"

namespace fabricwatch::probes {

class PeerSource : public core::Source {
 public:
  // Without a prober (the mesh is off) it reports node.name and an empty membership.
  PeerSource(std::shared_ptr<const PeerProber> prober, std::string node_name)
      : prober_(std::move(prober)), node_name_(std::move(node_name)) {}
  std::string_view name() const override { return "peer"; }
  core::Collection collect(const core::CollectContext&) override {
    core::Collection c;
    if (prober_) {
      // One view: facts, metrics and the API document describe the same moment.
      auto view = prober_->view();
      c.facts = meshFacts(*view);
      auto metrics = std::make_shared<core::MetricFamilies>();
      renderMeshMetrics(*view, *metrics);
      c.metrics = std::move(metrics);
      c.api = std::make_shared<const core::Value>(meshStatus(*view));
    } else {
      c.facts["node"]["name"] = node_name_;
      c.facts["probes"]["mesh"] = core::Value::map({{"members", 0}, {"active", 0}, {"pending", 0}});
      c.api = std::make_shared<const core::Value>(disabledMeshStatus(node_name_));
    }
    return c;
  }

 private:
  std::shared_ptr<const PeerProber> prober_;
  std::string node_name_;
};

}  // namespace fabricwatch::probes
