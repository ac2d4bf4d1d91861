#include "exporter/config_flags.h"

#include <gtest/gtest.h>

#include "exporter/pipeline.h"
#include "probes/mesh/probe_kind.h"
#include "probes/registry.h"

namespace fabricwatch::exporter {
namespace {

config::LoadResult load(const std::vector<std::string>& args) {
  FlagSet flags("usage: test");
  addConfigFlags(flags, {.web = true, .policy = true});
  if (auto err = flags.parse(args)) {
    config::LoadResult r;
    r.problems.push_back({"flags", 0, 0, *err, ""});
    return r;
  }
  return loadConfigWithFlags(flags);
}

TEST(ConfigFlagsTest, EveryProbeKindIsTurnedOnAndOffByItsOwnFlag) {
  auto r = load({"--probe.dns.enabled=false", "--probe.tcp.enabled", "true"});
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  EXPECT_FALSE(r.config.probes.enabled("dns", true));
  EXPECT_TRUE(r.config.probes.enabled("tcp", false));

  auto bad = load({"--probe.dns.enabled=maybe"});
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_EQ(bad.problems[0].message,
            "flag --probe.dns.enabled: expected true or false, got \"maybe\"");

  // A kind registered at run time gets its flags without anyone writing them: --enabled, and
  // one for each of its keys that asks for a flag, checked by the key's own setter.
  EXPECT_EQ(load({"--probe.extra.enabled=true"}).problems[0].message,
            "unknown flag --probe.extra.enabled");
  struct Extra {
    int depth = 1;
    bool operator==(const Extra&) const = default;
  };
  probes::KindRegistration kind;
  kind.name = "extra";
  kind.enabled_by_default = false;
  kind.make = [](const probes::KindSetup&) {
    return core::Result<std::shared_ptr<probes::ProbeKind>>(core::Error{"test only"});
  };
  kind.config = config::TableKeys<Extra>("probes.extra")
                    .integer("depth", 1, 9, &Extra::depth)
                    .flag("How deep.")
                    .build();
  probes::registerProbeKind(kind);
  auto extra = load({"--probe.extra.enabled=true", "--probe.extra.depth=4"});
  ASSERT_TRUE(extra.ok()) << core::formatAll(extra.problems);
  EXPECT_TRUE(extra.config.probes.enabled("extra", false));
  EXPECT_EQ(extra.config.tables.get<Extra>("probes.extra").depth, 4);
  auto deep = load({"--probe.extra.depth=10"});
  ASSERT_EQ(deep.problems.size(), 1u);
  EXPECT_EQ(deep.problems[0].file, "flag --probe.extra.depth");
  EXPECT_EQ(deep.problems[0].message, "value 10 out of range [1, 9]");
}

// A flag is its key set from the command line: for every key that has one, the same values are
// accepted by the file and by the flag, and the same problems reported (a value of another type
// aside: a flag is always text, so its "got ..." names the text, not a TOML type).
TEST(ConfigFlagsTest, EveryKeyAndItsFlagAcceptTheSameValues) {
  using config::KeyType;
  const std::map<KeyType, std::vector<std::string>> kCandidates = {
      {KeyType::kString,
       {"",
        "x",
        "/abs/path",
        "relative",
        "two words",
        std::string(300, 'n'),
        ":19736",
        "127.0.0.1:19737",
        "host:99999",
        "debug",
        "json",
        "verbose",
        "auto",
        "tcp",
        "verbs;ofi_rxm",
        "vrebs",
        "30s",
        "0ms",
        "2h",
        "5 parsecs"}},
      {KeyType::kInteger, {"0", "1", "-1", "8", "1024", "1025", "99999999"}},
      {KeyType::kNumber, {"0", "0.1", "0.5", "2"}},
      {KeyType::kBoolean, {"true", "false"}},
      {KeyType::kStringList, {"", "a", "10.0.0.1:19737", "10.0.0.1:1,[::1]:2", "no-port"}},
  };
  auto toml = [](KeyType t, const std::string& v) {
    if (t == KeyType::kInteger || t == KeyType::kNumber || t == KeyType::kBoolean) return v;
    auto quote = [](const std::string& x) { return "\"" + x + "\""; };
    if (t == KeyType::kString) return quote(v);
    std::string list = "[";
    for (size_t start = 0; start <= v.size() && !v.empty();) {
      size_t comma = v.find(',', start);
      list +=
          (list.size() > 1 ? ", " : "") +
          quote(v.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return list + "]";
  };
  FlagSet flags("usage: test");
  addConfigFlags(flags, {.web = true, .policy = true});
  auto schema = probes::configSchema();
  int compared = 0;
  for (const auto& t : schema->tables()) {
    for (const auto& k : t.keys) {
      if (k.flag.empty() || k.flag_transform) continue;  // --path.rootfs: see its own test
      std::string path = k.path, flag = k.flag;
      if (auto star = path.find('*'); star != std::string::npos) path.replace(star, 1, "tcp");
      if (auto star = flag.find('*'); star != std::string::npos) flag.replace(star, 1, "tcp");
      std::string table = path.substr(0, path.rfind('.')), key = path.substr(path.rfind('.') + 1);
      for (const auto& v : kCandidates.at(k.type)) {
        auto file = config::loadConfig("[" + table + "]\n" + key + " = " + toml(k.type, v) + "\n",
                                       "t.toml", configLoadOptions());
        auto cli = load({"--" + flag + "=" + v});
        ASSERT_EQ(file.ok(), cli.ok())
            << path << " = " << v << ": file " << core::formatAll(file.problems) << "flag "
            << core::formatAll(cli.problems);
        if (!file.ok()) {
          EXPECT_EQ(file.problems[0].message, cli.problems[0].message) << path << " = " << v;
        }
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace fabricwatch::exporter
