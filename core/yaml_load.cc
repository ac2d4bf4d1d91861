#include "core/yaml_load.h"

#include <yaml-cpp/eventhandler.h>

#include <limits>
#include <sstream>

namespace fabricwatch::core {
namespace {

// yaml-cpp 0.7 (Debian 12's) answers a document that starts with a token no node can start
// with (a `,` at the top level; a stray `]` or `}` is already a scanner error) with an empty
// document that consumes nothing, so YAML::LoadAll asks for the next document forever, allocating a
// node each time (found by policy_pack_fuzz); YAML::Load returns null and ignores the rest of the
// file. So the stream's events are walked first, building nothing, and a document that starts where
// the previous one started is a syntax error at that position. The scanner is most of yaml-cpp's
// cost, so this pass costs about as much as the parse (YamlOrigin); a syntax error ends it early.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  std::vector<YAML::Mark> starts;
};

// The error for the first document (of at most `max_docs`) that consumes nothing; throws
// YAML::Exception for a syntax error in the documents it walks.
std::optional<YamlError> stuckDocument(const std::string& text, size_t max_docs) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts events;
  for (size_t n = 0; n < max_docs && parser.HandleNextDocument(events); ++n) {
    size_t count = events.starts.size();
    if (count < 2 || events.starts[count - 1].pos != events.starts[count - 2].pos) continue;
    const YAML::Mark& m = events.starts.back();
    std::string what = "this token";
    if (m.pos >= 0 && static_cast<size_t>(m.pos) < text.size()) {
      char c = text[static_cast<size_t>(m.pos)];
      if (c > ' ' && c < 0x7f) what = std::string("'") + c + "'";
    }
    return YamlError{m.line + 1, m.column + 1,
                     "YAML syntax error: a document cannot start with " + what};
  }
  return std::nullopt;
}

class Walk {
 public:
  explicit Walk(const YamlLimits& limits) : limits_(limits) {}

  // False (with error_ set) as soon as the walk passes a bound.
  bool visit(const YAML::Node& n, size_t depth) {
    if (++nodes_ > limits_.max_nodes) {
      return fail(n, "YAML document expands to more than " + std::to_string(limits_.max_nodes) +
                         " nodes (aliases counted as often as they are used)");
    }
    if (depth > limits_.max_depth)
      return fail(n, "YAML nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    if (n.IsSequence()) {
      for (const auto& item : n)
        if (!visit(item, depth + 1)) return false;
    } else if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (!visit(it->first, depth + 1) || !visit(it->second, depth + 1)) return false;
      }
    }
    return true;
  }

  std::optional<YamlError> error() const { return error_; }

 private:
  bool fail(const YAML::Node& n, std::string message) {
    YAML::Mark m = n.Mark();
    error_ =
        YamlError{m.is_null() ? 1 : m.line + 1, m.is_null() ? 1 : m.column + 1, std::move(message)};
    return false;
  }

  const YamlLimits& limits_;
  size_t nodes_ = 0;
  std::optional<YamlError> error_;
};

YamlError syntaxError(const YAML::Exception& e) {
  return YamlError{e.mark.is_null() ? 1 : e.mark.line + 1, e.mark.is_null() ? 1 : e.mark.column + 1,
                   "YAML syntax error: " + e.msg};
}

}  // namespace

std::optional<YamlError> checkYamlLimits(const YAML::Node& node, const YamlLimits& limits) {
  Walk w(limits);
  w.visit(node, 0);
  return w.error();
}

YamlDocuments loadYamlDocuments(std::string_view text, const YamlLimits& limits,
                                YamlOrigin origin) {
  YamlDocuments out;
  std::string copy(text);
  try {
    if (origin == YamlOrigin::kUntrusted) {
      if (auto stuck = stuckDocument(copy, std::numeric_limits<size_t>::max())) {
        out.error = std::move(stuck);
        return out;
      }
    }
    out.docs = YAML::LoadAll(copy);
  } catch (const YAML::Exception& e) {
    out.error = syntaxError(e);
    return out;
  }
  for (const auto& d : out.docs) {
    if (auto e = checkYamlLimits(d, limits)) {
      out.docs.clear();
      out.error = std::move(e);
      break;
    }
  }
  return out;
}

YamlDocument loadYamlDocument(std::string_view text, const YamlLimits& limits) {
  YamlDocument out;
  std::string copy(text);
  try {
    // The first document, and the next two only as far as telling whether the first consumed
    // anything (a first document of `--- ]` is `---` and then `]`, which the third document
    // starts with again); a syntax error further on is not this reader's, as YAML::Load reads
    // one document.
    std::optional<YamlError> stuck;
    try {
      stuck = stuckDocument(copy, 3);
    } catch (const YAML::Exception&) {
      // Reported by YAML::Load below if it is in the first document.
    }
    if (stuck) {
      out.error = std::move(stuck);
      return out;
    }
    out.doc = YAML::Load(copy);
  } catch (const YAML::Exception& e) {
    out.error = syntaxError(e);
    return out;
  }
  if (auto e = checkYamlLimits(out.doc, limits)) {
    out.doc = YAML::Node();
    out.error = std::move(e);
  }
  return out;
}

}  // namespace fabricwatch::core
