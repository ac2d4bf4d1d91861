// The topology source against real lldpd daemons (Debian's lldpd) in network namespaces: the
// lab's hub plays two switches, one lldpd per rail bridge (leaf-a on the eth0 links, leaf-b on
// rail 1's), each announcing its port by name; a node runs its own lldpd with its own control
// socket inside the node's root, as a host's lldpd would. The source, and the daemon's /metrics,
// facts API and status page, must name each NIC's switch and switch port.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/value_format.h"
#include "facts/lldp_client.h"
#include "facts/topology_source.h"
#include "tests/support/daemon.h"
#include "tests/support/eventually.h"
#include "tests/support/netns.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/require.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

using testing::NetnsLab;

constexpr const char* kLldpd = "/usr/sbin/lldpd";

// One lldpd: in the foreground, on the interfaces named, with its own control socket, system
// name and a 1 s transmit interval; stopped with SIGTERM so that it removes its socket.
class Lldpd {
 public:
  Lldpd(std::vector<std::string> in_ns, const testing::TempDir& dir, const std::string& name,
        const std::string& interfaces, const std::string& socket) {
    std::string conf = dir.write(name + ".conf", "configure system hostname " + name +
                                                     "\nconfigure lldp portidsubtype ifname\n"
                                                     "configure lldp tx-interval 1\n");
    in_ns.insert(in_ns.end(),
                 {kLldpd, "-d", "-u", socket, "-O", conf, "-I", interfaces, "-S", name});
    process_ = std::make_unique<testing::Process>(in_ns);
  }
  ~Lldpd() {
    process_->signal(SIGTERM);
    process_->wait(std::chrono::seconds(5));
  }
  std::string log() { return process_->stderrText(); }

 private:
  std::unique_ptr<testing::Process> process_;
};

std::string neighborOf(const core::Value& facts, const std::string& interface) {
  const core::Value* nics = facts.findPath("topology.nics");
  if (!nics || !nics->isList()) return "";
  for (const auto& n : nics->asList()) {
    const core::Value* i = n.find("interface");
    const core::Value* ns = n.find("neighbors");
    if (!i || !i->isString() || i->asString() != interface || !ns || !ns->isList() ||
        ns->asList().empty())
      continue;
    const auto& first = ns->asList().front();
    return first.find("switch")->asString() + " " + first.find("switch_port")->asString();
  }
  return "";
}

// Every value of `v` is documented in docs/facts.md, in the schema table or the topology one.
void expectDocumented(const core::Value& v, const std::string& path, const std::string& doc) {
  if (!v.isMap() && !v.isList()) {
    EXPECT_NE(doc.find("| `" + path + "` |"), std::string::npos)
        << path << " is not documented in docs/facts.md";
  }
  if (v.isList())
    for (const auto& e : v.asList()) expectDocumented(e, path + "[]", doc);
  if (v.isMap())
    for (const auto& [k, c] : v.asMap()) {
      bool data_key = path == "topology.labels";
      expectDocumented(c, path + (data_key ? ".*" : "." + k), doc);
    }
}

