// End-to-end: headless Chromium (Debian's package) loads the status page of a running
// `fabricwatch serve` on a fixture root with violations, and the DOM it builds shows the
// verdict, the node, the resource group, a violation with its remediation, and a hostile
// string from a policy pack as text, never as markup.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "tests/support/daemon.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/require.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

// A pack whose rule always fails, with markup in its message and remediation.
const char* kHostilePack = R"(apiVersion: fabricwatch.io/v1
kind: PolicyPack
metadata: {name: hostile}
spec:
  rules:
    - id: always
      severity: warning
      expression: 'false'
      message: '<script>document.title="pwned"</script><img src=x onerror=alert(1)>'
      remediation: 'Type <b>bold</b> & "quoted" text.'
)";

std::string chromiumPath() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

// The flags a root user in a container needs, and none that reach the network.
std::vector<std::string> chromiumArgs(const std::string& profile) {
  return {chromiumPath(),
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--user-data-dir=" + profile};
}

TEST(StatusPageE2ETest, ChromiumShowsTheVerdictViolationsAndEscapedText) {
  if (chromiumPath().empty())
    FW_UNAVAILABLE("tools") << "chromium is not installed (scripts/dev installs it)";
  TempDir dir;
  dir.write("packs/hostile.yaml", kHostilePack);
  auto d = startDaemon({"--path.rootfs=" + fixture("broken"),
                        "--policy.path=" + dir.path() + "/packs", "--node.name=gpu-node-<i>7</i>"});
  ASSERT_NE(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200, std::chrono::seconds(30)));

  std::string url = "http://127.0.0.1:" + std::to_string(d.port) + "/";
  auto args = chromiumArgs(dir.path() + "/profile");
  args.push_back("--dump-dom");
  args.push_back(url);
  RunResult r = runCommand(args, std::chrono::seconds(90));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& dom = r.out;

  // The verdict line comes first and counts the broken fixture's violations plus the pack's.
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(dom, m, std::regex(R"(<p id="verdict" class="verdict fail">([^<]*)</p>)")))
      << dom;
  EXPECT_EQ(m[1].str().rfind("FAIL · 3 critical and 4 warning violations", 0), 0u) << m[1] << dom;
  EXPECT_LT(dom.find("id=\"verdict\""), dom.find("id=\"violations\""));

  EXPECT_NE(dom.find("<title>FAIL · gpu-node-&lt;i&gt;7&lt;/i&gt; · fabricwatch</title>"),
            std::string::npos)
      << dom;
  EXPECT_NE(dom.find("id=\"node-name\">gpu-node-&lt;i&gt;7&lt;/i&gt;</dd>"), std::string::npos);
  EXPECT_NE(dom.find("id=\"resource-group\"><b>infiniband</b> <span class=\"muted\">(derived"),
            std::string::npos);

  // A critical violation with its remediation, under the critical heading.
  size_t critical = dom.find("id=\"severity-critical\">Critical (3)");
  size_t rule = dom.find("baseline/rdma-ports-active");
  ASSERT_NE(critical, std::string::npos);
  ASSERT_NE(rule, std::string::npos);
  EXPECT_LT(critical, rule);
  EXPECT_NE(dom.find("Drain the node until every port is ACTIVE.", rule), std::string::npos);

  // The hostile pack: its markup is text. The browser built no script or image from it, and
  // the script did not run (the title is still fabricwatch's).
  EXPECT_NE(dom.find("&lt;script&gt;document.title=\"pwned\"&lt;/script&gt;&lt;img src=x "
                     "onerror=alert(1)&gt;"),
            std::string::npos);
  EXPECT_NE(dom.find("Type &lt;b&gt;bold&lt;/b&gt; &amp; \"quoted\" text."), std::string::npos);
  EXPECT_EQ(dom.find("<script"), std::string::npos);
  EXPECT_EQ(dom.find("<img"), std::string::npos);
  EXPECT_EQ(dom.find("<i>7</i>"), std::string::npos);
  EXPECT_EQ(dom.find("pwned</title>"), std::string::npos);

  // Every source, healthy.
  for (const char* source : {"kernel", "rdma", "net", "gpu", "memory", "software", "nccl"})
    EXPECT_NE(dom.find(std::string("<td>") + source + "</td><td><span class=\"tag good\">ok"),
              std::string::npos)
        << source;
}

}  // namespace
}  // namespace fabricwatch::testing
