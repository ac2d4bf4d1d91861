#include "core/snapshot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace fabricwatch::core {
namespace {

TEST(SnapshotTest, MergeFactsMergesMapsAndReplacesLeaves) {
  Value dst = Value::map({{"probes", Value::map({{"tcp", 1}})}, {"x", 1}});
  mergeFacts(dst, Value::map({{"probes", Value::map({{"dns", 2}})}, {"x", "replaced"}}));
  EXPECT_EQ(dst.findPath("probes.tcp")->asInt(), 1);
  EXPECT_EQ(dst.findPath("probes.dns")->asInt(), 2);
  EXPECT_EQ(dst.find("x")->asString(), "replaced");
}

// Readers load snapshots while a writer publishes new ones: every reader sees a whole,
// internally consistent snapshot and generations never go backwards. Run under TSan in CI.
TEST(SnapshotTest, ConcurrentReadersSeeWholeSnapshotsInOrder) {
  SnapshotStore store;
  constexpr int kPublishes = 2000;
  std::atomic<bool> done{false};
  std::atomic<int> inconsistent{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&] {
      uint64_t last = 0;
      while (!done.load()) {
        auto s = store.load();
        if (!s) continue;
        if (s->generation < last) ++inconsistent;
        last = s->generation;
        const Value* g = s->facts.find("generation");
        if (!g || g->asInt() != static_cast<int64_t>(s->generation)) ++inconsistent;
        if (s->sources.size() != s->generation % 7) ++inconsistent;
      }
    });
  }
  for (int i = 1; i <= kPublishes; ++i) {
    auto s = std::make_shared<Snapshot>();
    s->generation = static_cast<uint64_t>(i);
    s->facts["generation"] = i;
    s->sources.resize(static_cast<size_t>(i % 7));
    store.publish(std::move(s));
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(inconsistent.load(), 0);
  EXPECT_EQ(store.load()->generation, static_cast<uint64_t>(kPublishes));
}

}  // namespace
}  // namespace fabricwatch::core
