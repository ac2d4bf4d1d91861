#include "core/value_format.h"

#include <charconv>
#include <cmath>
#include <ctime>

#include "core/utf8.h"

namespace fabricwatch::core {
namespace {

void appendDouble(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";  // JSON has no NaN/Inf; absent beats wrong
    return;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string_view s(buf, end - buf);
  out += s;
  // Keep doubles recognisable as doubles when read back (1.0, not 1).
  if (s.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

void appendScalar(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      out += "null";
      break;
    case Value::Kind::kBool:
      out += v.asBool() ? "true" : "false";
      break;
    case Value::Kind::kInt:
      out += std::to_string(v.asInt());
      break;
    case Value::Kind::kDouble:
      appendDouble(out, v.asDouble());
      break;
    case Value::Kind::kString:
      appendJsonString(out, v.asString());
      break;
    default:
      break;
  }
}

void newline(std::string& out, int indent, int depth) {
  if (indent < 0) return;
  out += '\n';
  out.append(static_cast<size_t>(indent * depth), ' ');
}

void writeJson(std::string& out, const Value& v, int indent, int depth) {
  if (v.isList()) {
    const auto& l = v.asList();
    if (l.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t i = 0; i < l.size(); ++i) {
      if (i) out += ',';
      newline(out, indent, depth + 1);
      writeJson(out, l[i], indent, depth + 1);
    }
    newline(out, indent, depth);
    out += ']';
  } else if (v.isMap()) {
    const auto& m = v.asMap();
    if (m.empty()) {
      out += "{}";
      return;
    }
    out += '{';
    bool first = true;
    for (const auto& [k, child] : m) {
      if (!first) out += ',';
      first = false;
      newline(out, indent, depth + 1);
      appendJsonString(out, k);
      out += indent < 0 ? ":" : ": ";
      writeJson(out, child, indent, depth + 1);
    }
    newline(out, indent, depth);
    out += '}';
  } else {
    appendScalar(out, v);
  }
}

bool plainYamlKey(std::string_view k) {
  if (k.empty()) return false;
  for (char c : k) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return !(k == "true" || k == "false" || k == "null" || k == "y" || k == "n");
}

void appendYamlKey(std::string& out, std::string_view k) {
  if (plainYamlKey(k))
    out += k;
  else
    appendJsonString(out, k);
}

bool isEmptyContainer(const Value& v) { return (v.isList() || v.isMap()) && v.size() == 0; }

void writeYaml(std::string& out, const Value& v, int depth) {
  std::string pad(static_cast<size_t>(2 * depth), ' ');
  if (v.isMap()) {
    for (const auto& [k, child] : v.asMap()) {
      out += pad;
      appendYamlKey(out, k);
      out += ':';
      if ((child.isMap() || child.isList()) && !isEmptyContainer(child)) {
        out += '\n';
        writeYaml(out, child, child.isList() ? depth : depth + 1);
      } else {
        out += ' ';
        if (child.isMap())
          out += "{}";
        else if (child.isList())
          out += "[]";
        else
          appendScalar(out, child);
        out += '\n';
      }
    }
  } else if (v.isList()) {
    for (const auto& item : v.asList()) {
      out += pad;
      out += "- ";
      if ((item.isMap() || item.isList()) && !isEmptyContainer(item)) {
        // First line of a nested block goes on the dash line; the rest are indented under it.
        std::string nested;
        writeYaml(nested, item, depth + 1);
        out += nested.substr(pad.size() + 2);
      } else {
        if (item.isMap())
          out += "{}";
        else if (item.isList())
          out += "[]";
        else
          appendScalar(out, item);
        out += '\n';
      }
    }
  } else {
    out += pad;
    appendScalar(out, v);
    out += '\n';
  }
}

}  // namespace

void appendJsonString(std::string& out, std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  if (!isValidUtf8(s)) {
    // Whatever reaches here unchecked (a live peer's name, a log field), the JSON stays valid.
    std::string fixed(s);
    makeValidUtf8(fixed);
    appendJsonString(out, fixed);
    return;
  }
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

std::string toJson(const Value& v, int indent) {
  std::string out;
  writeJson(out, v, indent, 0);
  return out;
}

std::string toYaml(const Value& v) {
  std::string out;
  if (!v.isMap() && !v.isList()) {
    appendScalar(out, v);
    out += '\n';
    return out;
  }
  writeYaml(out, v, 0);
  return out;
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace fabricwatch::core
