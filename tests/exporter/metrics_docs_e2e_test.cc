// docs/metrics.md is the reference for every metric family: this test scrapes the real binary
// on fixture roots and checks each family's name, type, labels and help against it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/daemon.h"
#include "tests/support/paths.h"
#include "tests/support/tcp_client.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

struct Family {
  std::string type;
  std::string help;
  std::set<std::string> labels;
};

std::string readDocFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, Family> documented() {
  std::map<std::string, Family> out;
  std::string text = readDocFile(sourceDir() + "/docs/metrics.md");
  std::regex row(R"(\n\| `([a-zA-Z_:][a-zA-Z0-9_:]*)` \| (\w+) \|([^|]*)\| (.*) \|)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator();
       ++it) {
    Family f;
    f.type = (*it)[2];
    f.help = (*it)[4];
    std::stringstream labels((*it)[3].str());
    std::string l;
    while (std::getline(labels, l, ',')) {
      l.erase(0, l.find_first_not_of(' '));
      l.erase(l.find_last_not_of(' ') + 1);
      if (!l.empty()) f.labels.insert(l);
    }
    out[(*it)[1]] = f;
  }
  return out;
}

// Families in an exposition: HELP/TYPE lines and the label names of their samples.
std::map<std::string, Family> served(const std::string& text) {
  std::map<std::string, Family> out;
  std::stringstream in(text);
  std::string line;
  std::regex help(R"(# HELP (\S+) (.*))"), type(R"(# TYPE (\S+) (\S+))"),
      label(R"(([a-zA-Z_][a-zA-Z0-9_]*)=")");
  std::string current;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      current = m[1];
      out[current].help = m[2];
    } else if (std::regex_match(line, m, type)) {
      out[m[1]].type = m[2];
    } else if (!line.empty() && line[0] != '#' && !current.empty()) {
      auto brace = line.find('{');
      if (brace == std::string::npos) continue;
      std::string labels = line.substr(brace, line.find('}') - brace);
      for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label);
           it != std::sregex_iterator(); ++it) {
        std::string name = (*it)[1];
        if (name != "le" && name != "quantile") out[current].labels.insert(name);
      }
    }
  }
  return out;
}

// The roots scraped: a minimal one, plus every fixture root the repository has.
std::vector<std::string> roots(const TempDir& minimal) {
  std::vector<std::string> out = {minimal.path()};
  std::string fixtures = sourceDir() + "/tests/fixtures";
  if (std::filesystem::exists(fixtures)) {
    for (const auto& e : std::filesystem::directory_iterator(fixtures)) {
      if (e.is_directory() && std::filesystem::exists(e.path() / "sys"))
        out.push_back(e.path().string());
    }
  }
  return out;
}

// Checks every family of one exposition against the docs; returns the names seen.
std::set<std::string> checkAgainstDocs(const std::string& exposition, const std::string& where) {
  static const auto docs = documented();
  std::set<std::string> seen;
  for (const auto& [name, f] : served(exposition)) {
    seen.insert(name);
    auto it = docs.find(name);
    if (it == docs.end()) {
      ADD_FAILURE() << "`" << name << "` (" << f.type << ") is served on " << where
                    << " but missing from docs/metrics.md";
      continue;
    }
    EXPECT_EQ(it->second.type, f.type) << name;
    EXPECT_EQ(it->second.help, f.help) << name;
    for (const auto& l : f.labels)
      EXPECT_TRUE(it->second.labels.count(l)) << name << " label " << l << " is not documented";
  }
  return seen;
}

// A configuration that turns every optional series on ("*" in every table that has some).
std::string everythingConfig(const TempDir& dir) {
  return dir.write("all.toml",
                   "[collect]\nextra_metrics = [\"*\"]\n[policy]\nextra_metrics = [\"*\"]\n"
                   "[collect.sources.rdma]\nextra_metrics = [\"*\"]\n"
                   "[collect.sources.gpu]\nextra_metrics = [\"*\"]\n");
}

// The second scrape of a daemon on `root` (it also carries the HTTP request metrics).
std::string scrape(const std::string& root, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"--path.rootfs=" + root};
  args.insert(args.end(), extra.begin(), extra.end());
  auto d = startDaemon(args);
  EXPECT_GT(d.port, 0) << d.process->stderrText();
  if (d.port == 0 || !d.waitForStatus("/readyz", 200)) return "";
  d.get("/metrics");
  auto m = d.get("/metrics");
  return m ? m->body : "";
}

