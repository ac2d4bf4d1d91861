// End-to-end: OpenSSL is loaded on demand (core/openssl.h). The binary does not link libssl or
// libcrypto and exports none of their names; the commands and a plain `serve` never map them
// (the dynamic loader's own record, LD_DEBUG=files, and the daemon's /proc/PID/maps say so);
// a `serve` whose web configuration asks for basic auth maps them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/support/daemon.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"

namespace fabricwatch::testing {
namespace {

bool mentionsOpenSsl(const std::string& text) {
  return text.find("libssl") != std::string::npos || text.find("libcrypto") != std::string::npos;
}

std::string mapsOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The command run with the loader reporting every library it maps, linked or dlopen()ed.
RunResult runTraced(std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/env", "LD_DEBUG=files", binaryPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runCommand(argv);
}

TEST(OpenSslLoadE2ETest, TheBinaryNeitherLinksNorExportsOpenSsl) {
  auto needed = runCommand({"/usr/bin/readelf", "-d", binaryPath()});
  ASSERT_EQ(needed.exit_code, 0) << needed.err;
  EXPECT_NE(needed.out.find("(NEEDED)"), std::string::npos) << needed.out;
  EXPECT_FALSE(mentionsOpenSsl(needed.out)) << needed.out;
  // The trampolines (core/openssl_calls.cc) are hidden: were SSL_new exported, the loaded
  // libssl would call fabricwatch's SSL_new instead of its own.
  auto dynsyms = runCommand({"/usr/bin/readelf", "--dyn-syms", "-W", binaryPath()});
  ASSERT_EQ(dynsyms.exit_code, 0) << dynsyms.err;
  for (const char* name : {" SSL_new", " SSL_CTX_new", " HMAC", " EVP_sha256", " ERR_get_error"})
    EXPECT_EQ(dynsyms.out.find(name), std::string::npos) << name;
}

TEST(OpenSslLoadE2ETest, CommandsNeverMapOpenSsl) {
  TempDir d;
  std::string cfg = d.write("fabricwatch.toml", "[collect]\ninterval = \"1m\"\n");
  const std::vector<std::vector<std::string>> commands = {
      {"version"},
      {"check", "--path.rootfs=" + fixture("p5_efa")},
      {"facts", "--path.rootfs=" + fixture("ib_ndr")},
      {"config", "validate", cfg},
      {"config", "default"},
      {"policy", "validate", sourceDir() + "/config/policies/baseline.yaml"},
  };
  for (const auto& args : commands) {
    auto r = runTraced(args);
    std::string name = args[0] + (args.size() > 1 ? " " + args[1] : "");
    EXPECT_LE(r.exit_code, 1) << name << "\n" << r.err;
    // The trace is there (the check is not vacuous), and names no OpenSSL library.
    EXPECT_NE(r.err.find("file=libc.so.6"), std::string::npos) << name << "\n" << r.err;
    EXPECT_FALSE(mentionsOpenSsl(r.err)) << name << "\n" << r.err;
  }
}

TEST(OpenSslLoadE2ETest, ServeWithoutTlsAuthOrMeshNeverMapsOpenSsl) {
  auto d = startDaemonUnder({"/usr/bin/env", "LD_DEBUG=files"},
                            {"--path.rootfs=" + fixture("ib_ndr"), "--node.name=e2e"});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));
  ASSERT_TRUE(d.waitForStatus("/metrics", 200));
  std::string maps = mapsOf(d.process->pid());
  EXPECT_NE(maps.find("libc.so.6"), std::string::npos) << maps;
  EXPECT_FALSE(mentionsOpenSsl(maps)) << maps;
  EXPECT_FALSE(mentionsOpenSsl(d.process->stderrText())) << d.process->stderrText();
}

TEST(OpenSslLoadE2ETest, ServeWithBasicAuthMapsOpenSsl) {
  TempDir dir;
  std::string web = dir.write("web.yml", "basic_auth_users:\n  alice: " + kAliceHash + "\n");
  auto d = startDaemon(
      {"--path.rootfs=" + fixture("ib_ndr"), "--node.name=e2e", "--web.config.file=" + web});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/metrics", 401));
  std::string maps = mapsOf(d.process->pid());
  EXPECT_NE(maps.find("libssl.so.3"), std::string::npos) << maps;
  EXPECT_NE(maps.find("libcrypto.so.3"), std::string::npos) << maps;
}

}  // namespace
}  // namespace fabricwatch::testing
