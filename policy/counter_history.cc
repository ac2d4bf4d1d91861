#include "policy/counter_history.h"

#include <algorithm>

namespace fabricwatch::policy {
namespace {

// The counter maps of a port and of a device, as the rdma source writes them.
constexpr std::string_view kPortMaps[] = {"counters", "counters_ext", "hw_counters"};
constexpr std::string_view kDeviceMap = "hw_counters";

// Calls fn(prefix, map name, owner) for every counter map of rdma.devices, the prefix being the
// counters' key without their name ("mlx5_0/1/counters/", "rdmap16s27//hw_counters/"). V is
// core::Value or const core::Value, and so is the owner handed to fn.
template <typename V, typename Fn>
void forEachCounterMap(V& facts, Fn&& fn) {
  auto child = [](auto& v, std::string_view key) -> decltype(&v) {
    if (!v.isMap()) return nullptr;
    auto it = v.asMap().find(key);
    return it == v.asMap().end() ? nullptr : &it->second;
  };
  auto* rdma = child(facts, "rdma");
  auto* devices = rdma ? child(*rdma, "devices") : nullptr;
  if (!devices || !devices->isList()) return;
  for (auto& d : devices->asList()) {
    const auto* name = child(d, "name");
    if (!name || !name->isString()) continue;
    const std::string dev = name->asString() + "/";
    fn(dev + "/" + std::string(kDeviceMap) + "/", kDeviceMap, d);
    auto* ports = child(d, "ports");
    if (!ports || !ports->isList()) continue;
    for (auto& p : ports->asList()) {
      const auto* num = child(p, "port");
      if (!num || !num->isInt()) continue;
      const std::string port = dev + std::to_string(num->asInt()) + "/";
      for (std::string_view m : kPortMaps) fn(port + std::string(m) + "/", m, p);
    }
  }
}

double spanSeconds(std::chrono::system_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

void CounterHistory::record(const core::Value& facts, TimePoint at, Window window) {
  std::lock_guard lock(mu_);
  if (at == last_at_) return;
  if (at < last_at_) series_.clear();  // the clock went back: the samples would mislead
  last_at_ = at;
  ++collections_;
  untracked_ = 0;
  forEachCounterMap(facts,
                    [&](const std::string& prefix, std::string_view map, const core::Value& owner) {
                      const core::Value* m = owner.find(map);
                      if (!m || !m->isMap()) return;
                      for (const auto& [name, v] : m->asMap())
                        if (v.isNumber()) sampleLocked(prefix + name, v, at, window);
                    });
  std::erase_if(series_, [&](const auto& kv) { return kv.second.seen != collections_; });
}

void CounterHistory::sample(const std::string& key, const core::Value& value, TimePoint at,
                            Window window) {
  std::lock_guard lock(mu_);
  sampleLocked(key, value, at, window);
}

void CounterHistory::sampleLocked(const std::string& key, const core::Value& value, TimePoint at,
                                  Window window) {
  auto it = series_.find(key);
  if (it == series_.end()) {
    if (series_.size() >= kMaxCounters) {
      ++untracked_;
      return;
    }
    it = series_.emplace(key, Series{}).first;
  }
  Series& s = it->second;
  s.seen = collections_;
  if (!s.samples.empty() && at <= s.samples.back().at) {
    s = Series{};  // not after the last sample: start over
    s.seen = collections_;
  }
  if (!s.samples.empty()) {
    double now = value.asDouble(), before = s.last.asDouble();
    s.total += now >= before ? now - before : now;  // lower: a reset, counting from 0 again
    s.previous = std::move(s.last);
    s.has_previous = true;
  }
  s.last = value;
  const Sample newest{at, s.total};
  // Spaced so that kMaxSamples cover the window: a sample closer than that to the one before
  // the newest replaces the newest.
  const auto spacing = window / static_cast<int64_t>(kMaxSamples - 1);
  if (s.samples.size() >= 2 && at - s.samples[s.samples.size() - 2].at < spacing)
    s.samples.back() = newest;
  else
    s.samples.push_back(newest);
  while (s.samples.size() > kMaxSamples ||
         (s.samples.size() > 2 && s.samples.front().at < at - window))
    s.samples.pop_front();
}

std::optional<CounterHistory::Change> CounterHistory::change(const std::string& key,
                                                             Window window) const {
  std::lock_guard lock(mu_);
  auto it = series_.find(key);
  if (it == series_.end()) return std::nullopt;
  return changeLocked(it->second, window);
}

std::optional<CounterHistory::Change> CounterHistory::changeLocked(const Series& s,
                                                                   Window window) const {
  if (!s.has_previous || s.samples.size() < 2) return std::nullopt;
  Change c;
  if (s.last.isInt() && s.previous.isInt()) {
    int64_t now = s.last.asInt(), before = s.previous.asInt();
    c.increase = now >= before ? now - before : now;
  } else {
    double now = s.last.asDouble(), before = s.previous.asDouble();
    c.increase = now >= before ? now - before : now;
  }
  // The samples within the window, and at least the last two.
  const Sample& newest = s.samples.back();
  size_t first = 0;
  while (first + 2 < s.samples.size() && s.samples[first].at < newest.at - window) ++first;
  c.span_seconds = spanSeconds(newest.at - s.samples[first].at);
  if (c.span_seconds > 0) c.rate = (newest.total - s.samples[first].total) / c.span_seconds;
  return c;
}

void CounterHistory::annotate(core::Value& facts, Window window) const {
  std::lock_guard lock(mu_);
  const core::Value* rdma = facts.find("rdma");
  if (!rdma || !rdma->isMap()) return;
  double span = 0;
  forEachCounterMap(facts,
                    [&](const std::string& prefix, std::string_view map, core::Value& owner) {
                      const core::Value* m = owner.find(map);
                      if (!m || !m->isMap()) return;
                      core::Value increase = core::Value::map(), rate = core::Value::map();
                      for (const auto& [name, v] : m->asMap()) {
                        auto it = series_.find(prefix + name);
                        if (it == series_.end()) continue;
                        auto c = changeLocked(it->second, window);
                        if (!c) continue;
                        increase[name] = std::move(c->increase);
                        rate[name] = c->rate;
                        span = std::max(span, c->span_seconds);
                      }
                      if (increase.size() == 0) return;
                      // The owner is a std::map: the counter map `m` stays where it is.
                      owner[std::string(map) + "_increase"] = std::move(increase);
                      owner[std::string(map) + "_rate"] = std::move(rate);
                    });
  facts["rdma"]["counter_history"] = core::Value::map({
      {"collections", collections_},
      {"window_seconds", std::chrono::duration<double>(window).count()},
      {"span_seconds", span},
      {"counters", series_.size()},
      {"untracked", untracked_},
  });
}

size_t CounterHistory::counters() const {
  std::lock_guard lock(mu_);
  return series_.size();
}

size_t CounterHistory::untracked() const {
  std::lock_guard lock(mu_);
  return untracked_;
}

size_t CounterHistory::samples(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = series_.find(key);
  return it == series_.end() ? 0 : it->second.samples.size();
}

uint64_t CounterHistory::collections() const {
  std::lock_guard lock(mu_);
  return collections_;
}

}  // namespace fabricwatch::policy
