#include "probes/mesh/membership.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/utf8.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::probes {
namespace {

using std::chrono::seconds;

// A source whose list (or failure) the test controls.
class FakeSource : public MembershipSource {
 public:
  std::string kind() const override { return "fake"; }
  core::Result<std::vector<std::string>> list() override {
    if (fail) return core::Error{"down"};
    return endpoints;
  }
  std::vector<std::string> endpoints;
  bool fail = false;
};

struct Fixture {
  FakeSource* src = nullptr;
  std::unique_ptr<Membership> m;
  explicit Fixture(std::chrono::milliseconds grace) {
    auto s = std::make_unique<FakeSource>();
    src = s.get();
    std::vector<std::unique_ptr<MembershipSource>> v;
    v.push_back(std::move(s));
    m = std::make_unique<Membership>(std::move(v), grace);
  }
};

TEST(MembershipTest, NewMembersArePendingUntilTheyAnswer) {
  Fixture f(seconds(30));
  f.src->endpoints = {"10.0.0.1:1", "10.0.0.2:1"};
  SteadyTime t0{};
  f.m->refresh(t0);
  EXPECT_EQ(f.m->addresses(MemberState::kPending).size(), 2u);
  EXPECT_TRUE(f.m->addresses(MemberState::kActive).empty());
  f.m->markAnswered("10.0.0.2:1", "node-2", "rack-1", false);
  f.m->markAnswered("10.0.0.1:1", "me", "", true);
  EXPECT_EQ(f.m->addresses(MemberState::kActive), std::vector<std::string>{"10.0.0.2:1"});
  EXPECT_EQ(f.m->addresses(MemberState::kSelf), std::vector<std::string>{"10.0.0.1:1"});
  auto members = f.m->members();
  EXPECT_EQ(members[1].node, "node-2");
  EXPECT_EQ(members[1].group, "rack-1");
  // Answering for an address nobody lists changes nothing.
  f.m->markAnswered("10.9.9.9:1", "x", "", false);
  EXPECT_EQ(f.m->members().size(), 2u);
}

TEST(MembershipTest, VanishedMembersStayForTheGracePeriod) {
  Fixture f(seconds(30));
  f.src->endpoints = {"10.0.0.1:1", "10.0.0.2:1"};
  SteadyTime t0{};
  f.m->refresh(t0);
  f.m->markAnswered("10.0.0.2:1", "node-2", "", false);
  f.src->endpoints = {"10.0.0.1:1"};
  f.m->refresh(t0 + seconds(10));
  auto members = f.m->members();
  ASSERT_EQ(members.size(), 2u);
  EXPECT_TRUE(members[1].sources.empty());
  EXPECT_EQ(members[1].state, MemberState::kActive);
  f.m->refresh(t0 + seconds(41));
  ASSERT_EQ(f.m->members().size(), 1u);
  // It comes back: pending again, it must answer again.
  f.src->endpoints = {"10.0.0.1:1", "10.0.0.2:1"};
  f.m->refresh(t0 + seconds(42));
  EXPECT_EQ(f.m->addresses(MemberState::kPending).size(), 2u);
}

TEST(MembershipTest, AFailingSourceKeepsItsPreviousList) {
  Fixture f(std::chrono::milliseconds(0));
  f.src->endpoints = {"10.0.0.1:1"};
  SteadyTime t0{};
  EXPECT_TRUE(f.m->refresh(t0).empty());
  f.src->fail = true;
  auto errors = f.m->refresh(t0 + seconds(100));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "fake: down");
  EXPECT_EQ(f.m->members().size(), 1u);
}

TEST(MembershipTest, DnsSourceListsEveryRecordOnThePort) {
  DnsSource src("fabricwatch.svc", 19737, seconds(1),
                [](const std::string& name, std::chrono::milliseconds) {
                  DnsResult r;
                  r.ok = name == "fabricwatch.svc";
                  r.addresses = {"10.0.0.1", "fd00::2"};
                  return r;
                });
  auto l = src.list();
  ASSERT_TRUE(l);
  EXPECT_EQ(*l, (std::vector<std::string>{"10.0.0.1:19737", "[fd00::2]:19737"}));
  DnsSource bad("nx.invalid", 1, seconds(1), [](const std::string&, std::chrono::milliseconds) {
    DnsResult r;
    r.error = "Name or service not known";
    return r;
  });
  EXPECT_FALSE(bad.list());
}

