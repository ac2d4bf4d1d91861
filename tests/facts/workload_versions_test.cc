// The versions a workload's libraries say of themselves: the pure finders on library bytes and
// file names, the bounded, cached scan through /proc/PID/root on a fixture root, and the real
// libnccl of this machine against what ncclGetVersion() answers.
#include "facts/workload_versions.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "tests/support/libraries.h"
#include "tests/support/require.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

std::string bytes(std::string_view s) { return std::string(s); }

TEST(WorkloadVersionsParseTest, NcclBanner) {
  // As NCCL 2.28.9 lays them out in libnccl.so.2 (the bytes around its two banners).
  std::string lib =
      bytes(std::string_view("rkFifoBytes %d\0NCCL version 2.28.9+cuda13.0\0%s\0", 48));
  auto b = findNcclBanner(lib);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->version, "2.28.9");
  EXPECT_EQ(b->cuda, "13.0");
  b = findNcclBanner(
      bytes(std::string_view("d]\n\0\0NCCL version 2.28.9 compiled with CUDA 13.0\n\0", 50)));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->version, "2.28.9");
  EXPECT_EQ(b->cuda, "13.0");
  // A suffix (NCCL_SUFFIX) before +cuda.
  b = findNcclBanner(bytes(std::string_view("NCCL version 2.19.3a0+cuda12.3\0", 31)));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->version, "2.19.3");
  EXPECT_EQ(b->cuda, "12.3");
  // The format string and prose are skipped for the banner after them.
  b = findNcclBanner(bytes(std::string_view(
      "NCCL version %s\0NCCL version mismatch\0NCCL version 2.21.5+cuda12.4\0", 67)));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->version, "2.21.5");
  // Cut at the end of a chunk: no banner yet.
  EXPECT_FALSE(findNcclBanner("NCCL version 2.21"));
  EXPECT_FALSE(findNcclBanner("NCCL version 2.21.5+cu"));
  EXPECT_FALSE(findNcclBanner("NCCL version 2\n"));
  EXPECT_FALSE(findNcclBanner(""));
  // Garbage after the number: still the number, no CUDA.
  b = findNcclBanner(bytes(std::string_view("NCCL version 2.18.1\xff\xfe", 21)));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->version, "2.18.1");
  EXPECT_FALSE(b->cuda);
}

TEST(WorkloadVersionsParseTest, OfiNcclVersion) {
  EXPECT_EQ(
      findOfiNcclVersion(bytes(std::string_view("\0Initializing aws-ofi-nccl 1.13.2-aws\0", 38))),
      "1.13.2-aws");
  EXPECT_EQ(findOfiNcclVersion(bytes(std::string_view("Initializing aws-ofi-nccl 1.19.0\0", 33))),
            "1.19.0");
  // An untagged build names its commit: no version.
  EXPECT_EQ(
      findOfiNcclVersion(bytes(std::string_view("Initializing aws-ofi-nccl git-2daf7d3\0", 38))),
      std::nullopt);
  EXPECT_EQ(findOfiNcclVersion("Initializing aws-ofi-nccl 1.1"), std::nullopt);  // cut
  EXPECT_EQ(findOfiNcclVersion("Initializing plugin failed"), std::nullopt);
}

TEST(WorkloadVersionsParseTest, LibraryNamesAndDistInfo) {
  EXPECT_EQ(libraryNameVersion("libcudart.so.", "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127"),
            "12.4.127");
  EXPECT_EQ(libraryNameVersion("libcudart.so.", "/x/nvidia/cuda_runtime/lib/libcudart.so.12"),
            std::nullopt);
  EXPECT_EQ(libraryNameVersion("libnccl.so.", "/opt/torch/lib/libnccl.so.2.21.5"), "2.21.5");
  EXPECT_EQ(libraryNameVersion("libnccl.so.", "/opt/torch/lib/libnccl.so.2"), std::nullopt);
  EXPECT_EQ(libraryNameVersion("libfabric.so.", "/opt/amazon/efa/lib/libfabric.so.1.25.0"),
            "1.25.0");
  EXPECT_EQ(libraryNameVersion("libfabric.so.", "/usr/lib/libfabric.so.1.25.0 (deleted)"),
            std::nullopt);
  EXPECT_EQ(cudaRuntimeFromDistInfo("nvidia_cuda_runtime_cu12-12.4.127.dist-info"), "12.4.127");
  EXPECT_EQ(cudaRuntimeFromDistInfo("nvidia_cuda_runtime-13.0.96.dist-info"), "13.0.96");
  EXPECT_EQ(cudaRuntimeFromDistInfo("nvidia_cuda_runtime_cu12-12.4.127.dist"), std::nullopt);
  EXPECT_EQ(cudaRuntimeFromDistInfo("nvidia_cuda_runtime_cu-12.4.dist-info"), std::nullopt);
  EXPECT_EQ(cudaRuntimeFromDistInfo("nvidia_cuda_nvrtc_cu12-12.4.127.dist-info"), std::nullopt);
  EXPECT_EQ(cudaRuntimeFromDistInfo("nvidia_cuda_runtime_cu12-12.dist-info"), std::nullopt);
}

