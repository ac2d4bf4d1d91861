// Fuzzes what a policy author writes: a pack file (YAML, then every expression in it compiled)
// and the bounded YAML loader every YAML input goes through, with a test's inline facts turned
// into a document. Any bytes must give packs or positioned problems: never a crash, a hang, an
// exception, or an alias expansion past the bound.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/yaml_load.h"
#include "policy/pack_loader.h"
#include "policy/yaml_value.h"
#include "probes/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace policy = fabricwatch::policy;
  namespace core = fabricwatch::core;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  policy::PackLoadResult r =
      policy::loadPackText(text, "fuzz.yaml", fabricwatch::probes::factRoots());
  for (const auto& d : r.problems) {
    if (d.message.empty()) std::abort();
    (void)d.format();
  }
  if (!r.ok() && !r.packs.empty()) std::abort();  // a file with problems yields no pack
  core::YamlLimits limits;
  limits.max_nodes = 20000;  // keeps each run fast; the bound itself is what is tested
  core::YamlDocument doc = core::loadYamlDocument(text, limits);
  if (!doc.error) {
    try {
      (void)policy::yamlToValue(doc.doc);
    } catch (const YAML::Exception&) {
      // A scalar that is not what yaml-cpp expected: the test runner reports these.
    }
  }
  return 0;
}
