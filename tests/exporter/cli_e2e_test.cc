// End-to-end: the CLI's commands, exit codes and messages.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

TEST(CliE2ETest, VersionPrintsVersionRevisionAndBuild) {
  auto r = runCommand({binaryPath(), "version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("fabricwatch, version 0."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("revision:"), std::string::npos);
  EXPECT_NE(r.out.find("build:"), std::string::npos);
}

TEST(CliE2ETest, HelpAndUsageErrors) {
  EXPECT_EQ(runCommand({binaryPath(), "--help"}).exit_code, 0);
  EXPECT_EQ(runCommand({binaryPath()}).exit_code, 2);
  auto unknown = runCommand({binaryPath(), "frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown command \"frobnicate\""), std::string::npos);
  auto badflag = runCommand({binaryPath(), "serve", "--no-such-flag"});
  EXPECT_EQ(badflag.exit_code, 2);
  EXPECT_NE(badflag.err.find("unknown flag --no-such-flag"), std::string::npos);
  auto serve_help = runCommand({binaryPath(), "serve", "--help"});
  EXPECT_EQ(serve_help.exit_code, 0);
  EXPECT_NE(serve_help.out.find("--web.listen-address"), std::string::npos);
}

TEST(CliE2ETest, ConfigValidateReportsEachProblemWithItsPosition) {
  TempDir d;
  std::string good = d.write("good.toml", "[collect]\ninterval = \"1m\"\n");
  std::string bad = d.write("bad.toml",
                            "[web]\nbogus = 1\n[collect]\ninterval = \"5 "
                            "parsecs\"\n[collect.sources.nope]\nenabled = true\n");
  auto ok = runCommand({binaryPath(), "config", "validate", good});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto r = runCommand({binaryPath(), "config", "validate", bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(bad + ":2:1: unknown key \"web.bogus\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(bad + ":4:12: bad duration \"5 parsecs\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(bad + ":5:18: unknown source \"nope\""), std::string::npos) << r.err;
}

TEST(CliE2ETest, ConfigDefaultPrintsTheShippedFile) {
  auto r = runCommand({binaryPath(), "config", "default"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("listen_address = \":19736\""), std::string::npos);
  TempDir d;
  std::string f = d.write("default.toml", r.out);
  EXPECT_EQ(runCommand({binaryPath(), "config", "validate", f}).exit_code, 0);
}

TEST(CliE2ETest, FactsPrintsTheDocumentFromARoot) {
  TempDir root;
  root.write("proc/sys/kernel/osrelease", "5.10.0-28-cloud-amd64\n");
  auto json = runCommand({binaryPath(), "facts", "--path.rootfs=" + root.path()});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"release\": \"5.10.0-28-cloud-amd64\""), std::string::npos) << json.out;
  auto yaml = runCommand({binaryPath(), "facts", "--path.rootfs=" + root.path(), "--format=yaml"});
  EXPECT_EQ(yaml.exit_code, 0);
  EXPECT_NE(yaml.out.find("release: \"5.10.0-28-cloud-amd64\""), std::string::npos) << yaml.out;
  EXPECT_EQ(runCommand({binaryPath(), "facts", "--format=xml"}).exit_code, 2);
  auto missing = runCommand({binaryPath(), "facts", "--path.rootfs=/no/such/root"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("\"/no/such/root\" is not a directory"), std::string::npos)
      << missing.err;
  // A relative root is taken from the working directory.
  std::string rel = std::filesystem::relative(root.path()).string();
  ASSERT_NE(rel.front(), '/');
  auto relative = runCommand({binaryPath(), "facts", "--path.rootfs=" + rel});
  EXPECT_EQ(relative.exit_code, 0) << relative.err;
  EXPECT_EQ(relative.out, json.out);
}

}  // namespace
}  // namespace fabricwatch::testing
