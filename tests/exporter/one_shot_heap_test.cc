#include "exporter/one_shot_heap.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace fabricwatch::exporter {
namespace {

// The heap grows once, from the next 2 MiB boundary (so that it can be backed by huge pages),
// and what a one-shot command allocates afterwards comes from there without growing it again.
TEST(OneShotHeapTest, TheHeapGrowsOnceFromA2MiBBoundary) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' allocators map their own memory: glibc's heap is not used";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "the sanitizers' allocators map their own memory: glibc's heap is not used";
#endif
#endif
  // As at a command's start: no free memory at the heap's top, which earlier tests of this
  // binary may have left (malloc would serve the blocks below from it without growing).
  malloc_trim(0);
  auto start = reinterpret_cast<uintptr_t>(sbrk(0));
  uintptr_t boundary = (start + (2 << 20) - 1) & ~uintptr_t{(2 << 20) - 1};
  prepareOneShotHeap(4 << 20);
  auto grown = reinterpret_cast<uintptr_t>(sbrk(0));
  EXPECT_GE(grown, boundary + (4 << 20));
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 2000; ++i) {
    blocks.emplace_back(new char[1024]);
    std::memset(blocks.back().get(), i, 1024);
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(sbrk(0)), grown);
  auto last = reinterpret_cast<uintptr_t>(blocks.back().get());
  EXPECT_GE(last, boundary);
  EXPECT_LT(last, grown);
}

}  // namespace
}  // namespace fabricwatch::exporter
