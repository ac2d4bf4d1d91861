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
#include "exporter/node_verdict.h"
#include "exporter/status_page_style.h"

namespace fabricwatch::exporter {
namespace {

using core::Value;

// Rows per probe table and columns per row; peers are bounded upstream, this bounds the page.
constexpr size_t kMaxRows = 100;
constexpr size_t kMaxColumns = 16;

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
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
           "</span>";
      if (v.state == "recovering") h += " <span class=\"tag recovering\">recovering</span>";
      h += "</h4><p class=\"message\">" + htmlEscape(v.message) + "</p>";
      // Its lifecycle where serve tracks it: since when, and since when it passes again.
      if (!v.state.empty()) {
        h += "<p class=\"lifecycle muted\">Began " + htmlEscape(core::rfc3339(v.began_at));
        if (v.state == "recovering")
          h += "; passing again since " + htmlEscape(core::rfc3339(v.recovering_since)) +
               ", reported until its hold ends";
        h += "</p>";
      }
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

// Violations whose hold ended (serve), newest first, from status["policy"]["cleared"].
void renderCleared(std::string& h, const core::Snapshot& s) {
  const core::Value* st = s.status.find("policy");
  const core::Value* list = st ? st->find("cleared") : nullptr;
  if (!list || !list->isList() || list->asList().empty()) return;
  auto text = [](const core::Value& v, const char* k) {
    const auto* f = v.find(k);
    return f && f->isString() ? f->asString() : std::string();
  };
  h += "<section id=\"cleared\"><h2>Recently cleared</h2><table><tr><th>Rule</th><th>Subject"
       "</th><th>Began</th><th>Passing since</th><th>Cleared</th></tr>";
  for (const auto& c : list->asList()) {
    h += "<tr><td>" + htmlEscape(text(c, "pack") + "/" + text(c, "rule")) + "</td><td>" +
         htmlEscape(text(c, "subject")) + "</td><td>" + htmlEscape(text(c, "began_at")) +
         "</td><td>" + htmlEscape(text(c, "recovering_since")) + "</td><td>" +
         htmlEscape(text(c, "cleared_at")) + "</td></tr>";
  }
  h += "</table></section>";
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

// Where the node sits: its labels, lldpd's state, and every NIC whose place is known (its
// switch and switch port, or its InfiniBand subnet and subnet manager).
void renderTopology(std::string& h, const core::Snapshot& s) {
  const Value* t = s.facts.find("topology");
  if (!t || !t->isMap()) return;
  h += "<section id=\"topology\"><h2>Topology</h2><dl class=\"summary kv card\">";
  const Value* labels = t->find("labels");
  if (labels && labels->isMap())
    for (const auto& [k, v] : labels->asMap())
      h += "<dt>" + htmlEscape(k) + "</dt><dd>" + htmlEscape(formatScalar(k, v)) + "</dd>";
  const Value* lldp = t->find("lldp");
  std::string status = lldp ? stringAt(lldp, "status") : "";
  std::string error = lldp ? stringAt(lldp, "error") : "";
  h += "<dt>lldpd</dt><dd>" + htmlEscape(status + (error.empty() ? "" : ": " + error)) +
       "</dd></dl>";
  Value::List rows;
  const Value* nics = t->find("nics");
  for (const auto& nic : nics && nics->isList() ? nics->asList() : Value::List{}) {
    const Value* ns = nic.find("neighbors");
    if (ns && ns->isList() && !ns->asList().empty()) {
      for (const auto& n : ns->asList()) {
        Value row = nic;
        row.asMap().erase("neighbors");
        for (const char* k : {"switch", "switch_port", "switch_port_descr"})
          if (const Value* v = n.find(k)) row[k] = *v;
        rows.push_back(std::move(row));
      }
    } else if (nic.find("subnet_prefix")) {
      rows.push_back(nic);
    }
  }
  if (!rows.empty()) renderTable(h, "topology", "nics", rows);
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
  NodeVerdict verdict =
      snap ? nodeVerdict(*snap)
           : NodeVerdict{"pending", "STARTING",
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
  h += kStatusPageStyle;
  h += "</style></head><body><main><h1>fabricwatch";
  if (!node.empty()) h += " · " + htmlEscape(node);
  h += "</h1><p id=\"verdict\" class=\"verdict " + verdict.level + "\">" +
       htmlEscape(verdict.text) + "</p>";
  if (snap) {
    renderSummary(h, *snap);
    renderViolations(h, *snap);
    renderCleared(h, *snap);
    renderProbes(h, *snap);
    renderTopology(h, *snap);
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
