#include "probes/kinds/fabric/initiator.h"

#include "core/log.h"

namespace fabricwatch::probes::fabric {
namespace {

constexpr size_t kMaxResponders = 1024;  // addresses kept in the prober's AV

}  // namespace

Initiator::Initiator(EndpointOptions opts, size_t latency_size, std::chrono::milliseconds retry)
    : opts_(std::move(opts)), latency_size_(latency_size), retry_(retry) {}

Initiator::~Initiator() { close(); }

const std::string& Initiator::name() const {
  static const std::string kNone;
  return ep_ ? ep_->name() : kNone;
}

void Initiator::close() {
  if (ep_) ep_->closeEndpoint();  // nothing lands in the buffers once they are freed
  tx_.reset();
  rx_.reset();
  addrs_.clear();
  lru_.clear();
  ep_.reset();
  retired_.stop();
}

void Initiator::failed(Measurement& m, std::optional<Buffer> session_tx) {
  if (m.quiesced) return;  // nothing of it in flight: the endpoint serves the next as it is
  struct Kept {            // what its operations may still use
    std::shared_ptr<void> contexts;
    std::optional<Buffer> session_tx, tx, rx;
  };
  retired_.add(std::move(ep_), m.in_flight,
               std::make_shared<Kept>(Kept{std::move(m.contexts), std::move(session_tx),
                                           std::move(tx_), std::move(rx_)}));
  tx_.reset();
  rx_.reset();
  addrs_.clear();
  lru_.clear();
  last_attempt_.reset();  // a new endpoint at the next use
}

std::optional<FabricError> Initiator::ensureOpen() {
  if (!retired_.empty()) retired_.settle();
  if (ep_) return std::nullopt;
  if (retired_.full()) return retired_.fullError();
  auto now = Clock::now();
  if (last_attempt_ && now - *last_attempt_ < retry_) return open_error_;
  last_attempt_ = now;
  std::optional<FabricError> err;
  ep_ = Endpoint::open(opts_, facts_, err);
  if (ep_) {
    tx_ = ep_->allocate(latency_size_, err);
    if (tx_) rx_ = ep_->allocate(latency_size_, err);
    if (err) close();
  }
  open_error_ = err;
  if (err) {
    core::log::warn("fabric", "prober endpoint unavailable", {{"error", err->message()}});
    return err;
  }
  if (was_open_) ++reopened_;
  was_open_ = true;
  return std::nullopt;
}

std::optional<fi_addr_t> Initiator::address(const std::string& responder,
                                            std::optional<FabricError>& error) {
  if (!ep_) {
    error = open_error_.value_or(FabricError{"endpoint", 0, "not open", ""});
    return std::nullopt;
  }
  auto it = addrs_.find(responder);
  if (it != addrs_.end()) {
    lru_.splice(lru_.end(), lru_, it->second.second);
    return it->second.first;
  }
  if (addrs_.size() >= kMaxResponders) forget(lru_.front());
  auto addr = ep_->insert(responder, error);
  if (!addr) return std::nullopt;
  lru_.push_back(responder);
  addrs_[responder] = {*addr, std::prev(lru_.end())};
  return addr;
}

void Initiator::forget(const std::string& responder) {
  auto it = addrs_.find(responder);
  if (it == addrs_.end()) return;
  if (ep_) ep_->remove(it->second.first);
  lru_.erase(it->second.second);
  addrs_.erase(it);
}

Measurement Initiator::latency(fi_addr_t peer, const SessionSpec& spec, uint32_t warmup,
                               Clock::time_point deadline, const std::atomic<bool>* stopping) {
  Measurement m;
  if (!ep_ || spec.size > latency_size_) {
    m.error = FabricError{"endpoint", 0, "not open", ""};
    return m;
  }
  m = runLatency(*ep_, *tx_, *rx_, peer, spec, warmup, deadline, stopping);
  if (m.error) failed(m, std::nullopt);
  return m;
}

Measurement Initiator::bandwidth(fi_addr_t peer, const SessionSpec& spec, uint32_t warmup,
                                 Clock::time_point deadline, const std::atomic<bool>* stopping) {
  Measurement m;
  if (!ep_) {
    m.error = FabricError{"endpoint", 0, "not open", ""};
    return m;
  }
  std::optional<FabricError> err;
  // The session's own send buffer: bandwidth messages are large and rare, and a registered
  // megabyte is not worth keeping between runs minutes apart.
  auto tx = ep_->allocate(spec.size, err);
  if (!tx) {
    m.error = err;
    return m;
  }
  m = runBandwidth(*ep_, *tx, *rx_, peer, spec, warmup, deadline, stopping);
  if (m.error) failed(m, std::move(tx));  // a send still in flight keeps its buffer
  return m;
}

}  // namespace fabricwatch::probes::fabric