TEST(WorkloadVersionsParseTest, MapsNameTheCudaRuntime) {
  auto libs = parseMappedLibraries(
      "7f00-7f01 r-xp 0 00:2d 1 /opt/conda/lib/libcudart.so.12.4.127\n"
      "7f02-7f03 r-xp 0 00:2d 2 /opt/conda/lib/libnccl.so.2.21.5\n");
  EXPECT_EQ(libs.cudart, "/opt/conda/lib/libcudart.so.12.4.127");
  auto bundled = parseMappedLibraries("7f00-7f01 r-xp 0 00:2d 1 /t/lib/libcudart-9335f6a2.so.12\n");
  EXPECT_EQ(bundled.cudart, "/t/lib/libcudart-9335f6a2.so.12");
}

struct Root {
  testing::TempDir dir;
  core::HostFs fs{dir.path()};
  core::Collection c;
  FactReader r{fs, c};
};

// A banner across the 64 KiB chunk boundary is found whole; past the 16 MiB bound, not at all.
TEST(WorkloadVersionsTest, ScanIsChunkedAndBounded) {
  Root t;
  std::string lib(64 * 1024 - 10, '\0');
  lib += bytes(std::string_view("NCCL version 2.21.5+cuda12.4\0", 29));
  t.dir.write("proc/7/root/lib/libnccl.so.2", lib);
  MappedLibraries libs;
  libs.nccl = "/lib/libnccl.so.2";
  WorkloadVersions v;
  core::Value w = core::Value::map();
  v.add(t.r, "/proc/7/root", libs, w);
  EXPECT_EQ(w.find("nccl_version")->asString(), "2.21.5");
  EXPECT_EQ(w.find("nccl_cuda_version")->asString(), "12.4");

  std::string far(WorkloadVersions::kMaxScanBytes, 'x');
  far += bytes(std::string_view("NCCL version 2.21.5\0", 20));
  t.dir.write("proc/8/root/lib/libnccl.so.2", far);
  core::Value w2 = core::Value::map();
  v.add(t.r, "/proc/8/root", libs, w2);
  EXPECT_EQ(w2.find("nccl_version"), nullptr);
  EXPECT_EQ(t.c.read_errors, 0u);
}

// Garbage, an empty file, a directory and a missing file: no version, no crash, no error.
TEST(WorkloadVersionsTest, GarbageSaysNothing) {
  Root t;
  std::string junk;
  for (uint64_t i = 0; i < 300000; ++i) junk += static_cast<char>((i * 7919) % 251);
  junk += "NCCL version ";
  t.dir.write("proc/9/root/lib/libnccl.so.2", junk);
  t.dir.write("proc/9/root/lib/libnccl-net.so", "");
  std::filesystem::create_directories(t.dir.path() + "/proc/9/root/lib/libfabric.so.1");
  MappedLibraries libs;
  libs.nccl = "/lib/libnccl.so.2";
  libs.nccl_net_plugin = "/lib/libnccl-net.so";
  libs.libfabric = "/lib/libfabric.so.1";
  libs.cudart = "/gone/libcudart.so.12";
  WorkloadVersions v;
  core::Value w = core::Value::map();
  v.add(t.r, "/proc/9/root", libs, w);
  EXPECT_EQ(w.size(), 0u) << w.size();
  EXPECT_EQ(t.c.read_errors, 0u);
}

