// Fuzzes the peers file (probe.peers_file, probes/mesh/membership.h's parsePeersFile): any bytes
// give either the members a model of its rules reads (one HOST:PORT a line, '#' comments,
// blank lines, spaces, tabs and CR around), each with a host a peer can have (an IPv4 address, an
// IPv6 address in brackets, or a DNS name) and a port 1-65535, at most kMaxPeersFileMembers of
// them, or one error positioned at the first line the model refuses ("FILE:LINE:COL: ..."), one
// line, bounded, valid UTF-8 without control bytes. Once per process: a text past
// kMaxPeersFileBytes, and one member past kMaxPeersFileMembers, are refused.
#include <arpa/inet.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/utf8.h"
#include "probes/mesh/membership.h"

namespace {

namespace mesh = fabricwatch::probes;

[[noreturn]] void peersFail(const char* what, std::string_view detail = "") {
  std::fprintf(stderr, "peers_file_fuzz: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

bool dnsName(std::string_view h) {
  if (h.empty() || h.size() > 253 || h.front() == '.' || h.front() == '-') return false;
  for (unsigned char c : h)
    if (!(std::isalnum(c) || c == '-' || c == '.' || c == '_') || c >= 0x80) return false;
  return true;
}

bool ipLiteral(std::string_view h, int family) {
  if (h.find('\0') != h.npos) return false;  // inet_pton would read only up to it
  unsigned char buf[16];
  return inet_pton(family, std::string(h).c_str(), buf) == 1;
}

// The model: whether one endpoint (comment and spaces already gone) is a member.
bool modelEndpoint(std::string_view ep) {
  size_t colon = ep.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view host = ep.substr(0, colon), port = ep.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != port.npos)
    return false;
  int p = std::stoi(std::string(port));
  if (p < 1 || p > 65535) return false;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    return ipLiteral(host.substr(1, host.size() - 2), AF_INET6);
  return ipLiteral(host, AF_INET) || dnsName(host);
}

struct ModelResult {
  std::vector<std::string> members;
  int bad_line = 0;  // the first line refused, 1-based
  size_t bad_column = 0;
};

ModelResult model(std::string_view text) {
  ModelResult r;
  int n = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == text.npos ? text.npos : end - at);
    at = end == text.npos ? text.size() : end + 1;
    ++n;
    line = line.substr(0, line.find('#'));
    size_t b = line.find_first_not_of(" \t\r");
    if (b == line.npos) continue;
    size_t e = line.find_last_not_of(" \t\r");
    std::string_view ep = line.substr(b, e - b + 1);
    if (!modelEndpoint(ep)) {
      r.bad_line = n;
      r.bad_column = b + 1;
      return r;
    }
    r.members.emplace_back(ep);
  }
  return r;
}

void checkError(const std::string& msg, int line, size_t column) {
  std::string want = "peers file:" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  if (msg.rfind(want, 0) != 0) peersFail("error not at the first bad line:", want + " | " + msg);
  if (msg.size() > 600) peersFail("an unbounded error message");
  if (!fabricwatch::core::isValidUtf8(msg)) peersFail("an error message that is not UTF-8");
  for (unsigned char c : msg)
    if (c < 0x20 || c == 0x7f) peersFail("a control byte in an error message");
}

void limitsOnce() {
  std::string big(mesh::kMaxPeersFileBytes + 1, '#');
  if (mesh::parsePeersFile(big)) peersFail("a text past kMaxPeersFileBytes accepted");
  std::string many;
  for (size_t i = 0; i <= mesh::kMaxPeersFileMembers; ++i) many += "a:1\n";
  auto r = mesh::parsePeersFile(many);
  if (r) peersFail("more than kMaxPeersFileMembers accepted");
  std::string last = std::to_string(mesh::kMaxPeersFileMembers + 1);
  if (r.error().message.rfind("peers file:" + last + ":1: ", 0) != 0)
    peersFail("the member past the bound not positioned:", r.error().message);
  many.resize(many.size() - 4);
  if (auto ok = mesh::parsePeersFile(many); !ok || ok->size() != mesh::kMaxPeersFileMembers)
    peersFail("kMaxPeersFileMembers members refused");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool kLimits = (limitsOnce(), true);
  (void)kLimits;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto got = mesh::parsePeersFile(text);
  ModelResult want = model(text);
  if (want.bad_line == 0 && want.members.size() > mesh::kMaxPeersFileMembers) return 0;
  if (got) {
    if (want.bad_line != 0)
      peersFail("accepted a line the model refuses: line", std::to_string(want.bad_line));
    if (*got != want.members) peersFail("members differ from the model's");
  } else {
    if (want.bad_line == 0) peersFail("refused a text the model accepts:", got.error().message);
    checkError(got.error().message, want.bad_line, want.bad_column);
  }
  return 0;
}
