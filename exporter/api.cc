#include "exporter/api.h"

#include <chrono>
#include <ctime>

#include "core/value_format.h"
#include "probes/mesh/peer_prober.h"

namespace fabricwatch::exporter {
namespace {

const char* kJson = "application/json";

core::Value sourcesValue(const core::Snapshot& s) {
  core::Value list = core::Value::list();
  for (const auto& st : s.sources) {
    core::Value v = core::Value::map();
    v["name"] = st.name;
    v["ran"] = st.ran;
    v["success"] = st.success;
    v["duration_seconds"] = st.duration_seconds;
    v["read_errors_total"] = st.read_errors_total;
    if (st.ran) v["last_run"] = core::rfc3339(st.last_run);
    if (!st.last_error.empty()) v["last_error"] = st.last_error;
    list.push(std::move(v));
  }
  return list;
}

http::HttpResponse notReady(std::string_view why = "no snapshot published yet") {
  return {503, kJson, "{\"error\":\"" + std::string(why) + "\"}\n"};
}

}  // namespace

http::HttpResponse healthz() { return {200, "text/plain; charset=utf-8", "ok\n"}; }

http::HttpResponse readyz(const core::Snapshot* snap) {
  if (snap && snap->complete) return {200, "text/plain; charset=utf-8", "ready\n"};
  return {503, "text/plain; charset=utf-8",
          "not ready: the first collection cycle has not finished\n"};
}

http::HttpResponse factsJson(const core::Snapshot* snap) {
  if (!snap) return notReady();
  core::Value doc = core::Value::map();
  doc["generation"] = snap->generation;
  doc["published_at"] = core::rfc3339(snap->published_at);
  doc["complete"] = snap->complete;
  doc["sources"] = sourcesValue(*snap);
  doc["facts"] = snap->facts;
  return {200, kJson, core::toJson(doc) + "\n"};
}

core::Value violationsValue(const std::vector<core::Violation>& violations) {
  core::Value list = core::Value::list();
  for (const auto& v : violations) {
    core::Value e = core::Value::map({{"pack", v.pack},
                                      {"rule", v.rule},
                                      {"severity", v.severity},
                                      {"subject", v.subject},
                                      {"message", v.message},
                                      {"remediation", v.remediation}});
    // The lifecycle where something tracks it (serve); `check` prints none.
    if (!v.state.empty()) {
      e["state"] = v.state;
      e["began_at"] = core::rfc3339(v.began_at);
      if (v.state == "recovering") e["recovering_since"] = core::rfc3339(v.recovering_since);
    }
    list.push(std::move(e));
  }
  return list;
}

http::HttpResponse violationsJson(const core::Snapshot* snap) {
  if (!snap) return notReady();
  core::Value doc = core::Value::map();
  doc["generation"] = snap->generation;
  doc["published_at"] = core::rfc3339(snap->published_at);
  doc["violations"] = violationsValue(snap->violations);
  if (const auto* policy = snap->status.find("policy")) doc["policy"] = *policy;
  return {200, kJson, core::toJson(doc) + "\n"};
}

http::HttpResponse peersJson(const core::Snapshot* snap) {
  if (!snap) return notReady();
  if (auto it = snap->captured_api.find("peer"); it != snap->captured_api.end() && it->second)
    return {200, kJson, core::toJson(*it->second) + "\n"};
  for (const auto& st : snap->sources)
    if (st.name == "peer") return notReady("the peer source has not run yet");
  // The peer source is turned off ([collect.sources.peer]): nothing to say but who we are.
  const core::Value* name = snap->facts.findPath("node.name");
  return {
      200, kJson,
      core::toJson(probes::disabledMeshStatus(name && name->isString() ? name->asString() : "")) +
          "\n"};
}

}  // namespace fabricwatch::exporter
