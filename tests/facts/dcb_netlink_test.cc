// PFC by DCB netlink (facts/dcb_netlink.h): the parser on answers laid out as the kernel's
// dcbnl_ieee_fill() lays them out (an mlx5 port with PFC on priority 4, as mlnx_qos --pfc
// 0,0,0,0,1,0,0,0 leaves it), and the real kernel's answer for devices without DCB: lo here
// and a veth in a network namespace of its own (net_source_test runs the binary there).
#include "facts/dcb_netlink.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace fabricwatch::facts {
namespace {

void appendAttr(std::string& out, uint16_t type, const std::string& payload) {
  nlattr a{};
  a.nla_len = static_cast<uint16_t>(NLA_HDRLEN + payload.size());
  a.nla_type = type;
  out.append(reinterpret_cast<const char*>(&a), sizeof a);
  out += payload;
  out.append(NLA_ALIGN(payload.size()) - payload.size(), '\0');
}

template <typename T>
std::string bytesOf(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}

std::string message(uint16_t type, uint32_t seq, const std::string& body) {
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + body.size());
  h.nlmsg_type = type;
  h.nlmsg_seq = seq;
  h.nlmsg_pid = 4242;
  return bytesOf(h) + body;
}

// RTM_GETDCB / DCB_CMD_IEEE_GET as the kernel answers it: the interface name, then the
// DCB_ATTR_IEEE nest (ETS, PFC, an APP table with the DSCP 26 entry), then the DCBX mode.
std::string mlx5Answer(uint32_t seq, uint8_t pfc_en) {
  dcbmsg d{};
  d.dcb_family = AF_UNSPEC;
  d.cmd = DCB_CMD_IEEE_GET;
  std::string body = bytesOf(d);
  appendAttr(body, DCB_ATTR_IFNAME, std::string("eth4") + '\0');
  ieee_ets ets{};
  ets.ets_cap = 8;
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = pfc_en;
  for (int i = 0; i < 8; ++i) {
    pfc.requests[i] = i == 4 ? 1234 : 0;
    pfc.indications[i] = i == 4 ? 987654321012ULL : 0;
  }
  dcb_app app{};
  app.selector = IEEE_8021QAZ_APP_SEL_DSCP;
  app.priority = 3;
  app.protocol = 26;
  std::string table;
  appendAttr(table, DCB_ATTR_IEEE_APP, bytesOf(app));
  std::string ieee;
  appendAttr(ieee, DCB_ATTR_IEEE_ETS, bytesOf(ets));
  appendAttr(ieee, DCB_ATTR_IEEE_PFC, bytesOf(pfc));
  appendAttr(ieee, DCB_ATTR_IEEE_APP_TABLE | NLA_F_NESTED, table);
  appendAttr(body, DCB_ATTR_IEEE | NLA_F_NESTED, ieee);
  appendAttr(body, DCB_ATTR_DCBX, std::string(1, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE));
  return message(RTM_GETDCB, seq, body);
}

std::string errorAnswer(uint32_t seq, int err) {
  nlmsgerr e{};
  e.error = -err;
  return message(NLMSG_ERROR, seq, bytesOf(e));
}

TEST(DcbNetlinkTest, RequestIsAnIeeeGetNamingTheInterface) {
  std::string r = dcbIeeeGetRequest("eth4", 9);
  ASSERT_EQ(r.size(), NLMSG_LENGTH(sizeof(dcbmsg)) + NLA_ALIGN(NLA_HDRLEN + 5));
  nlmsghdr h;
  std::memcpy(&h, r.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_len, r.size());
  EXPECT_EQ(h.nlmsg_type, RTM_GETDCB);
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST);
  EXPECT_EQ(h.nlmsg_seq, 9u);
  EXPECT_EQ(static_cast<uint8_t>(r[NLMSG_HDRLEN + 1]), DCB_CMD_IEEE_GET);
  nlattr a;
  std::memcpy(&a, r.data() + NLMSG_LENGTH(sizeof(dcbmsg)), sizeof a);
  EXPECT_EQ(a.nla_type, DCB_ATTR_IFNAME);
  EXPECT_EQ(std::string(r.data() + NLMSG_LENGTH(sizeof(dcbmsg)) + NLA_HDRLEN), "eth4");
}

