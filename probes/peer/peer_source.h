#pragma once
// The mesh's face in the snapshot pipeline: a core::Source whose collect() copies the prober's
// latest results into the facts document (node.name, probes.mesh, probes.tcp, probes.dns) and
// whose renderMetrics() renders the peer metrics. It never probes: the prober runs its own
// rounds, and the scheduler calls collect() on its own interval.

#include <memory>

#include "core/source.h"
#include "probes/peer/peer_prober.h"

namespace fabricwatch::probes::peer {

class PeerSource : public core::Source {
 public:
  explicit PeerSource(std::shared_ptr<const PeerProber> prober) : prober_(std::move(prober)) {}
  std::string_view name() const override { return "peer"; }
  core::Collection collect(const core::CollectContext&) override {
    core::Collection c;
    c.facts = prober_->facts();
    return c;
  }
  void renderMetrics(const core::Snapshot&, core::MetricFamilies& out) const override {
    prober_->renderMetrics(out);
  }

 private:
  std::shared_ptr<const PeerProber> prober_;
};

}  // namespace fabricwatch::probes::peer