size_t seriesIn(const std::string& exposition) {
  size_t n = 0;
  std::stringstream in(exposition);
  std::string line;
  // Requests to other routes than /metrics (the test's polls of /readyz, which may or may not
  // see a 503 first) add a series per route and code: not counted.
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("fabricwatch_http_requests_total{", 0) == 0 &&
        line.find("route=\"/metrics\"") == std::string::npos)
      continue;
    ++n;
  }
  return n;
}

TEST(MetricsDocsE2ETest, EveryServedFamilyIsDocumentedExactly) {
  ASSERT_FALSE(documented().empty());
  TempDir minimal;
  minimal.write("proc/sys/kernel/osrelease", "6.1.0\n");
  TempDir cfg;
  std::string all = everythingConfig(cfg);
  std::set<std::string> seen;
  for (const auto& root : roots(minimal)) {
    // With the defaults, and with every optional series on.
    for (const auto& extra : {std::vector<std::string>{}, {"--config.file=" + all}}) {
      auto names = checkAgainstDocs(scrape(root, extra), root);
      seen.insert(names.begin(), names.end());
    }
  }
  EXPECT_TRUE(seen.count("fabricwatch_build_info"));
  EXPECT_TRUE(seen.count("fabricwatch_rdma_port_state")) << "the fixture roots were not scraped";
  EXPECT_TRUE(seen.count("fabricwatch_rdma_device_info")) << "the optional series were not on";
}

// The PCI functions of a root whose class starts with `prefix` ("0x0302": 3D controllers).
size_t pciClassCount(const std::string& root, const std::string& prefix) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(root + "/sys/bus/pci/devices"))
    if (readDocFile(e.path().string() + "/class").rfind(prefix, 0) == 0) ++n;
  return n;
}

// docs/metrics.md states the series per node on every fixture root; the p5 root (32 EFA
// devices, 8 GPUs, 4 NVSwitches) stays under 400 by default. FW_UPDATE_DOCS=1 rewrites the
// table.
TEST(MetricsDocsE2ETest, SeriesPerFixtureRootAreDocumented) {
  TempDir cfg;
  std::string steady = cfg.write("steady.toml", "[policy]\nviolation_hold = \"0s\"\n");
  std::string all_steady =
      cfg.write("all_steady.toml",
                "[collect]\nextra_metrics = [\"*\"]\n[policy]\nextra_metrics = [\"*\"]\n"
                "violation_hold = \"0s\"\n[collect.sources.rdma]\nextra_metrics = [\"*\"]\n"
                "[collect.sources.gpu]\nextra_metrics = [\"*\"]\n");
  std::string table =
      "| fixture root | RDMA devices | series (default) | series (every optional one on) |\n"
      "|---|---|---|---|\n";
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(sourceDir() + "/tests/fixtures"))
    if (e.is_directory() && std::filesystem::exists(e.path() / "sys"))
      names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    std::string root = fixture(name);
    size_t devices = 0;
    if (std::filesystem::exists(root + "/sys/class/infiniband"))
      for ([[maybe_unused]] const auto& d :
           std::filesystem::directory_iterator(root + "/sys/class/infiniband"))
        ++devices;
    // The counts of a node in its steady state: on a loaded machine a source's first run can
    // time out, and a violation that its missing facts raised would stay recovering for the
    // hold (policy.violation_hold) and add its series to one run and not another.
    size_t plain = seriesIn(scrape(root, {"--config.file=" + steady})),
           full = seriesIn(scrape(root, {"--config.file=" + all_steady}));
    ASSERT_GT(plain, 0u) << name;
    if (name == "p5_efa") {
      // The budget holds on a root as complete as a p5.48xlarge, not on a smaller one.
      EXPECT_EQ(devices, 32u) << "a p5 has 32 EFA devices";
      EXPECT_EQ(pciClassCount(root, "0x0302"), 8u) << "a p5 has 8 H100 GPUs";
      EXPECT_EQ(pciClassCount(root, "0x0680"), 4u) << "a p5 has 4 NVSwitches";
      EXPECT_LT(plain, 400u) << "the p5 series budget";
    }
    table += "| `" + name + "` | " + std::to_string(devices) + " | " + std::to_string(plain) +
             " | " + std::to_string(full) + " |\n";
  }
  std::string path = sourceDir() + "/docs/metrics.md";
  std::string text = readDocFile(path);
  const std::string begin = "<!-- series-per-root:begin -->\n",
                    end = "<!-- series-per-root:end -->";
  size_t b = text.find(begin), e = text.find(end);
  ASSERT_TRUE(b != std::string::npos && e != std::string::npos) << "markers missing in " << path;
  std::string documented_table = text.substr(b + begin.size(), e - b - begin.size());
  if (const char* u = std::getenv("FW_UPDATE_DOCS"); u && std::string(u) == "1") {
    std::ofstream(path) << text.substr(0, b + begin.size()) + table + text.substr(e);
    return;
  }
  EXPECT_EQ(documented_table, table) << "run with FW_UPDATE_DOCS=1 to write the new counts";
}

