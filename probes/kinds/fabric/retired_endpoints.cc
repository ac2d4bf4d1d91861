#include "probes/kinds/fabric/retired_endpoints.h"

#include <string>

#include "core/log.h"

namespace fabricwatch::probes::fabric {

void RetiredEndpoints::add(std::unique_ptr<Endpoint> ep, const std::vector<void*>& in_flight,
                           std::shared_ptr<void> storage) {
  ep->orphan(in_flight);
  waiting_.push_back({std::move(ep), std::move(storage), Clock::now(), std::nullopt});
}

void RetiredEndpoints::settle(Clock::time_point now) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    it->ep->drainOrphans();
    if (!it->settled && it->ep->orphans() == 0) it->settled = now;
    if (it->settled && now - *it->settled >= limits_.close_after) {
      it->ep->closeEndpoint();  // before what its operations used goes
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
  if (!full() || abandoned_ >= limits_.max_abandoned) return;
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (it->settled || now - it->since < limits_.give_up_after) continue;
    ++abandoned_;
    core::log::warn("fabric",
                    "a failed session's operations never completed; its endpoint is left open",
                    {{"abandoned", std::to_string(abandoned_)},
                     {"at_most", std::to_string(limits_.max_abandoned)}});
    abandon(*it);
    waiting_.erase(it);
    return;
  }
}

void RetiredEndpoints::stop(Clock::time_point now) {
  for (auto& w : waiting_) {
    w.ep->drainOrphans();
    if (w.ep->orphans() == 0 && w.settled && now - *w.settled >= limits_.close_after)
      w.ep->closeEndpoint();
    else
      abandon(w);
  }
  waiting_.clear();
}

void RetiredEndpoints::abandon(Waiting& w) {
  w.ep->abandon();                    // its objects are kept for good
  keepForever(std::move(w.storage));  // and what its operations may still use
}

FabricError RetiredEndpoints::fullError() const {
  return FabricError{"endpoint", 0,
                     std::to_string(waiting_.size()) +
                         " endpoints of failed sessions wait for their operations to end; a new "
                         "one opens when one has",
                     ""};
}

}  // namespace fabricwatch::probes::fabric
