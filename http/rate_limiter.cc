#include "http/rate_limiter.h"

#include <algorithm>

namespace fabricwatch::http {

void RateLimiter::reset(int burst, std::chrono::milliseconds interval) {
  burst_ = burst;
  interval_ = interval;
  buckets_.clear();
  lru_.clear();
}

bool RateLimiter::take(const std::string& key, Clock::time_point now) {
  if (interval_.count() <= 0) return true;
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxBuckets) {
      buckets_.erase(lru_.back());
      lru_.pop_back();
    }
    lru_.push_front(key);
    it = buckets_.emplace(key, Bucket{static_cast<double>(burst_), now, lru_.begin()}).first;
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  Bucket& b = it->second;
  if (now > b.at) {
    b.tokens = std::min<double>(burst_, b.tokens + std::chrono::duration<double>(now - b.at) /
                                                       std::chrono::duration<double>(interval_));
    b.at = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

}  // namespace fabricwatch::http