TEST(DcbNetlinkTest, ParsesPfcFromTheIeeeNest) {
  DcbPfc p = parseDcbAnswer(mlx5Answer(3, 0x10), 3);
  EXPECT_TRUE(p.supported);
  EXPECT_TRUE(p.has_pfc);
  EXPECT_EQ(p.error, "");
  EXPECT_EQ(p.pfc_cap, 8);
  EXPECT_EQ(p.pfc_en, 0x10);
  EXPECT_EQ(p.requests[4], 1234u);
  EXPECT_EQ(p.indications[4], 987654321012ULL);
  core::Value f = pfcFact(p);
  EXPECT_TRUE(f.find("supported")->asBool());
  EXPECT_EQ(f.find("capable")->asInt(), 8);
  EXPECT_TRUE(f.findPath("enabled.4")->asBool());
  EXPECT_FALSE(f.findPath("enabled.3")->asBool());
  EXPECT_EQ(f.findPath("enabled")->size(), 8u);
  EXPECT_EQ(f.findPath("pause_sent.4")->asInt(), 1234);
  EXPECT_EQ(f.findPath("pause_received.4")->asInt(), 987654321012LL);
  EXPECT_EQ(f.find("error"), nullptr);
}

TEST(DcbNetlinkTest, NoDcbIsUnsupportedWithTheReason) {
  DcbPfc p = parseDcbAnswer(errorAnswer(5, EOPNOTSUPP), 5);
  EXPECT_FALSE(p.supported);
  EXPECT_FALSE(p.has_pfc);
  EXPECT_EQ(p.error, "the device has no DCB (EOPNOTSUPP)");
  core::Value f = pfcFact(p);
  EXPECT_FALSE(f.find("supported")->asBool());
  EXPECT_EQ(f.find("enabled"), nullptr);
}

// A DCB device whose driver has no ieee_getpfc answers without DCB_ATTR_IEEE_PFC: supported,
// with nothing to judge.
TEST(DcbNetlinkTest, AnAnswerWithoutPfcIsSupportedButEmpty) {
  dcbmsg d{};
  d.cmd = DCB_CMD_IEEE_GET;
  std::string body = bytesOf(d);
  appendAttr(body, DCB_ATTR_IFNAME, std::string("eth4") + '\0');
  appendAttr(body, DCB_ATTR_IEEE | NLA_F_NESTED, "");
  DcbPfc p = parseDcbAnswer(message(RTM_GETDCB, 1, body), 1);
  EXPECT_TRUE(p.supported);
  EXPECT_FALSE(p.has_pfc);
  EXPECT_EQ(pfcFact(p).find("enabled"), nullptr);
}

TEST(DcbNetlinkTest, OtherRequestsAnswersAreSkipped) {
  std::string two = mlx5Answer(1, 0xff) + mlx5Answer(2, 0x08);
  EXPECT_EQ(parseDcbAnswer(two, 2).pfc_en, 0x08);
  EXPECT_FALSE(parseDcbAnswer(mlx5Answer(1, 0xff), 2).supported);
}

// Every cut of a well-formed answer, and every byte flipped, parses without reading past it.
TEST(DcbNetlinkTest, CutAndCorruptAnswersAreSafe) {
  std::string a = mlx5Answer(7, 0x10);
  for (size_t n = 0; n < a.size(); ++n) {
    DcbPfc p = parseDcbAnswer(std::string_view(a.data(), n), 7);
    EXPECT_FALSE(p.has_pfc && n < NLMSG_HDRLEN) << n;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    std::string b = a;
    b[i] = static_cast<char>(b[i] ^ 0xff);
    (void)parseDcbAnswer(b, 7);
  }
}

TEST(DcbNetlinkTest, QuestionsAreBoundedInTime) {
  DcbQuery q(std::chrono::milliseconds(0));
  DcbPfc p = q.pfc("lo");
  EXPECT_FALSE(p.supported);
  EXPECT_EQ(p.error, "no answer within 0 ms");
  EXPECT_EQ(DcbQuery().pfc("").error, "not an interface name");
  EXPECT_EQ(DcbQuery().pfc("a-name-too-long-for-ifnamsiz").error, "not an interface name");
}

// The real kernel: lo has no DCB operations, so it answers EOPNOTSUPP (so does a kernel built
// without CONFIG_DCB); an interface that does not exist is ENODEV where DCB is built in.
TEST(DcbNetlinkTest, TheKernelSaysLoopbackHasNoDcb) {
  DcbQuery q;
  DcbPfc lo = q.pfc("lo");
  EXPECT_FALSE(lo.supported);
  EXPECT_EQ(lo.error, "the device has no DCB (EOPNOTSUPP)");
  DcbPfc none = q.pfc("fwnodev0");
  EXPECT_FALSE(none.supported);
  EXPECT_TRUE(none.error == "no such device (ENODEV)" ||
              none.error == "the device has no DCB (EOPNOTSUPP)")
      << none.error;
}

}  // namespace
}  // namespace fabricwatch::facts
