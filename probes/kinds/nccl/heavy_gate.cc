#include "probes/kinds/nccl/heavy_gate.h"

namespace fabricwatch::probes::nccl {

std::shared_ptr<HeavyGate> HeavyGate::process() {
  static std::shared_ptr<HeavyGate> g = std::make_shared<HeavyGate>();
  return g;
}

std::optional<HeavyGate::Hold> HeavyGate::tryAcquire(const std::string& what, std::string* holder) {
  std::lock_guard lock(mu_);
  if (held_) {
    if (holder) *holder = what_;
    return std::nullopt;
  }
  held_ = true;
  what_ = what;
  return Hold(this);
}

std::string HeavyGate::holder() const {
  std::lock_guard lock(mu_);
  return held_ ? what_ : "";
}

void HeavyGate::release() {
  std::lock_guard lock(mu_);
  held_ = false;
  what_.clear();
}

}  // namespace fabricwatch::probes::nccl
