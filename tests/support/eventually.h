#pragma once
// Waiting for something to happen without fixed sleeps: poll until it holds or the deadline
// passes (STYLE.md: no sleeps to wait for things).

#include <chrono>
#include <thread>

namespace fabricwatch::testing {

// True as soon as pred() holds, polled every `poll`; false when it still does not at the
// deadline (pred() is asked once more then). The deadline is only reached when a test fails, so
// its default is generous: a loaded CI machine must not turn a slow pass into a failure.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds deadline = std::chrono::seconds(30),
                std::chrono::milliseconds poll = std::chrono::milliseconds(5)) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(poll);
  }
  return pred();
}

}  // namespace fabricwatch::testing