TEST(MembershipTest, PeersFileParser) {
  auto ok =
      parsePeersFile("# fleet\n10.0.0.1:19737\n\n  node-2.example:19737  # rack 2\n[fd00::1]:1\n");
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok,
            (std::vector<std::string>{"10.0.0.1:19737", "node-2.example:19737", "[fd00::1]:1"}));
  auto bad = parsePeersFile("10.0.0.1:19737\nno-port\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message.rfind("peers file:2:1: ", 0), 0u) << bad.error().message;
}

// Found writing peers_file_fuzz's model of a member: the file took what splitHostPort splits, so
// "[]:80" (an empty host, which toSockaddr reads as the wildcard address), port 0, a host with
// spaces or a bracketed host that is no IPv6 address became members.
TEST(MembershipTest, PeersFileTakesOnlyHostsAndPortsAPeerCanHave) {
  for (const char* bad : {"[]:80", "node-1:0", "a b:80", "[node-1]:80", "[1.2.3.4]:80",
                          "node-1]:80", "-node:80", "n\x01-de:80", "h\xc3\xa9:80", "[::1]:"}) {
    auto r = parsePeersFile(std::string("10.0.0.1:1\n") + bad + "\n");
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.error().message.rfind("peers file:2:1: ", 0), 0u) << r.error().message;
    }
  }
  // Found by peers_file_fuzz: inet_pton reads a C string, so a NUL after an address hid the rest
  // of the host ("10.0.0.1\0x" passed as 10.0.0.1, and the member kept the NUL).
  using namespace std::string_literals;
  for (const std::string& bad : {"10.0.0.1\0x:80"s, "[::1\0x]:80"s, "10.0.0.1\0:80"s})
    EXPECT_FALSE(parsePeersFile(bad)) << core::quoteForDisplay(bad);
  auto ok = parsePeersFile("node_1.rack-2.example.:65535\n[fe80::1]:1\n192.168.0.1:19737\n");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->size(), 3u);
}

// Found writing peers_file_fuzz: the error echoed the line's bytes as they were, control bytes,
// invalid UTF-8 and all, and a 16 MiB line made a 16 MiB message.
TEST(MembershipTest, APeersFileErrorIsPositionedBoundedAndEscaped) {
  std::string line = "\t \x01\xff" + std::string(1 << 20, 'x');
  auto r = parsePeersFile("# fleet\n" + line + "\n", "/etc/fabricwatch/peers");
  ASSERT_FALSE(r);
  const std::string& m = r.error().message;
  EXPECT_EQ(m.rfind("/etc/fabricwatch/peers:2:3: ", 0), 0u) << m;
  EXPECT_LT(m.size(), 400u);
  EXPECT_TRUE(core::isValidUtf8(m));
  EXPECT_EQ(m.find_first_of(std::string("\x01\n\t", 3)), std::string::npos) << m;
}

TEST(MembershipTest, APeersFileHasBoundsOnItsSizeAndMembers) {
  EXPECT_FALSE(parsePeersFile(std::string(kMaxPeersFileBytes + 1, '#')));
  std::string many;
  for (size_t i = 0; i < kMaxPeersFileMembers; ++i) many += "a:1\n";
  EXPECT_TRUE(parsePeersFile(many));
  auto over = parsePeersFile(many + "\n# end\nb:2\n");
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().message.rfind(
                "peers file:" + std::to_string(kMaxPeersFileMembers + 3) + ":1: ", 0),
            0u)
      << over.error().message;
}

TEST(MembershipTest, FileSourceSeesChanges) {
  testing::TempDir dir;
  std::string path = dir.write("peers", "10.0.0.1:1\n");
  FileSource src(path);
  EXPECT_EQ(*src.list(), std::vector<std::string>{"10.0.0.1:1"});
  // Replace the file the way a ConfigMap update does (a new inode via rename).
  std::string tmp = dir.write("peers.new", "10.0.0.1:1\n10.0.0.2:1\n");
  std::filesystem::rename(tmp, path);
  EXPECT_EQ(src.list()->size(), 2u);
  // A broken edit keeps nothing stale hidden: the error is reported.
  dir.write("peers", "garbage\n");
  EXPECT_FALSE(src.list());
  std::filesystem::remove(path);
  EXPECT_FALSE(src.list());
}

}  // namespace
}  // namespace fabricwatch::probes