TEST(TopologyLldpTest, RealLldpdNamesEachNicsSwitchAndPort) {
  if (auto why = NetnsLab::unavailableReason()) {
    FW_UNAVAILABLE("netns") << "network namespaces unavailable: " << *why;
  }
  if (!std::filesystem::exists(kLldpd) || !::dlopen("liblldpctl.so.4", RTLD_NOW | RTLD_LOCAL)) {
    FW_UNAVAILABLE("tools") << "lldpd is not installed (Debian package lldpd; scripts/dev)";
  }
  NetnsLab lab("10.79." + std::to_string(::getpid() % 200 + 20));
  ASSERT_NE(lab.addNode(1), "") << lab.lastError();
  ASSERT_NE(lab.addNode(2), "") << lab.lastError();
  ASSERT_TRUE(lab.addRail(1, "10.80." + std::to_string(::getpid() % 200 + 20), {1, 2}))
      << lab.lastError();
  testing::TempDir dir, root;
  root.write("proc/sys/kernel/osrelease", "6.1.0\n");
  std::filesystem::create_directories(root.path() + "/run");
  // lldpd runs lldpcli on its configuration as its own unprivileged user: it must reach the
  // sockets.
  for (const auto* d : {&dir, &root})
    std::filesystem::permissions(d->path(), std::filesystem::perms::owner_all |
                                                std::filesystem::perms::group_exec |
                                                std::filesystem::perms::others_exec);
  Lldpd leaf_a(lab.hubExecArgv({}), dir, "leaf-a", "vh1,vh2", dir.path() + "/a.socket");
  Lldpd leaf_b(lab.hubExecArgv({}), dir, "leaf-b",
               NetnsLab::hubLink(1, 1) + "," + NetnsLab::hubLink(2, 1), dir.path() + "/b.socket");
  Lldpd node(lab.execArgv(1, {}), dir, "node-1", "eth0,eth1", root.path() + "/run/lldpd.socket");

  TopologySource source;
  core::Collection c;
  bool seen = testing::eventually(
      [&] {
        c = source.collect({root.path()});
        return !neighborOf(c.facts, "eth0").empty() && !neighborOf(c.facts, "eth1").empty();
      },
      std::chrono::seconds(30), std::chrono::milliseconds(200));
  ASSERT_TRUE(seen) << core::toJson(c.facts) << "\nnode: " << node.log()
                    << "\nleaf-a: " << leaf_a.log();
  // And the switch sees the node on its port: both ends of the link, from real LLDP frames.
  LldpAnswer from_leaf;
  EXPECT_TRUE(testing::eventually(
      [&] {
        from_leaf = queryLldpd(dir.path() + "/a.socket");
        for (const auto& i : from_leaf.interfaces)
          if (i.name == "vh1" && !i.neighbors.empty() && i.neighbors[0].chassis_name == "node-1")
            return i.neighbors[0].port_id == "eth0";
        return false;
      },
      std::chrono::seconds(30), std::chrono::milliseconds(200)))
      << lldpStatusName(from_leaf.status) << " " << from_leaf.error;
  EXPECT_EQ(neighborOf(c.facts, "eth0"), "leaf-a vh1");
  EXPECT_EQ(neighborOf(c.facts, "eth1"), "leaf-b " + NetnsLab::hubLink(1, 1));
  EXPECT_EQ(c.facts.findPath("topology.lldp.status")->asString(), "ok");
  EXPECT_EQ(c.read_errors, 0u) << (c.errors.empty() ? "" : c.errors[0]);
  std::ifstream in(testing::sourceDir() + "/docs/facts.md");
  std::stringstream doc;
  doc << in.rdbuf();
  expectDocumented(*c.facts.find("topology"), "topology", doc.str());

  // The daemon on that root: info series PromQL joins on, the facts API, the status page.
  std::string cfg = dir.write("fw.toml", "[topology.labels]\nrack = \"r12\"\n");
  auto d = testing::startDaemon({"--path.rootfs=" + root.path(), "--config.file=" + cfg});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));
  auto m = d.get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("fabricwatch_topology_info{rack=\"r12\"} 1"), std::string::npos);
  EXPECT_NE(m->body.find("fabricwatch_topology_lldpd_up 1"), std::string::npos);
  EXPECT_NE(m->body.find("interface=\"eth1\",switch=\"leaf-b\",switch_id="), std::string::npos)
      << m->body;
  auto api = d.get("/api/v1/facts");
  ASSERT_TRUE(api);
  auto doc_json = nlohmann::json::parse(api->body);
  const auto& facts = doc_json.contains("facts") ? doc_json["facts"] : doc_json;
  EXPECT_EQ(facts["topology"]["labels"]["rack"], "r12") << facts["topology"].dump();
  EXPECT_EQ(facts["topology"]["lldp"]["status"], "ok") << facts["topology"].dump();
  auto page = d.get("/");
  ASSERT_TRUE(page);
  EXPECT_NE(page->body.find("id=\"topology\""), std::string::npos);
  EXPECT_NE(page->body.find("leaf-b"), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::facts
