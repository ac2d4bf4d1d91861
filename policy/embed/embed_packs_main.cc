// fw_embed_packs: the build's pack compiler. Loads the shipped packs with the loader every pack
// goes through and writes them as constant data (policy/embedded_pack.h), so the binary does not
// parse their YAML at run time. A problem in a shipped pack fails the build with its position.
//
//   fw_embed_packs OUT.cc ROOT FILE...   (FILE named relative to ROOT in positions)
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "policy/pack_codegen.h"
#include "policy/pack_loader.h"
#include "probes/registry.h"

int main(int argc, char** argv) {
  namespace policy = fabricwatch::policy;
  if (argc < 3) {
    std::cerr << "usage: fw_embed_packs OUT.cc ROOT FILE...\n";
    return 2;
  }
  std::vector<std::string> names, texts;
  for (int i = 3; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      std::cerr << argv[i] << ": cannot read\n";
      return 1;
    }
    names.push_back(std::filesystem::relative(argv[i], argv[2]).generic_string());
    texts.push_back(text.str());
  }
  std::vector<policy::PackText> files;
  for (size_t i = 0; i < names.size(); ++i) files.push_back({names[i], texts[i]});
  // Compiled against the roots the binary's sources declare, as they are at run time.
  policy::PackLoadResult r = policy::loadPackTexts(files, fabricwatch::probes::factRoots());
  if (!r.ok()) {
    std::cerr << fabricwatch::core::formatAll(r.problems);
    return 1;
  }
  std::string source = policy::packSetSource(r.packs);
  std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
  out << source;
  return out.flush() ? 0 : 1;
}
