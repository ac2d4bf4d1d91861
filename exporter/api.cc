#include "exporter/api.h"

#include <chrono>
#include <ctime>

#include "core/value_format.h"
#include "exporter/build_info.h"

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

HttpResponse notReady() { return {503, kJson, "{\"error\":\"no snapshot published yet\"}\n"}; }

std::string htmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

HttpResponse healthz() { return {200, "text/plain; charset=utf-8", "ok\n"}; }

HttpResponse readyz(const core::Snapshot* snap) {
  if (snap && snap->complete) return {200, "text/plain; charset=utf-8", "ready\n"};
  return {503, "text/plain; charset=utf-8",
          "not ready: the first collection cycle has not finished\n"};
}

HttpResponse factsJson(const core::Snapshot* snap) {
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
    list.push(core::Value::map({{"pack", v.pack},
                                {"rule", v.rule},
                                {"severity", v.severity},
                                {"subject", v.subject},
                                {"message", v.message},
                                {"remediation", v.remediation}}));
  }
  return list;
}

HttpResponse violationsJson(const core::Snapshot* snap) {
  if (!snap) return notReady();
  core::Value doc = core::Value::map();
  doc["generation"] = snap->generation;
  doc["published_at"] = core::rfc3339(snap->published_at);
  doc["violations"] = violationsValue(snap->violations);
  if (const auto* policy = snap->status.find("policy")) doc["policy"] = *policy;
  return {200, kJson, core::toJson(doc) + "\n"};
}

HttpResponse statusPage(const core::Snapshot* snap) {
  std::string h =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>fabricwatch</title>"
      "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 10px;text-align:left}"
      ".bad{color:#b00}</style></head><body><h1>fabricwatch</h1>";
  h += "<p>version " + std::string(kVersion) + " (" + kRevision +
       ")</p><ul>"
       "<li><a href=\"/metrics\">/metrics</a></li><li><a "
       "href=\"/api/v1/facts\">/api/v1/facts</a></li>"
       "<li><a href=\"/api/v1/violations\">/api/v1/violations</a></li>"
       "<li><a href=\"/healthz\">/healthz</a></li><li><a href=\"/readyz\">/readyz</a></li></ul>";
  if (!snap) {
    h += "<p>No snapshot yet.</p>";
  } else {
    h += "<h2>Sources</h2><table><tr><th>source</th><th>status</th><th>duration</th><th>last "
         "error</th></tr>";
    for (const auto& s : snap->sources) {
      std::string state = !s.ran ? "pending" : s.success ? "ok" : "failed";
      h += "<tr><td>" + htmlEscape(s.name) + "</td><td" +
           (state == "failed" ? " class=\"bad\"" : "") + ">" + state + "</td><td>" +
           std::to_string(s.duration_seconds) + " s</td><td>" + htmlEscape(s.last_error) +
           "</td></tr>";
    }
    h += "</table><h2>Violations</h2>";
    if (snap->violations.empty())
      h += "<p>None.</p>";
    else {
      h += "<table><tr><th>severity</th><th>rule</th><th>subject</th><th>message</th></tr>";
      for (const auto& v : snap->violations) {
        h += "<tr><td>" + htmlEscape(v.severity) + "</td><td>" + htmlEscape(v.pack + "/" + v.rule) +
             "</td><td>" + htmlEscape(v.subject) + "</td><td>" + htmlEscape(v.message) +
             "</td></tr>";
      }
      h += "</table>";
    }
  }
  h += "</body></html>\n";
  return {200, "text/html; charset=utf-8", h};
}

HttpResponse peersJson(const core::Value& status) {
  return {200, kJson, core::toJson(status) + "\n"};
}

core::Value disabledPeersStatus(const std::string& node_name) {
  core::Value v = core::Value::map();
  v["enabled"] = false;
  v["node"] = node_name;
  v["members"] = core::Value::list();
  v["round_peers"] = core::Value::list();
  v["results"] = core::Value::list();
  return v;
}

}  // namespace fabricwatch::exporter
