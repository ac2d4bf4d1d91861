#include "exporter/status_page.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "core/value_format.h"
#include "exporter/build_info.h"
#include "exporter/html.h"

namespace fabricwatch::exporter {
namespace {

using core::Value;

// Rows per probe table and columns per row; peers are bounded upstream, this bounds the page.
constexpr size_t kMaxRows = 100;
constexpr size_t kMaxColumns = 16;

constexpr std::string_view kStyle =
    "*{box-sizing:border-box}"
    "body{margin:0;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
    "color:#1b1b1f;background:#f6f7f9}"
    "main{max-width:72rem;margin:0 auto;padding:1rem}"
    "h1{font-size:1.3rem;margin:.2rem 0 .6rem}h2{font-size:1.1rem;margin:1.6rem 0 .5rem}"
    "h3{font-size:1rem;margin:1rem 0 .4rem}"
    ".verdict{font-size:1.15rem;font-weight:600;padding:.7rem 1rem;border-radius:8px;"
    "margin:0 0 1rem;border-left:8px solid}"
    ".fail{background:#fde7e9;color:#8c1d18;border-color:#b3261e}"
    ".warn{background:#fff4d6;color:#6b4500;border-color:#c98a00}"
    ".ok{background:#e6f4ea;color:#14532d;border-color:#1e8e3e}"
    ".pending{background:#eceff1;color:#37474f;border-color:#78909c}"
    "dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}"
    "dt{color:#555}dd{margin:0;overflow-wrap:anywhere}"
    ".muted{color:#666;font-weight:normal}"
    ".card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:.6rem .8rem;"
    "margin:.5rem 0}"
    ".violation.critical{border-left:6px solid #b3261e}"
    ".violation.warning{border-left:6px solid #c98a00}"
    ".violation.info{border-left:6px solid #5f6b7a}"
    ".violation h4{margin:0;font-size:.95rem;overflow-wrap:anywhere}"
    ".violation p{margin:.3rem 0;overflow-wrap:anywhere}"
    ".fix{background:#f3f6fb;padding:.4rem .6rem;border-radius:6px}"
    ".scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}"
    "table{border-collapse:collapse;background:#fff;font-size:.9rem;min-width:100%}"
    "th,td{padding:.3rem .6rem;border-bottom:1px solid #e3e6ea;text-align:left;"
    "vertical-align:top;white-space:nowrap}"
    "td.wrap{white-space:normal;overflow-wrap:anywhere;min-width:12rem}"
    "th{background:#eef1f5;font-weight:600}"
    "tr.bad td{background:#fdecee}"
    ".tag{display:inline-block;padding:0 .4rem;border-radius:4px;font-size:.8rem;"
    "background:#eef1f5}"
    ".tag.bad{background:#b3261e;color:#fff}.tag.good{background:#1e8e3e;color:#fff}"
    "footer{margin:2rem 0 1rem;color:#555;font-size:.9rem}"
    "footer a{margin-right:1rem}"
    "@media (max-width:600px){main{padding:.6rem}body{font-size:14px}"
    "dl.summary{grid-template-columns:1fr}dl.summary dt{margin-top:.3rem}"
    "dl.kv{grid-template-columns:max-content 1fr}dl.kv dt{margin-top:0}}";

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string plural(size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string formatDouble(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Durations as a person reads them: 27 µs, 1.4 ms, 2.5 s.
std::string formatSeconds(double s) {
  double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a < 1e-3) return formatDouble(s * 1e6, "%.3g µs");
  if (a < 1) return formatDouble(s * 1e3, "%.3g ms");
  return formatDouble(s, "%.3g s");
}

// A column or key name decides the unit: any dotted part named seconds or *_seconds is a
// duration, *_ratio a fraction.
bool isSecondsName(std::string_view name) {
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    std::string_view part =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part == "seconds" || endsWith(part, "_seconds")) return true;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return false;
}

std::string formatScalar(std::string_view name, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      return "";
    case Value::Kind::kBool:
      return v.asBool() ? "yes" : "no";
    case Value::Kind::kInt:
      if (isSecondsName(name)) return formatSeconds(static_cast<double>(v.asInt()));
      return std::to_string(v.asInt());
    case Value::Kind::kDouble:
      if (isSecondsName(name)) return formatSeconds(v.asDouble());
      if (endsWith(name, "_ratio") || name == "ratio")
        return formatDouble(v.asDouble() * 100, "%.3g %%");
      return formatDouble(v.asDouble(), "%.4g");
    case Value::Kind::kString:
      return v.asString();
    case Value::Kind::kList: {
      std::string out;
      size_t n = 0;
      for (const auto& e : v.asList()) {
        if (n == 8) {
          out += ", …";
          break;
        }
        if (n++) out += ", ";
        out += e.isList() || e.isMap() ? core::toJson(e) : formatScalar(name, e);
      }
      return out;
    }
    case Value::Kind::kMap:
      return core::toJson(v);
  }
  return "";
}

// One table row: scalar cells by column name; nested maps (rtt_seconds: {p50, p99 ...})
// flatten one level into dotted columns.
using Row = std::map<std::string, const Value*, std::less<>>;

Row flattenRow(const Value& item) {
  Row row;
  if (!item.isMap()) return row;
  for (const auto& [k, v] : item.asMap()) {
    if (v.isMap()) {
      for (const auto& [sk, sv] : v.asMap()) row.emplace(k + "." + sk, &sv);
    } else {
      row.emplace(k, &v);
    }
  }
  return row;
}

// Identity and outcome first, the rest alphabetically; nested percentiles in reading order.
int columnRank(std::string_view c) {
  static constexpr std::array<std::string_view, 12> kFirst = {
      "node",    "name",      "address",         "group",           "reachable",  "ok",
      "failure", "timed_out", "rtt_seconds.p50", "rtt_seconds.p99", "loss_ratio", "seconds"};
  for (size_t i = 0; i < kFirst.size(); ++i)
    if (c == kFirst[i]) return static_cast<int>(i);
  if (c == "round") return 900;   // bookkeeping
  if (c == "error") return 1000;  // long text last
  return 100;
}

bool rowIsBad(const Row& row) {
  for (std::string_view k : {"reachable", "ok", "success"}) {
    auto it = row.find(k);
    if (it != row.end() && it->second->isBool() && !it->second->asBool()) return true;
  }
  return false;
}

// Integer counters that mean "something is wrong" when above zero.
bool isTroubleCounter(std::string_view k) {
  return k == "unreachable" || k == "failures" || k == "errors" || k == "failed";
}

struct Verdict {
  std::string level;  // fail | warn | ok | pending
  std::string word;   // FAIL | WARN | OK | STARTING
  std::string text;
};

Verdict verdictFor(const core::Snapshot& s) {
  size_t critical = 0, warning = 0, info = 0;
  for (const auto& v : s.violations) {
    if (v.severity == "critical")
      ++critical;
    else if (v.severity == "warning")
      ++warning;
    else
      ++info;
  }
  std::vector<std::string> issues;
  size_t failed_sources = 0, healthy_sources = 0;
  std::string first_failed;
  for (const auto& src : s.sources) {
    if (src.ran && !src.success) {
      if (failed_sources++ == 0) first_failed = src.name;
    } else if (src.ran) {
      ++healthy_sources;
    }
  }
  if (failed_sources == 1) issues.push_back("source " + first_failed + " failed");
  if (failed_sources > 1) issues.push_back(plural(failed_sources, "source", "sources") + " failed");
  std::vector<std::string> good;
  if (const Value* probes = s.facts.find("probes"); probes && probes->isMap()) {
    for (const auto& [kind, v] : probes->asMap()) {
      if (!v.isMap()) continue;
      for (const auto& [k, c] : v.asMap()) {
        if (isTroubleCounter(k) && c.isInt() && c.asInt() > 0)
          issues.push_back(kind + " " + k + ": " + std::to_string(c.asInt()));
      }
      const Value* reachable = v.find("reachable");
      if (reachable && reachable->isInt() && reachable->asInt() > 0)
        good.push_back(plural(static_cast<size_t>(reachable->asInt()), "peer", "peers") +
                       " reachable over " + kind);
    }
  }
  if (const Value* policy = s.status.find("policy")) {
    const Value* ok = policy->find("last_reload_successful");
    if (ok && ok->isBool() && !ok->asBool()) issues.push_back("policy reload failed");
    const Value* errors = policy->find("errors");
    if (errors && errors->isList() && !errors->asList().empty())
      issues.push_back(plural(errors->asList().size(), "rule", "rules") +
                       " could not be evaluated");
    const Value* unknown = policy->find("unknown");
    if (unknown && unknown->isList() && !unknown->asList().empty())
      issues.push_back(plural(unknown->asList().size(), "rule", "rules") +
                       " cannot judge for missing facts");
  }

  Verdict v;
  std::vector<std::string> parts;
  if (critical || warning) {
    std::string p = critical ? plural(critical, "critical", "critical") : "";
    if (warning) p += std::string(critical ? " and " : "") + plural(warning, "warning", "warning");
    parts.push_back(p + (critical + warning == 1 ? " violation" : " violations"));
  }
  parts.insert(parts.end(), issues.begin(), issues.end());
  if (critical) {
    v.level = "fail";
    v.word = "FAIL";
  } else if (warning || !issues.empty()) {
    v.level = "warn";
    v.word = "WARN";
  } else if (!s.complete) {
    v.level = "pending";
    v.word = "STARTING";
    parts.push_back("the first collection has not finished");
  } else {
    v.level = "ok";
    v.word = "OK";
    parts.push_back(info ? plural(info, "info notice", "info notices") : "no violations");
    parts.push_back(plural(healthy_sources, "source", "sources") + " healthy");
    parts.insert(parts.end(), good.begin(), good.end());
  }
  v.text = v.word;
  for (const auto& p : parts) v.text += " · " + p;
  return v;
}

std::string originWords(std::string_view origin) {
  if (origin == "flag") return "set by --resource-group";
  if (origin == "env") return "from $FABRICWATCH_RESOURCE_GROUP";
  if (origin == "config") return "from policy.resource_group in the configuration";
  if (origin == "label-file") return "from the node-label file (policy.resource_group_file)";
  if (origin == "derived") return "derived from the facts: no group was configured";
  return std::string(origin);
}

std::string stringAt(const Value* v, std::string_view key) {
  const Value* f = v ? v->find(key) : nullptr;
  return f && f->isString() ? f->asString() : "";
}

void renderSummary(std::string& h, const core::Snapshot& s) {
  const Value* node = s.facts.find("node");
  const Value* policy = s.status.find("policy");
  std::string group = stringAt(policy, "resource_group");
  h += "<dl class=\"summary card\"><dt>Node</dt><dd id=\"node-name\">" +
       htmlEscape(stringAt(node, "name")) +
       "</dd><dt>Resource group</dt><dd id=\"resource-group\">";
  if (group.empty()) {
    h += "<span class=\"muted\">not evaluated yet</span>";
  } else {
    h += "<b>" + htmlEscape(group) + "</b> <span class=\"muted\">(" +
         htmlEscape(originWords(stringAt(policy, "resource_group_origin"))) + ")</span>";
  }
  h += "</dd><dt>Snapshot</dt><dd>#" + std::to_string(s.generation) + " published " +
       htmlEscape(core::rfc3339(s.published_at)) +
       (s.complete ? "" : " <span class=\"muted\">(first collection still running)</span>") +
       "</dd><dt>fabricwatch</dt><dd>" + htmlEscape(kVersion) + " <span class=\"muted\">(" +
       htmlEscape(kRevision) + ")</span></dd></dl>";
}

void renderViolations(std::string& h, const core::Snapshot& s) {
  h += "<section id=\"violations\"><h2>Violations</h2>";
  if (s.violations.empty()) {
    h += "<p class=\"card\">None: every applicable rule passes.</p></section>";
    return;
  }
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kSeverities = {
      {{"critical", "Critical"}, {"warning", "Warning"}, {"info", "Info"}}};
  auto known = [](const std::string& sev) {
    return sev == "critical" || sev == "warning" || sev == "info";
  };
  auto section = [&](std::string_view cls, std::string_view title, auto&& pick) {
    size_t n = 0;
    for (const auto& v : s.violations) n += pick(v) ? 1 : 0;
    if (n == 0) return;
    h += "<h3 id=\"severity-" + std::string(cls) + "\">" + std::string(title) + " (" +
         std::to_string(n) + ")</h3>";
    for (const auto& v : s.violations) {
      if (!pick(v)) continue;
      h += "<article class=\"card violation " + std::string(cls) + "\"><h4>" +
           htmlEscape(v.pack + "/" + v.rule) + " <span class=\"tag\">" + htmlEscape(v.subject) +
           "</span></h4><p class=\"message\">" + htmlEscape(v.message) + "</p>";
      if (!v.remediation.empty())
        h += "<p class=\"fix\"><b>Fix:</b> " + htmlEscape(v.remediation) + "</p>";
      h += "</article>";
    }
  };
  for (const auto& [cls, title] : kSeverities)
    section(cls, title, [&](const core::Violation& v) { return v.severity == cls; });
  section("info", "Other", [&](const core::Violation& v) { return !known(v.severity); });
  h += "</section>";
}

void renderTable(std::string& h, const std::string& kind, const std::string& key,
                 const Value::List& items) {
  std::vector<Row> rows;
  for (size_t i = 0; i < items.size() && i < kMaxRows; ++i) rows.push_back(flattenRow(items[i]));
  std::vector<std::string> columns;
  for (const auto& r : rows)
    for (const auto& [c, _] : r)
      if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  std::stable_sort(columns.begin(), columns.end(), [](const std::string& a, const std::string& b) {
    int ra = columnRank(a), rb = columnRank(b);
    return ra != rb ? ra < rb : a < b;
  });
  if (columns.size() > kMaxColumns) columns.resize(kMaxColumns);
  h += "<div class=\"scroll\"><table id=\"probe-" + htmlEscape(kind) + "-" + htmlEscape(key) +
       "\"><thead><tr>";
  for (const auto& c : columns) h += "<th>" + htmlEscape(c) + "</th>";
  h += "</tr></thead><tbody>";
  for (const auto& r : rows) {
    h += rowIsBad(r) ? "<tr class=\"bad\">" : "<tr>";
    for (const auto& c : columns) {
      auto it = r.find(c);
      std::string text = it == r.end() ? "" : formatScalar(c, *it->second);
      h += (c == "error" ? "<td class=\"wrap\">" : "<td>") + htmlEscape(text) + "</td>";
    }
    h += "</tr>";
  }
  h += "</tbody></table></div>";
  if (items.size() > kMaxRows)
    h += "<p class=\"muted\">and " + std::to_string(items.size() - kMaxRows) +
         " more (see /api/v1/facts)</p>";
}

void renderProbeKind(std::string& h, const std::string& kind, const Value& v) {
  h += "<h3 id=\"probe-" + htmlEscape(kind) + "\">" + htmlEscape(kind) + "</h3>";
  if (!v.isMap()) {
    h += "<p class=\"card\">" + htmlEscape(formatScalar(kind, v)) + "</p>";
    return;
  }
  std::string summary;
  for (const auto& [k, f] : v.asMap()) {
    if (f.isList() && !f.asList().empty() && f.asList().front().isMap()) continue;
    std::string text = f.isMap() ? core::toJson(f) : formatScalar(k, f);
    bool bad = isTroubleCounter(k) && f.isInt() && f.asInt() > 0;
    summary += "<dt>" + htmlEscape(k) + "</dt><dd>" + (bad ? "<span class=\"tag bad\">" : "") +
               htmlEscape(text) + (bad ? "</span>" : "") + "</dd>";
  }
  if (!summary.empty()) h += "<dl class=\"summary kv card\">" + summary + "</dl>";
  for (const auto& [k, f] : v.asMap()) {
    if (!f.isList() || f.asList().empty() || !f.asList().front().isMap()) continue;
    h += "<p class=\"muted\">" + htmlEscape(k) + " (" + std::to_string(f.asList().size()) + ")</p>";
    renderTable(h, kind, k, f.asList());
  }
}

void renderProbes(std::string& h, const core::Snapshot& s) {
  h += "<section id=\"probes\"><h2>Peers and probes</h2>";
  const Value* probes = s.facts.find("probes");
  if (!probes || !probes->isMap() || probes->asMap().empty()) {
    h += "<p class=\"card\">The peer mesh is off: no peers are configured "
         "(--peers, --probe.dns-name or probe.peers_file).</p></section>";
    return;
  }
  const Value* mesh = probes->find("mesh");
  const Value* members = mesh ? mesh->find("members") : nullptr;
  if (probes->asMap().size() == 1 && members && members->isInt() && members->asInt() == 0)
    h += "<p class=\"card\">No peers: the mesh is off or has found no member yet "
         "(--peers, --probe.dns-name or probe.peers_file).</p>";
  // The mesh and the echo probe first, then every other kind in name order.
  std::vector<std::string> kinds;
  for (std::string_view k : {"mesh", "tcp"})
    if (probes->find(k)) kinds.emplace_back(k);
  for (const auto& [k, _] : probes->asMap())
    if (k != "mesh" && k != "tcp") kinds.push_back(k);
  for (const auto& k : kinds) renderProbeKind(h, k, *probes->find(k));
  h += "</section>";
}

void renderSources(std::string& h, const core::Snapshot& s) {
  h += "<section id=\"sources\"><h2>Sources</h2><div class=\"scroll\"><table><thead><tr>"
       "<th>source</th><th>state</th><th>last run</th><th>took</th><th>read errors</th>"
       "<th>runs / failures</th><th>last error</th></tr></thead><tbody>";
  for (const auto& src : s.sources) {
    std::string state = !src.ran ? "pending" : src.success ? "ok" : "failed";
    std::string tag = state == "ok" ? "good" : state == "failed" ? "bad" : "";
    h += std::string(state == "failed" ? "<tr class=\"bad\">" : "<tr>") + "<td>" +
         htmlEscape(src.name) + "</td><td><span class=\"tag " + tag + "\">" + state +
         "</span></td><td>" + (src.ran ? htmlEscape(core::rfc3339(src.last_run)) : "") +
         "</td><td>" + (src.ran ? htmlEscape(formatSeconds(src.duration_seconds)) : "") +
         "</td><td>" + std::to_string(src.read_errors_total) + "</td><td>" +
         std::to_string(src.runs_total) + " / " + std::to_string(src.failures_total) +
         "</td><td class=\"wrap\">" + htmlEscape(src.last_error) + "</td></tr>";
  }
  h += "</tbody></table></div></section>";
}

void renderPolicy(std::string& h, const core::Snapshot& s) {
  const Value* policy = s.status.find("policy");
  if (!policy) return;
  h += "<section id=\"policy\"><h2>Policy packs</h2>";
  const Value* ok = policy->find("last_reload_successful");
  if (ok && ok->isBool() && !ok->asBool())
    h += "<p class=\"card violation critical\">The last pack reload failed; the previous packs "
         "still run. " +
         htmlEscape(stringAt(policy, "last_reload_error")) + "</p>";
  h += "<div class=\"scroll\"><table><thead><tr><th>pack</th><th>applies</th><th>pass</th>"
       "<th>fail</th><th>unknown</th><th>error</th><th>took</th></tr></thead><tbody>";
  if (const Value* packs = policy->find("packs"); packs && packs->isList()) {
    for (const auto& p : packs->asList()) {
      auto num = [&](std::string_view k) {
        const Value* f = p.find(k);
        return f && f->isInt() ? f->asInt() : 0;
      };
      const Value* matched = p.find("matched");
      bool applies = matched && matched->isBool() && matched->asBool();
      std::string skipped = stringAt(&p, "skipped");
      const Value* took = p.find("duration_seconds");
      h += std::string(num("fail") || num("error") ? "<tr class=\"bad\">" : "<tr>") + "<td>" +
           htmlEscape(stringAt(&p, "name")) + "</td><td>" +
           (applies ? std::string("yes")
                    : "no" + (skipped.empty() ? "" : " (" + htmlEscape(skipped) + ")")) +
           "</td><td>" + std::to_string(num("pass")) + "</td><td>" + std::to_string(num("fail")) +
           "</td><td>" + std::to_string(num("unknown")) + "</td><td>" +
           std::to_string(num("error")) + "</td><td>" +
           (took && took->isNumber() ? htmlEscape(formatSeconds(took->asDouble())) : "") +
           "</td></tr>";
    }
  }
  h += "</tbody></table></div>";
  // Rules whose facts are missing: what each cannot see, not a fault.
  if (const Value* unknown = policy->find("unknown"); unknown && unknown->isList()) {
    for (const auto& u : unknown->asList()) {
      h += "<p class=\"card\">unknown: " +
           htmlEscape(stringAt(&u, "pack") + "/" + stringAt(&u, "rule") + " (" +
                      stringAt(&u, "subject") + "): " + stringAt(&u, "message")) +
           "</p>";
    }
  }
  if (const Value* errors = policy->find("errors"); errors && errors->isList()) {
    for (const auto& e : errors->asList()) {
      h += "<p class=\"card violation warning\">" +
           htmlEscape(stringAt(&e, "pack") + "/" + stringAt(&e, "rule") + " (" +
                      stringAt(&e, "subject") + "): " + stringAt(&e, "message")) +
           "</p>";
    }
  }
  h += "</section>";
}

}  // namespace

