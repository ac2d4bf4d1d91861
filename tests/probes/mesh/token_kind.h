#pragma once
// "token": a probe kind that exists only in the tests, complete in this one file as a real kind
// is in its folder (probes/kinds/<kind>/): its configuration table [probes.token] with a flag
// derived from a key, its own frame range, an optional metric family, and the kind itself.
// Shaped like the fabric probe's endpoint-name exchange: a request type of its own on the peer
// channel, a server-side handler that sees who asks, a per-peer cache that holds until the peer
// restarts, and its own facts, metrics and /api/v1/peers part. Registering it
// (registerProbeKind(tokenKindRegistration())) is all it takes: nothing in probes/ names it.

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/schema.h"
#include "core/metrics.h"
#include "probes/mesh/channel_client.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes::token {

// Its frame types: a range of its own, as a real kind declares one.
inline constexpr FrameRange kTokenFrames{200, 2};
inline constexpr FrameType kTokenRequest{200};
inline constexpr FrameType kTokenReply{201};

// [probes.token]: its keys, with a flag for one of them.
struct TokenConfig {
  std::string prefix = "tok";
  int rounds_cached = 1000;  // how many rounds a token stays cached (bounded)
  bool operator==(const TokenConfig&) const = default;
};
inline config::TableDef tokenConfigTable() {
  return config::TableKeys<TokenConfig>("probes.token")
      .string("prefix", &TokenConfig::prefix,
              [](const std::string& v) -> std::optional<std::string> {
                if (v.empty() || v.size() > 16) return "prefix must be 1 to 16 characters";
                return std::nullopt;
              })
      .flag("The token's prefix.")
      .integer("rounds_cached", 1, 1000000, &TokenConfig::rounds_cached)
      .defaults("[probes.token]\nenabled = false\nprefix = \"tok\"\nrounds_cached = 1000\n")
      .build();
}
// An optional family: rendered only when [probes.token] extra_metrics asks for it.
inline constexpr const char* kTokenCacheFamily = "fabricwatch_test_token_cache_entries";

// What every token kind in this process served, for the assertions.
struct ServedLog {
  std::mutex mu;
  std::vector<std::string> senders;
  int requests() {
    std::lock_guard lock(mu);
    return static_cast<int>(senders.size());
  }
};
inline ServedLog& served() {
  static ServedLog log;
  return log;
}

struct TokenResult : ProbeResult {
  std::string token;
  bool fetched = false;  // asked for now (else from the cache)
  std::string error;
};

struct TokenTotals : ProbeTotals {
  uint64_t fetches = 0;
};

class TokenKind : public ProbeKind {
 public:
  explicit TokenKind(const KindSetup& s)
      : secret_(s.secret),
        token_(s.config.tables.get<TokenConfig>("probes.token").prefix + "-" + s.node_name + "-" +
               std::to_string(randomNonce() % 100000)),
        cache_family_(s.wants(kTokenCacheFamily)) {}

  std::string_view name() const override { return "token"; }
  ProbeSchedule schedule() const override { return {.timeout = std::chrono::seconds(2)}; }

  std::vector<RequestHandler> handlers() override {
    return {{kTokenRequest, kTokenReply, 16, [this](std::string_view payload, const Sender& from) {
               if (payload != "token?") return Answer::malformed();
               std::lock_guard lock(served().mu);
               served().senders.push_back(from.address);
               return Answer::reply(token_);
             }}};
  }

  std::shared_ptr<const ProbeResult> probe(const PeerContext& ctx) override {
    auto r = std::make_shared<TokenResult>();
    {
      std::lock_guard lock(mu_);
      auto it = cache_.find(ctx.peer.address);
      if (it != cache_.end() && it->second.first == ctx.peer.instance) {
        r->token = it->second.second;
        r->answered = true;
        return r;
      }
    }
    ChannelClient client(secret_);
    CallResult c = client.connect(ctx.channel_address, std::chrono::seconds(1));
    if (c.ok()) c = client.call(kTokenRequest, "token?", kTokenReply, std::chrono::seconds(1));
    r->answered = c.failure == ChannelFailure::kNone;
    if (!c.ok()) {
      r->error = c.declined ? "declined: " + *c.declined : c.error;
      return r;
    }
    r->token = c.payload;
    r->fetched = true;
    std::lock_guard lock(mu_);
    cache_[ctx.peer.address] = {ctx.peer.instance, r->token};
    return r;
  }

  std::shared_ptr<const ProbeTotals> account(const std::vector<PeerProbe>& run) override {
    for (const auto& p : run) totals_.fetches += resultAs<TokenResult>(p).fetched;
    return std::make_shared<const TokenTotals>(totals_);
  }

  core::Value facts(const KindView& view) const override {
    core::Value peers = core::Value::list();
    for (const auto& p : view.results) peers.push(entry(p));
    return core::Value::map(
        {{"peers", std::move(peers)},
         {"fetches", static_cast<int64_t>(totalsAs<TokenTotals>(view).fetches)}});
  }
  void metrics(const KindView& view, core::MetricFamilies& out) const override {
    auto f = core::counterFamily("fabricwatch_test_token_fetches_total", "Tokens fetched.");
    core::addSample(f, {}, static_cast<double>(totalsAs<TokenTotals>(view).fetches));
    out.push_back(std::move(f));
    if (cache_family_) {
      auto c = core::gaugeFamily(kTokenCacheFamily, "Peers whose token is cached.");
      core::addSample(c, {}, static_cast<double>(view.results.size()));
      out.push_back(std::move(c));
    }
  }
  void peerStatus(const PeerProbe& p, core::Value& e) const override { e["token"] = entry(p); }

 private:
  static core::Value entry(const PeerProbe& p) {
    const auto& r = resultAs<TokenResult>(p);
    core::Value v = core::Value::map({{"address", p.peer.address}, {"fetched", r.fetched}});
    if (!r.token.empty()) v["token"] = r.token;
    if (!r.error.empty()) v["error"] = r.error;
    return v;
  }

  std::string secret_;
  std::string token_;  // what this node hands out; new with every instance of the kind
  std::mutex mu_;
  std::map<std::string, std::pair<uint64_t, std::string>> cache_;  // address -> (instance, token)
  TokenTotals totals_;
  bool cache_family_;
};

// Everything the kind brings, in one registration: off by default, so the other tests of a
// binary that registers it never run it.
inline KindRegistration tokenKindRegistration() {
  KindRegistration r;
  r.name = "token";
  r.enabled_by_default = false;
  r.make = [](const KindSetup& s) {
    return core::Result<std::shared_ptr<ProbeKind>>(std::make_shared<TokenKind>(s));
  };
  r.config = tokenConfigTable();
  r.frames = kTokenFrames;
  r.optional_metrics = {{kTokenCacheFamily, "", "+1"}};
  r.docs = "docs/peers.md";
  return r;
}

}  // namespace fabricwatch::probes::token
