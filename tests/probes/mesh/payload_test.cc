#include "probes/mesh/payload.h"

#include <gtest/gtest.h>

#include "probes/mesh/frame.h"

namespace fabricwatch::probes {
namespace {

TEST(PayloadTest, ReadsWhatWasWrittenInOrder) {
  std::string out;
  out.push_back(7);
  putU16(out, 0xBEEF);
  putU32(out, 0xDEADBEEF);
  putU64(out, 0x0123456789ABCDEFull);
  putString(out, std::string("a\0b", 3));  // binary: endpoint names are sockaddrs
  out.append("xyz");
  PayloadReader in(out);
  EXPECT_EQ(in.u8(), 7);
  EXPECT_EQ(in.u16(), 0xBEEF);
  EXPECT_EQ(in.u32(), 0xDEADBEEFu);
  EXPECT_EQ(in.u64(), 0x0123456789ABCDEFull);
  EXPECT_EQ(in.string(), std::string("a\0b", 3));
  EXPECT_FALSE(in.done());
  EXPECT_EQ(in.left(), 3u);
  EXPECT_EQ(in.bytes(3), "xyz");
  EXPECT_TRUE(in.done());
}

TEST(PayloadTest, AShortReadFailsEveryLaterOne) {
  std::string out;
  putU32(out, 5);
  PayloadReader in(std::string_view(out).substr(0, 3));
  EXPECT_EQ(in.u32(), 0u);
  EXPECT_FALSE(in.ok());
  EXPECT_EQ(in.u8(), 0);  // bytes were left, but the decode has failed
  EXPECT_EQ(in.string(), "");
  EXPECT_FALSE(in.done());
}

TEST(PayloadTest, StringsAreBoundedBothWays) {
  std::string out;
  putString(out, std::string(300, 'x'));  // cut to 253 on the way out
  PayloadReader in(out);
  EXPECT_EQ(in.string().size(), kMaxPayloadString);
  EXPECT_TRUE(in.done());

  std::string big;
  putU16(big, 254);  // a peer claiming more than the bound
  big.append(254, 'y');
  PayloadReader bad(big);
  EXPECT_EQ(bad.string(), "");
  EXPECT_FALSE(bad.ok());

  std::string shorter;
  putU16(shorter, 10);  // a length past the end
  shorter.append("abc");
  std::string_view v = shorter;
  std::string s;
  EXPECT_FALSE(getString(v, s));
  EXPECT_EQ(v.size(), shorter.size());  // left as it was
}

TEST(PayloadTest, AFieldFailedByTheCallerFailsTheDecode) {
  std::string out;
  putU32(out, 1);
  PayloadReader in(out);
  in.u32();
  in.fail();
  EXPECT_FALSE(in.done());
}

}  // namespace
}  // namespace fabricwatch::probes