http::HttpResponse statusPage(const core::Snapshot* snap) {
  Verdict verdict = snap ? verdictFor(*snap)
                         : Verdict{"pending", "STARTING",
                                   "STARTING · no snapshot yet: the first collection is running"};
  std::string node = snap ? stringAt(snap->facts.find("node"), "name") : "";
  std::string h;
  h.reserve(32 * 1024);
  h += "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
       "style-src 'unsafe-inline'\">"
       "<meta http-equiv=\"refresh\" content=\"30\"><title>";
  h += htmlEscape(verdict.word + (node.empty() ? "" : " · " + node)) +
       " · fabricwatch</title><style>";
  h += kStyle;
  h += "</style></head><body><main><h1>fabricwatch";
  if (!node.empty()) h += " · " + htmlEscape(node);
  h += "</h1><p id=\"verdict\" class=\"verdict " + verdict.level + "\">" +
       htmlEscape(verdict.text) + "</p>";
  if (snap) {
    renderSummary(h, *snap);
    renderViolations(h, *snap);
    renderProbes(h, *snap);
    renderSources(h, *snap);
    renderPolicy(h, *snap);
  }
  h += "<footer><a href=\"/metrics\">/metrics</a><a href=\"/api/v1/facts\">facts</a>"
       "<a href=\"/api/v1/violations\">violations</a><a href=\"/api/v1/peers\">peers</a>"
       "<a href=\"/healthz\">healthz</a><a href=\"/readyz\">readyz</a></footer>"
       "</main></body></html>\n";
  return {200, "text/html; charset=utf-8", std::move(h)};
}

}  // namespace fabricwatch::exporter
