// A host root is input like any other: a FIFO where a sysfs file belongs, a directory with
// 100,000 entries, huge files. Nothing in it may block a source, make a collection large, or
// wedge it for good (issue 13, items 5 and 6).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>

#include "core/host_fs.h"
#include "facts/fact_reader.h"
#include "facts/kernel_source.h"
#include "facts/rdma_source.h"
#include "tests/facts/fixture_facts.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct RootCopy {
  explicit RootCopy(const std::string& name) {
    fs::copy(testing::fixture(name), dir.path(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  std::string operator/(const std::string& rel) const { return dir.path() + "/" + rel; }
  const std::string& path() const { return dir.path(); }
  testing::TempDir dir;
};

// Runs fn on its own thread; if it has not returned within the deadline the test fails, and
// the FIFO at `fifo` is opened for writing so that a blocked reader returns and the test ends.
template <typename Fn>
auto withinDeadline(Fn fn, const std::string& fifo) {
  auto f = std::async(std::launch::async, fn);
  if (f.wait_for(10s) != std::future_status::ready) {
    ADD_FAILURE() << "blocked on the FIFO " << fifo;
    int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    auto r = f.get();
    if (w >= 0) ::close(w);
    return r;
  }
  return f.get();
}

const core::Value* port1(const core::Value& facts, const std::string& device) {
  for (const auto& d : facts.findPath("rdma.devices")->asList())
    if (d.find("name")->asString() == device) return &d.find("ports")->asList().at(0);
  return nullptr;
}

TEST(HostileRootTest, AFifoIsRefusedAtOnceNeverWaitedOn) {
  testing::TempDir root;
  std::string fifo = root.path() + "/proc/sys/kernel/osrelease";
  fs::create_directories(root.path() + "/proc/sys/kernel");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  core::HostFs hfs(root.path());
  auto r = withinDeadline([&] { return hfs.read("/proc/sys/kernel/osrelease"); }, fifo);
  EXPECT_EQ(r.status, core::HostFs::ReadStatus::kError);
  EXPECT_NE(r.error.find("not a regular file"), std::string::npos) << r.error;
  auto text = withinDeadline([&] { return core::readRegularFile(fifo, 1024); }, fifo);
  EXPECT_FALSE(text);
}

// The case: a FIFO where a port's state file belongs blocked the rdma source's read
// for good. It must read as an error, the rest of the device as usual, and once the FIFO is
// replaced by a file, the same source object reads the state again.
TEST(HostileRootTest, AFifoWhereAPortStateBelongsDoesNotWedgeTheRdmaSource) {
  RootCopy root("ib_ndr");
  std::string state = root / "sys/class/infiniband/mlx5_0/ports/1/state";
  ASSERT_TRUE(fs::remove(state));
  ASSERT_EQ(::mkfifo(state.c_str(), 0600), 0);
  RdmaSource src;
  auto c = withinDeadline([&] { return src.collect({root.path()}); }, state);
  EXPECT_GE(c.read_errors, 1u);
  const core::Value* p = port1(c.facts, "mlx5_0");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->find("state"), nullptr);
  EXPECT_NE(p->find("rate"), nullptr) << "the rest of the port is read";
  EXPECT_EQ(c.facts.findPath("rdma.devices")->size(), 8u);
  // The FIFO goes, a file takes its place: the next collection reads it.
  ASSERT_TRUE(fs::remove(state));
  std::ofstream(state) << "4: ACTIVE\n";
  c = src.collect({root.path()});
  p = port1(c.facts, "mlx5_0");
  ASSERT_NE(p, nullptr);
  ASSERT_NE(p->find("state"), nullptr);
  EXPECT_EQ(p->find("state")->asString(), "ACTIVE");
}

// Fault: host files that vanish, or turn into something unreadable, between collections. The
// collection that sees it so has the fact absent (an error when the file is there but cannot be
// read); the next one after the file is back has it again, from the same source object.
TEST(HostileRootTest, FilesThatVanishOrTurnUnreadableBetweenCollectionsComeBack) {
  RootCopy root("ib_ndr");
  std::shared_ptr<core::Source> src = std::make_shared<KernelSource>();
  ASSERT_NE(src, nullptr);
  std::string release = root / "proc/sys/kernel/osrelease";
  auto collect = [&] { return src->collect({root.path()}); };
  core::Collection c = collect();
  ASSERT_NE(c.facts.findPath("kernel.release"), nullptr);
  fs::rename(release, release + ".saved");
  c = collect();
  EXPECT_EQ(c.facts.findPath("kernel.release"), nullptr);
  EXPECT_EQ(c.read_errors, 0u) << "missing is not an error";
  ASSERT_EQ(::mkfifo(release.c_str(), 0600), 0);
  c = withinDeadline(collect, release);
  EXPECT_EQ(c.facts.findPath("kernel.release"), nullptr);
  EXPECT_EQ(c.read_errors, 1u);
  fs::remove(release);
  fs::create_directory(release);  // a directory where the file was
  c = collect();
  EXPECT_EQ(c.facts.findPath("kernel.release"), nullptr);
  EXPECT_EQ(c.read_errors, 1u);
  fs::remove(release);
  fs::rename(release + ".saved", release);
  c = collect();
  EXPECT_NE(c.facts.findPath("kernel.release"), nullptr);
  EXPECT_EQ(c.read_errors, 0u);
}

// 100,000 entries under sys/class/infiniband once cost gigabytes. A listing stops at its bound,
// says so (a read error, Collection::truncated), and what was read is used.
TEST(HostileRootTest, AHugeDirectoryIsCutAtItsBoundAndReported) {
  RootCopy root("ib_ndr");
  std::string cls = root / "sys/class/infiniband";
  for (size_t i = 0; i < core::kMaxDirEntries + 500; ++i)
    fs::create_directory(cls + "/junk" + std::to_string(i));
  RdmaSource src;
  core::Collection c = src.collect({root.path()});
  EXPECT_EQ(c.facts.findPath("rdma.devices")->size(), core::kMaxDirEntries);
  ASSERT_EQ(c.truncated.size(), 1u);
  EXPECT_EQ(c.truncated[0], "/sys/class/infiniband");
  EXPECT_GE(c.read_errors, 1u);
  bool reported = false;
  for (const auto& e : c.errors) reported |= e.find("more than 4096 entries") != std::string::npos;
  EXPECT_TRUE(reported);
}

// The memory one collection may take is bounded too: past its budget, reads come back absent,
// and the cut is reported once.
TEST(HostileRootTest, ACollectionStopsReadingAtItsBudget) {
  testing::TempDir root;
  for (int i = 0; i < 20; ++i) root.write("f" + std::to_string(i), std::string(1000, 'x'));
  core::HostFs hfs(root.path());
  core::Collection c;
  FactReader r(hfs, c, /*budget=*/5500);
  int read = 0;
  for (int i = 0; i < 20; ++i) read += r.text("/f" + std::to_string(i)).has_value();
  EXPECT_EQ(read, 5);
  ASSERT_EQ(c.truncated.size(), 1u);
  EXPECT_EQ(c.truncated[0], "/f5");
  EXPECT_EQ(c.read_errors, 1u);
}

// A collection read on two threads (the rdma source's first scan) shares the one budget: the
// other thread's reader gets half of what is left, and what it read, its errors and its cut
// join the collection after the first thread's own.
TEST(HostileRootTest, APartReadOnAnotherThreadSharesTheBudget) {
  testing::TempDir root;
  for (int i = 0; i < 20; ++i) root.write("f" + std::to_string(i), std::string(1000, 'x'));
  core::HostFs hfs(root.path());
  core::Collection c;
  FactReader r(hfs, c, /*budget=*/6000);
  ASSERT_TRUE(r.text("/f0"));  // 5000 left
  core::Collection part_c;
  FactReader part = r.share(part_c);  // 2500 of them
  int read = 0;
  for (int i = 1; i < 5; ++i) read += part.text("/f" + std::to_string(i)).has_value();
  EXPECT_EQ(read, 2);
  EXPECT_FALSE(r.text("/missing"));
  for (int i = 5; i < 7; ++i) read += r.text("/f" + std::to_string(i)).has_value();
  EXPECT_EQ(read, 4) << "this reader keeps the other 2500";
  r.error("/mine: first");
  r.merge(part);
  EXPECT_FALSE(r.text("/f7")) << "the part went over the budget: the collection did";
  EXPECT_EQ(c.read_errors, 2u);
  ASSERT_EQ(c.errors.size(), 2u);
  EXPECT_EQ(c.errors[0], "/mine: first");
  EXPECT_NE(c.errors[1].find("/f3"), std::string::npos);
  ASSERT_EQ(c.truncated.size(), 1u);
  EXPECT_EQ(c.truncated[0], "/f3");
}

// The p5 root's 32 devices are scanned on two threads at the first collection; the facts are
// those of one thread, and errors come in the devices' order.
TEST(HostileRootTest, ASplitScanReportsErrorsInTheDevicesOrder) {
  RootCopy root("p5_efa");
  std::vector<std::string> names;
  core::Collection whole = RdmaSource().collect({root.path()});
  for (const auto& d : whole.facts.findPath("rdma.devices")->asList())
    names.push_back(d.find("name")->asString());
  ASSERT_EQ(names.size(), 32u);
  for (const auto& n : {names.back(), names.front()}) {
    std::string fw = root / ("sys/class/infiniband/" + n + "/fw_ver");
    ASSERT_TRUE(fs::remove(fw));
    fs::create_directory(fw);
  }
  RdmaSource src;
  core::Collection c = src.collect({root.path()});
  const auto& devs = c.facts.findPath("rdma.devices")->asList();
  ASSERT_EQ(devs.size(), 32u);
  for (size_t i = 0; i < devs.size(); ++i) EXPECT_EQ(devs[i].find("name")->asString(), names[i]);
  EXPECT_EQ(devs.front().find("fw_ver"), nullptr);
  EXPECT_NE(devs[1].find("fw_ver"), nullptr);
  ASSERT_EQ(c.errors.size(), 2u);
  EXPECT_NE(c.errors[0].find(names.front() + "/fw_ver"), std::string::npos) << c.errors[0];
  EXPECT_NE(c.errors[1].find(names.back() + "/fw_ver"), std::string::npos) << c.errors[1];
}

// A directory read through its own descriptor can be listed again (it is rewound).
TEST(HostileRootTest, ADirectoryListsTheSameTwice) {
  core::HostFs hfs(testing::fixture("p5_efa"));
  core::Collection c;
  FactReader r(hfs, c);
  DirReader cls(r, "/sys/class/infiniband");
  auto first = cls.list();
  EXPECT_EQ(first.size(), 32u);
  EXPECT_EQ(cls.list(), first);
  EXPECT_EQ(r.list("/sys/class/infiniband"), first);
}

}  // namespace
}  // namespace fabricwatch::facts