TEST(MetricsDocsE2ETest, MeshFamiliesAreDocumentedExactly) {
  TempDir tmp;
  std::string secret = tmp.write("secret", "0123456789abcdef0123456789abcdef\n");
  int pa = freePort(), pb = freePort();
  // With the fabric probe on (tcp provider), so that its families are checked as well.
  auto peer = [&](int own, int other, const char* name) {
    return startDaemon({"--peer.listen-address=127.0.0.1:" + std::to_string(own),
                        "--peers=127.0.0.1:" + std::to_string(other),
                        "--peer.secret-file=" + secret, std::string("--node.name=") + name,
                        "--probe.interval=1s", "--probe.fabric.enabled=true",
                        "--probe.fabric.provider=tcp"});
  };
  auto a = peer(pa, pb, "a");
  auto b = peer(pb, pa, "b");
  ASSERT_GT(a.port, 0) << a.process->stderrText();
  ASSERT_GT(b.port, 0) << b.process->stderrText();
  // Wait until a has probed b, so that the per-peer families are present.
  std::string body;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < end) {
    auto m = a.get("/metrics");
    if (m && m->body.find("fabricwatch_probe_tcp_peer_up{") != std::string::npos &&
        m->body.find("fabricwatch_probe_fabric_peer_up{") != std::string::npos) {
      body = m->body;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(body.empty()) << a.process->stderrText();
  auto seen = checkAgainstDocs(body, "a mesh-enabled daemon");
  EXPECT_TRUE(seen.count("fabricwatch_peer_members"));
  EXPECT_TRUE(seen.count("fabricwatch_probe_fabric_info"));
}

TEST(MetricsDocsE2ETest, NcclKindAndWorkloadFamiliesAreDocumentedExactly) {
  // Two daemons with NCCL peer runs every other round and the workloads source on (roce_v2's
  // job has an NCCL log): whatever this machine has (no GPU here), every run ends in a state
  // and every family is served.
  TempDir tmp;
  std::string secret = tmp.write("secret", "0123456789abcdef0123456789abcdef\n");
  std::string cfg = tmp.write("fabricwatch.toml",
                              "[collect.sources.workloads]\nenabled = true\n"
                              "[probes.dns]\nenabled = false\n"
                              "[probes.nccl]\nenabled = true\nlocal = false\ninterval = \"1s\"\n"
                              "timeout = \"800ms\"\nsizes = [\"1MiB\"]\n");
  int pa = freePort(), pb = freePort();
  auto peer = [&](int own, int other, const char* name) {
    return startDaemon(
        {"--config.file=" + cfg, "--path.rootfs=" + sourceDir() + "/tests/fixtures/roce_v2",
         "--peer.listen-address=127.0.0.1:" + std::to_string(own),
         "--peers=127.0.0.1:" + std::to_string(other), "--peer.secret-file=" + secret,
         std::string("--node.name=") + name, "--probe.interval=200ms"});
  };
  auto a = peer(pa, pb, "a");
  auto b = peer(pb, pa, "b");
  ASSERT_GT(a.port, 0) << a.process->stderrText();
  ASSERT_GT(b.port, 0) << b.process->stderrText();
  std::string body;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < end) {
    auto m = a.get("/metrics");
    if (m && m->body.find("fabricwatch_probe_nccl_peer_state{") != std::string::npos &&
        m->body.find("fabricwatch_workload_nccl_logs{") != std::string::npos) {
      body = m->body;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(body.empty()) << a.process->stderrText();
  auto seen = checkAgainstDocs(body, "a daemon with NCCL peer runs");
  for (const char* f :
       {"fabricwatch_probe_nccl_runs_total", "fabricwatch_probe_nccl_served_total",
        "fabricwatch_probe_nccl_peer_state", "fabricwatch_probe_nccl_last_run_timestamp_seconds",
        "fabricwatch_probe_nccl_peer_busbw_bytes_per_second", "fabricwatch_workload_nccl_logs"})
    EXPECT_TRUE(seen.count(f)) << f;
}

}  // namespace
}  // namespace fabricwatch::testing
