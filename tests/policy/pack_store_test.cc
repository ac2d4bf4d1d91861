// The pack store's change detection: it watches exactly the files it loads.
#include "policy/pack_store.h"

#include <gtest/gtest.h>

#include "policy/pack_loader.h"
#include "tests/support/registry.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::policy {
namespace {

using namespace std::chrono_literals;

const char* kStorePack = R"(apiVersion: fabricwatch.io/v1
kind: PolicyPack
metadata: {name: demo}
spec:
  rules:
    - {id: release, severity: critical, expression: 'has(kernel.release)', remediation: x}
)";

const char* kTest = R"(apiVersion: fabricwatch.io/v1
kind: PolicyTest
tests:
  - {name: t, facts: {}, expectedViolations: []}
)";

TEST(PackStoreTest, PackFilesAreWhatLoadingReads) {
  testing::TempDir dir;
  dir.write("b.yaml", kStorePack);
  dir.write("a.yml",
            std::string(kStorePack).replace(std::string(kStorePack).find("demo"), 4, "other"));
  dir.write("b_test.yaml", kTest);
  dir.write("c.test.yml", kTest);
  dir.write("notes.txt", "not a pack");
  std::string single = dir.write("elsewhere/one.yaml", kStorePack);
  auto files = packFiles({dir.path(), single});
  std::vector<std::string> want = {dir.path() + "/a.yml", dir.path() + "/b.yaml", single};
  EXPECT_EQ(files, want);
}

// A policy test file lives next to its pack; editing it must not reload the packs (the loader
// skips it, so change detection must too).
TEST(PackStoreTest, EditingATestFileDoesNotReloadThePacks) {
  testing::TempDir dir;
  dir.write("demo.yaml", kStorePack);
  dir.write("demo_test.yaml", kTest);
  PackStore store(PackStoreOptions{{dir.path()}, /*shipped=*/false, 1ms, testing::factRoots()});
  ASSERT_TRUE(store.reload().empty());
  auto now = std::chrono::steady_clock::now();
  EXPECT_FALSE(store.reloadIfChanged(now));
  dir.write("demo_test.yaml",
            std::string(kTest) + "  - {name: u, facts: {}, expectedViolations: []}\n");
  EXPECT_FALSE(store.reloadIfChanged(now + 1s)) << "a test file's edit reloaded the packs";
  EXPECT_EQ(store.lastReload().reloads_total, 1u);
  // An edit of the pack itself still reloads.
  dir.write("demo.yaml",
            std::string(kStorePack) +
                "    - {id: more, severity: info, expression: 'true', remediation: y}\n");
  EXPECT_TRUE(store.reloadIfChanged(now + 2s));
  EXPECT_EQ(store.current()->front().rules.size(), 2u);
}

}  // namespace
}  // namespace fabricwatch::policy
