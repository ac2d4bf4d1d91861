#pragma once
// Loads policy packs from YAML (apiVersion fabricwatch.io/v1, kind PolicyPack; several packs per
// file separated by ---). Every problem comes back as `FILE:LINE:COL: message` with the
// offending line: YAML syntax, unknown fields, missing or mistyped fields, bad severity or
// subject, duplicate rule ids / variables / pack names, and expression compile errors, whose
// position inside the expression is mapped back to the file (quoted, plain and block scalars).
// Nothing throws; a file with any problem yields no packs.

#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "policy/pack.h"

namespace fabricwatch::policy {

struct PackLoadResult {
  PackSet packs;
  std::vector<core::Diagnostic> problems;
  bool ok() const { return problems.empty(); }
};

// One file's text, compiled against the sources' fact `roots`. Pure: no I/O.
PackLoadResult loadPackText(std::string_view text, std::string_view file, const FactRoots& roots);

// Policy test files (*_test.yaml, *.test.yaml) live next to packs and are skipped as packs.
bool isPolicyTestFile(std::string_view path);
// The pack files under `paths`, in load order: a file is taken as named; a directory gives its
// regular *.yaml / *.yml files, sorted, not recursive, test files skipped. The one scan that
// loading and change detection (PackStore) share, so that they agree on what a pack is.
std::vector<std::string> packFiles(const std::vector<std::string>& paths);
// Loads packFiles(paths). Pack names must be unique across all of them. Each file is a regular
// file of at most kMaxPackBytes.
inline constexpr size_t kMaxPackBytes = 4 << 20;
PackLoadResult loadPackPaths(const std::vector<std::string>& paths, const FactRoots& roots);

// Named pack texts loaded as one set (pack names unique across them): what the build's pack
// compiler loads the shipped packs with (policy/embedded_pack.h).
struct PackText {
  std::string_view name;  // "config/policies/aws-efa.yaml"
  std::string_view text;
};
PackLoadResult loadPackTexts(const std::vector<PackText>& files, const FactRoots& roots);

// The identifiers an expression of a pack may use: the sources' fact roots, resource_group,
// "variables" where variables are visible (not in spec.match.expression), "workload" in
// workload rules.
expr::CompileOptions packExprOptions(const FactRoots& roots, bool workload, bool variables);

// The shipped packs (config/policies/*.yaml), compiled into the binary (policy/embedded_pack.h).
PackLoadResult loadEmbeddedPacks(const FactRoots& roots);

// What the daemon and `check` run: the shipped packs (when `shipped`), then the packs under
// `paths`; a pack from `paths` replaces a shipped pack of the same name.
PackLoadResult loadPolicySet(const std::vector<std::string>& paths, bool shipped,
                             const FactRoots& roots);

}  // namespace fabricwatch::policy
