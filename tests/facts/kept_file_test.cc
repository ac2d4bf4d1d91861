// Kept descriptors (KeptFile) and entries scanned once while they live (ScannedDir), on files
// and directories of a temporary root.
#include "facts/kept_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>

#include "facts/scanned_dir.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

namespace fs = std::filesystem;

// Rewrites a file in place, as sysfs changes an attribute: same inode, new text.
void rewrite(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

class KeptFileTest : public ::testing::Test {
 protected:
  void TearDown() override { setKeptFileLimit(16384); }

  testing::TempDir root;
  core::HostFs hostfs{root.path()};
  core::Collection c;
  FactReader r{hostfs, c};
};

TEST_F(KeptFileTest, RereadsTheCurrentTextThroughOneDescriptor) {
  std::string path = root.write("sys/x/state", "4: ACTIVE\n");
  DirReader dir(r, "/sys/x");
  size_t before = keptFiles();
  KeptFile f(dir, "state");
  EXPECT_TRUE(f.kept());
  EXPECT_EQ(keptFiles(), before + 1);
  EXPECT_EQ(f.line(r), "4: ACTIVE");
  rewrite(path, "1: DOWN\n");
  EXPECT_EQ(f.line(r), "1: DOWN");
  rewrite(path, "1: DOWN, and a longer text than before\n");
  EXPECT_EQ(f.line(r), "1: DOWN, and a longer text than before");
  EXPECT_EQ(c.read_errors, 0u);
}

TEST_F(KeptFileTest, MissingIsAbsentWithoutAnError) {
  DirReader dir(r, "/sys/x");  // not even the directory
  KeptFile f(dir, "state");
  EXPECT_TRUE(f.missing());
  EXPECT_EQ(f.line(r), std::nullopt);
  KeptFile g(hostfs, "/sys/nothing/here");
  EXPECT_TRUE(g.missing());
  EXPECT_EQ(g.integer(r), std::nullopt);
  EXPECT_EQ(c.read_errors, 0u);
}

// A directory where a counter should be: open() succeeds, every read fails, and every read
// counts an error, with the host path (not the --path.rootfs one) in the message.
TEST_F(KeptFileTest, UnreadableCountsAnErrorOnEveryRead) {
  fs::create_directories(root.path() + "/sys/x/rx_drops");
  DirReader dir(r, "/sys/x");
  KeptFile f(dir, "rx_drops");
  EXPECT_EQ(f.integer(r), std::nullopt);
  EXPECT_EQ(f.integer(r), std::nullopt);
  EXPECT_EQ(c.read_errors, 2u);
  ASSERT_FALSE(c.errors.empty());
  EXPECT_EQ(c.errors[0].rfind("/sys/x/rx_drops: ", 0), 0u) << c.errors[0];
}

TEST_F(KeptFileTest, NotAnIntegerIsAnErrorNamingTheHostPath) {
  root.write("sys/x/lid", "not a number\n");
  DirReader dir(r, "/sys/x");
  KeptFile f(dir, "lid");
  EXPECT_EQ(f.integer(r), std::nullopt);
  EXPECT_EQ(c.read_errors, 1u);
  EXPECT_NE(c.errors[0].find("/sys/x/lid: not an integer"), std::string::npos) << c.errors[0];
}

// Past the cap, files are read by path each time, with the same results; destroying kept
// files gives their slots back.
TEST_F(KeptFileTest, PastTheCapReadsByPath) {
  std::string a = root.write("sys/x/a", "1\n");
  std::string b = root.write("sys/x/b", "2\n");
  DirReader dir(r, "/sys/x");
  size_t before = keptFiles();
  setKeptFileLimit(before + 1);
  {
    KeptFile fa(dir, "a"), fb(dir, "b");
    EXPECT_TRUE(fa.kept());
    EXPECT_FALSE(fb.kept());
    EXPECT_FALSE(fb.missing());
    EXPECT_EQ(keptFiles(), before + 1);
    EXPECT_EQ(fb.integer(r), 2);
    rewrite(b, "3\n");
    EXPECT_EQ(fb.integer(r), 3);
    fs::remove(b);
    EXPECT_EQ(fb.integer(r), std::nullopt);  // by path: gone is absent
    EXPECT_EQ(fa.integer(r), 1);
  }
  EXPECT_EQ(keptFiles(), before);
  EXPECT_EQ(c.read_errors, 0u);
}

TEST_F(KeptFileTest, MovesKeepOneOwner) {
  root.write("sys/x/a", "7\n");
  DirReader dir(r, "/sys/x");
  size_t before = keptFiles();
  KeptFile a(dir, "a");
  KeptFile b = std::move(a);
  KeptFile c2;
  c2 = std::move(b);
  EXPECT_EQ(keptFiles(), before + 1);
  EXPECT_EQ(c2.integer(r), 7);
  EXPECT_EQ(a.integer(r), std::nullopt);  // NOLINT(bugprone-use-after-move): it reads as absent
}

TEST_F(KeptFileTest, RaiseOpenFileLimitReachesTheHardLimit) {
  rlimit rl{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &rl), 0);
  size_t soft = raiseOpenFileLimit();
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &rl), 0);
  EXPECT_EQ(rl.rlim_cur, rl.rlim_max);
  EXPECT_EQ(soft, rl.rlim_cur == RLIM_INFINITY ? SIZE_MAX : rl.rlim_cur);
}

struct Entry {
  FileId id_;
  bool complete_ = true;
  int scans = 0;
  FileId id() const { return id_; }
  bool complete() const { return complete_; }
};

TEST_F(KeptFileTest, ScannedDirScansEachEntryOnceWhileItLives) {
  fs::create_directories(root.path() + "/sys/class/infiniband/mlx5_0");
  fs::create_directories(root.path() + "/sys/class/infiniband/mlx5_1");
  DirReader cls(r, "/sys/class/infiniband");
  ScannedDir<Entry> dir;
  int scans = 0;
  auto scan = [&](const std::string&, FileId id) {
    ++scans;
    return Entry{id, true, scans};
  };
  auto first = dir.refresh(cls, cls.list(), scan);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(scans, 2);
  auto again = dir.refresh(cls, cls.list(), scan);
  EXPECT_EQ(scans, 2);
  EXPECT_EQ(again, first);  // the same entries, not copies

  // mlx5_1 removed and added again: a new directory (made before the old one goes, so that
  // the file system cannot hand out the old inode number again) is a new device.
  std::string base = root.path() + "/sys/class/infiniband/";
  fs::create_directories(base + ".new");
  fs::rename(base + "mlx5_1", base + ".old");
  fs::rename(base + ".new", base + "mlx5_1");
  fs::remove_all(base + ".old");
  auto replaced = dir.refresh(cls, {"mlx5_0", "mlx5_1"}, scan);
  EXPECT_EQ(scans, 3);
  EXPECT_EQ(replaced[0], first[0]);
  EXPECT_EQ(replaced[1]->scans, 3);

  // An incomplete scan is repeated; a name that is not there any more is skipped and dropped.
  replaced[0]->complete_ = false;
  fs::remove_all(base + "mlx5_1");
  auto after = dir.refresh(cls, {"mlx5_0", "mlx5_1"}, scan);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0]->scans, 4);
  fs::create_directories(base + "mlx5_1");
  EXPECT_EQ(dir.refresh(cls, cls.list(), scan).size(), 2u);
  EXPECT_EQ(scans, 5);  // mlx5_1 was forgotten while it was away
}

}  // namespace
}  // namespace fabricwatch::facts
