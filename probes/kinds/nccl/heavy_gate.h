#pragma once
// One heavy NCCL run at a time per daemon: the local all-reduce, a peer run this node starts
// (rank 0) and one it serves for a peer (rank 1) all take this gate, so that the probes never
// compete with each other for the GPUs or measure each other. Whoever finds it taken skips (or
// declines, for a peer) and says what holds it. A daemon has one gate (HeavyGate::process());
// tests that run two "nodes" in one process give each its own.

#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace fabricwatch::probes::nccl {

class HeavyGate {
 public:
  // Held until destroyed (movable, not copyable).
  class Hold {
   public:
    Hold(Hold&& o) noexcept : gate_(o.gate_) { o.gate_ = nullptr; }
    Hold& operator=(Hold&&) = delete;
    Hold(const Hold&) = delete;
    ~Hold() {
      if (gate_) gate_->release();
    }

   private:
    friend class HeavyGate;
    explicit Hold(HeavyGate* g) : gate_(g) {}
    HeavyGate* gate_;
  };

  // The gate shared by everything in this process.
  static std::shared_ptr<HeavyGate> process();

  // Takes the gate for `what` ("the local NCCL probe", "a peer run with node-b (rank 0)"), or
  // returns nullopt with `holder` set to what holds it.
  std::optional<Hold> tryAcquire(const std::string& what, std::string* holder = nullptr);
  // What holds the gate now ("" when free).
  std::string holder() const;

 private:
  void release();
  mutable std::mutex mu_;
  bool held_ = false;
  std::string what_;
};

}  // namespace fabricwatch::probes::nccl
