#pragma once
// The web configuration's rate_limit as token buckets, one per client: a client is a key the
// server chooses (the address of an unauthenticated request, the address and user of an
// authenticated one), so a flood from one address empties that address's bucket and nobody
// else's. The table is bounded: beyond kMaxBuckets keys the least recently used bucket is
// dropped (its client starts again with a full bucket), so many addresses cannot grow memory.
// Not thread-safe: the HTTP server's I/O thread owns it.

#include <chrono>
#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>

namespace fabricwatch::http {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxBuckets = 4096;

  // Empties the table and takes `burst` requests per key, refilled one per `interval`.
  void reset(int burst, std::chrono::milliseconds interval);
  // Takes a token from `key`'s bucket (a new key starts full); false when it has none.
  bool take(const std::string& key, Clock::time_point now);
  size_t size() const { return buckets_.size(); }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point at{};
    std::list<std::string>::iterator lru;
  };
  int burst_ = 0;
  std::chrono::milliseconds interval_{0};
  std::list<std::string> lru_;  // most recently used first
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace fabricwatch::http
