// RetiredEndpoints on real tcp endpoints (loopback): one whose operations have completed closes
// close_after its last; one that never settles is given up on (left open) only while the set is
// full and only give_up_after it was retired, at most max_abandoned times.
#include "probes/kinds/fabric/retired_endpoints.h"

#include <gtest/gtest.h>

#include "tests/support/require.h"

namespace fabricwatch::probes::fabric {
namespace {

using namespace std::chrono_literals;
using Clock = RetiredEndpoints::Clock;

std::unique_ptr<Endpoint> openTcp() {
  EndpointOptions o;
  o.provider = "tcp";
  o.source_address = "127.0.0.1";
  ProviderFacts f;
  std::optional<FabricError> err;
  return Endpoint::open(o, f, err);
}

bool tcpPresent() { return openTcp() != nullptr; }

// Retires an endpoint with an operation that never completes: a context nothing was posted
// with, kept as its storage.
void addStuck(RetiredEndpoints& r, std::shared_ptr<int> context) {
  r.add(openTcp(), {context.get()}, context);
}

TEST(RetiredEndpointsTest, ASettledEndpointClosesAfterCloseAfter) {
  if (!tcpPresent()) FW_UNAVAILABLE("fabric") << "libfabric's tcp provider is missing";
  RetiredEndpoints r(
      {.max_waiting = 2, .max_abandoned = 1, .close_after = 1s, .give_up_after = 1min});
  auto storage = std::make_shared<int>(7);
  r.add(openTcp(), {}, storage);  // nothing in flight: settled at the first settle()
  EXPECT_EQ(storage.use_count(), 2);
  auto t0 = Clock::now();
  r.settle(t0);
  EXPECT_EQ(r.size(), 1u);  // settled, not yet for close_after
  r.settle(t0 + 2s);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(storage.use_count(), 1);  // what it kept went with it
  EXPECT_EQ(r.abandoned(), 0u);
}

TEST(RetiredEndpointsTest, AnUnsettledOneIsGivenUpOnOnlyWhenFullAndOld) {
  if (!tcpPresent()) FW_UNAVAILABLE("fabric") << "libfabric's tcp provider is missing";
  RetiredEndpoints r(
      {.max_waiting = 2, .max_abandoned = 1, .close_after = 1s, .give_up_after = 1min});
  auto a = std::make_shared<int>(1), b = std::make_shared<int>(2), c = std::make_shared<int>(3);
  addStuck(r, a);
  const auto t0 = Clock::now();
  r.settle(t0 + 2min);
  EXPECT_EQ(r.size(), 1u);  // old, but the set is not full: it waits
  EXPECT_FALSE(r.full());
  addStuck(r, b);
  ASSERT_TRUE(r.full());
  EXPECT_EQ(r.fullError().message(),
            "endpoint: 2 endpoints of failed sessions wait for their operations to end; a new "
            "one opens when one has");
  r.settle(t0 + 30s);
  EXPECT_EQ(r.size(), 2u);  // full, but neither is old enough
  r.settle(t0 + 2min);
  EXPECT_EQ(r.size(), 1u);  // the oldest was given up on: left open, its context kept
  EXPECT_EQ(r.abandoned(), 1u);
  EXPECT_GE(a.use_count(), 2);
  addStuck(r, c);
  r.settle(t0 + 10min);
  EXPECT_EQ(r.size(), 2u);  // max_abandoned reached: the side waits
  EXPECT_EQ(r.abandoned(), 1u);
  r.stop();  // unsettled: abandoned, not closed
  EXPECT_TRUE(r.empty());
  EXPECT_GE(b.use_count(), 2);
  EXPECT_GE(c.use_count(), 2);
}

}  // namespace
}  // namespace fabricwatch::probes::fabric
