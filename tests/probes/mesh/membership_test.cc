#include "probes/mesh/membership.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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
  EXPECT_NE(bad.error().message.find("line 2"), std::string::npos);
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