// A file is scanned again only when it changes; pip's dist-info gives the runtime's version.
TEST(WorkloadVersionsTest, CachedUntilTheFileChangesAndPipRuntime) {
  Root t;
  std::string site = "/usr/local/lib/python3.10/dist-packages";
  t.dir.write("proc/5/root" + site + "/nvidia/cuda_runtime/lib/libcudart.so.12",
              "\x7f"
              "ELF");
  t.dir.write("proc/5/root" + site + "/nvidia_cuda_runtime_cu12-12.4.127.dist-info/RECORD", "");
  t.dir.write("proc/5/root" + site + "/torch-2.4.0.dist-info/RECORD", "");
  std::string plugin =
      t.dir.write("proc/5/root/opt/amazon/ofi-nccl/lib/libnccl-net.so",
                  bytes(std::string_view("Initializing aws-ofi-nccl 1.13.2-aws\0", 37)));
  MappedLibraries libs;
  libs.cudart = site + "/nvidia/cuda_runtime/lib/libcudart.so.12";
  libs.nccl_net_plugin = "/opt/amazon/ofi-nccl/lib/libnccl-net.so";
  WorkloadVersions v;
  core::Value w = core::Value::map();
  v.add(t.r, "/proc/5/root", libs, w);
  v.endCollection();
  EXPECT_EQ(w.find("cuda_runtime_version")->asString(), "12.4.127");
  EXPECT_EQ(w.findPath("net_plugin.name")->asString(), "aws-ofi-nccl");
  EXPECT_EQ(w.findPath("net_plugin.version")->asString(), "1.13.2-aws");

  // Rewritten in place with the same size and mtime: the same file to the cache, not read again
  // (and another PID mapping it, as a pod's other ranks do, shares the one scan).
  auto mtime = std::filesystem::last_write_time(plugin);
  {
    std::ofstream out(plugin, std::ios::binary | std::ios::in | std::ios::out);
    out.seekp(26);
    out << "9.9.9";
  }
  std::filesystem::last_write_time(plugin, mtime);
  std::filesystem::create_directories(t.dir.path() + "/proc/6");
  std::filesystem::create_directory_symlink("../5/root", t.dir.path() + "/proc/6/root");
  core::Value rank = core::Value::map();
  v.add(t.r, "/proc/6/root", libs, rank);
  v.endCollection();
  EXPECT_EQ(rank.findPath("net_plugin.version")->asString(), "1.13.2-aws");

  // Replaced by another build (another inode): scanned again.
  std::filesystem::remove(plugin);
  t.dir.write("proc/5/root/opt/amazon/ofi-nccl/lib/libnccl-net.so",
              bytes(std::string_view("Initializing aws-ofi-nccl 1.14.0\0", 33)));
  core::Value again = core::Value::map();
  v.add(t.r, "/proc/5/root", libs, again);
  EXPECT_EQ(again.findPath("net_plugin.version")->asString(), "1.14.0");
}

// The real libnccl of this machine (CI has one): the banner the scan finds is the version the
// library itself reports.
TEST(WorkloadVersionsTest, RealLibncclBannerIsItsVersion) {
  if (!testing::haveNccl()) FW_UNAVAILABLE("nccl") << "no libnccl.so.2 to read";
  void* h = ::dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr);
  struct link_map* map = nullptr;
  ASSERT_EQ(::dlinfo(h, RTLD_DI_LINKMAP, &map), 0);
  std::string path = std::filesystem::canonical(map->l_name).string();
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(::dlsym(h, "ncclGetVersion"));
  ASSERT_NE(get, nullptr);
  int code = 0;
  ASSERT_EQ(get(&code), 0);
  ::dlclose(h);
  // NCCL_VERSION_CODE since 2.9: major * 10000 + minor * 100 + patch.
  std::string want = std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
                     std::to_string(code % 100);
  core::HostFs fs("/");
  core::Collection c;
  FactReader r(fs, c);
  MappedLibraries libs;
  libs.nccl = path;
  WorkloadVersions v;
  core::Value w = core::Value::map();
  v.add(r, "", libs, w);
  ASSERT_NE(w.find("nccl_version"), nullptr) << path;
  EXPECT_EQ(w.find("nccl_version")->asString(), want) << path;
  EXPECT_NE(w.find("nccl_cuda_version"), nullptr) << path;
}

}  // namespace
}  // namespace fabricwatch::facts
