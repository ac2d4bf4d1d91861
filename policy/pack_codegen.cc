#include "policy/pack_codegen.h"

#include <cstdio>

namespace fabricwatch::policy {
namespace {

std::string pos(int line, int column) {
  return "{" + std::to_string(line) + ", " + std::to_string(column) + "}";
}

std::string exprData(const CompiledExpr* e) {
  if (!e) return "{}";
  return "{true, " + cppStringView(e->text) + ", " + pos(e->pos.line, e->pos.column) + "}";
}

const char* severityEnum(Severity s) {
  switch (s) {
    case Severity::kCritical:
      return "Severity::kCritical";
    case Severity::kWarning:
      return "Severity::kWarning";
    case Severity::kInfo:
      break;
  }
  return "Severity::kInfo";
}

}  // namespace

std::string cppStringView(std::string_view s) {
  std::string out = "std::string_view(\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c >= 0x20 && c < 0x7f && c != '?') {  // '?': no trigraph-like runs
      out += static_cast<char>(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\%03o", c);  // always 3 digits: a digit after it stays
      out += buf;
    }
  }
  return out + "\", " + std::to_string(s.size()) + ")";
}

std::string packSetSource(const PackSet& packs) {
  std::string out =
      "// Generated at build time by fw_embed_packs from config/policies/*.yaml: the shipped\n"
      "// packs as loaded (policy/embedded_pack.h). Do not edit.\n"
      "#include <array>\n\n#include \"policy/embedded_pack.h\"\n\n"
      "namespace fabricwatch::policy {\nnamespace {\n\n";
  for (size_t i = 0; i < packs.size(); ++i) {
    const Pack& p = packs[i];
    std::string n = std::to_string(i);
    if (!p.resource_groups.empty()) {
      out += "constexpr std::string_view kGroups" + n + "[] = {\n";
      for (const auto& g : p.resource_groups) out += "    " + cppStringView(g) + ",\n";
      out += "};\n";
    }
    if (!p.variables.empty()) {
      out += "constexpr EmbeddedVariable kVariables" + n + "[] = {\n";
      for (const auto& v : p.variables)
        out += "    {" + cppStringView(v.name) + ", " + exprData(&v.expr) + "},\n";
      out += "};\n";
    }
    if (!p.rules.empty()) {
      out += "constexpr EmbeddedRule kRules" + n + "[] = {\n";
      for (const auto& r : p.rules) {
        out += "    {" + cppStringView(r.id) + ",\n     " + cppStringView(r.description) +
               ",\n     " + severityEnum(r.severity) + ", " +
               (r.subject == Subject::kWorkload ? "Subject::kWorkload" : "Subject::kNode") +
               ",\n     " + exprData(&r.expression) + ",\n     " + cppStringView(r.message) +
               ",\n     " + exprData(r.message_expression ? &*r.message_expression : nullptr) +
               ",\n     " + exprData(r.unknown_when ? &*r.unknown_when : nullptr) + ",\n     " +
               cppStringView(r.unknown_message) + ",\n     " +
               exprData(r.unknown_message_expression ? &*r.unknown_message_expression : nullptr) +
               ",\n     " + cppStringView(r.remediation) + ",\n     " +
               pos(r.pos.line, r.pos.column) + "},\n";
      }
      out += "};\n";
    }
    out += "\n";
  }
  out += "constexpr EmbeddedPack kPacks[] = {\n";
  for (size_t i = 0; i < packs.size(); ++i) {
    const Pack& p = packs[i];
    std::string n = std::to_string(i);
    out += "    {" + cppStringView(p.pos.file) + ",\n     " + cppStringView(p.name) + ",\n     " +
           cppStringView(p.description) + ",\n     " + pos(p.pos.line, p.pos.column) + ",\n     " +
           (p.resource_groups.empty() ? "{}" : "kGroups" + n) + ",\n     " +
           exprData(p.match_expression ? &*p.match_expression : nullptr) + ",\n     " +
           (p.variables.empty() ? "{}" : "kVariables" + n) + ",\n     " +
           (p.rules.empty() ? "{}" : "kRules" + n) + "},\n";
  }
  if (packs.empty()) out += "    {},\n";  // no zero-length array; the span below excludes it
  out += "};\n\n}  // namespace\n\nstd::span<const EmbeddedPack> embeddedPacks() {\n";
  out += "  return std::span<const EmbeddedPack>(kPacks, " + std::to_string(packs.size()) + ");\n";
  out += "}\n\n}  // namespace fabricwatch::policy\n";
  return out;
}

}  // namespace fabricwatch::policy
