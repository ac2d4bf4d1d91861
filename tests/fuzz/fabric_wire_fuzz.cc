// Fuzzes the fabric probe kind's payloads as a member sends them (probes/kinds/fabric/
// fabric_wire.h): every decoder on any bytes. A payload either fails to decode or gives a value
// whose strings hold payload.h's bound (253 bytes), whose endpoint name is not empty (hello
// reply, session request), and whose encoding decodes to the same value (a round trip: a payload
// from before rails, without the trailing rail fields, comes back with their defaults). Endpoint
// names are binary and provider, fabric and domain are kept as sent: the kind bounds and
// sanitizes them where they reach facts (fabric_kind.cc's bounded()). A decoded session spec
// goes through checkSpec, the responder's judge, which must hold its own stated bounds.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "probes/kinds/fabric/fabric_wire.h"
#include "probes/kinds/fabric/pingpong.h"
#include "probes/mesh/payload.h"

namespace {

namespace fk = fabricwatch::probes::fabric;
using fabricwatch::probes::kMaxPayloadString;

[[noreturn]] void wireFail(const char* what) {
  std::fprintf(stderr, "fabric_wire_fuzz: %s\n", what);
  std::abort();
}

void bounded(const std::string& s, const char* what) {
  if (s.size() > kMaxPayloadString) wireFail(what);
}

void hello(std::string_view p) {
  auto m = fk::decodeFabricHello(p);
  if (!m) return;
  bounded(m->provider, "hello: provider over 253 bytes");
  auto back = fk::decodeFabricHello(fk::encodeFabricHello(*m));
  if (!back || back->provider != m->provider || back->rail != m->rail)
    wireFail("hello: round trip");
}

void helloReply(std::string_view p) {
  auto m = fk::decodeFabricHelloReply(p);
  if (!m) return;
  bounded(m->provider, "hello reply: provider over 253 bytes");
  bounded(m->fabric, "hello reply: fabric over 253 bytes");
  bounded(m->name, "hello reply: name over 253 bytes");
  bounded(m->domain, "hello reply: domain over 253 bytes");
  if (m->name.empty()) wireFail("hello reply: an empty endpoint name");
  auto back = fk::decodeFabricHelloReply(fk::encodeFabricHelloReply(*m));
  if (!back || back->provider != m->provider || back->fabric != m->fabric ||
      back->epoch != m->epoch || back->name != m->name || back->rail != m->rail ||
      back->rails != m->rails || back->domain != m->domain)
    wireFail("hello reply: round trip");
}

void sessionRequest(std::string_view p, size_t max_msg) {
  auto m = fk::decodeFabricSessionRequest(p);
  if (!m) return;
  bounded(m->provider, "session request: provider over 253 bytes");
  bounded(m->name, "session request: name over 253 bytes");
  if (m->name.empty()) wireFail("session request: an empty endpoint name");
  auto back = fk::decodeFabricSessionRequest(fk::encodeFabricSessionRequest(*m));
  const fk::SessionSpec &a = m->spec, &b = back ? back->spec : m->spec;
  if (!back || a.id != b.id || a.kind != b.kind || a.size != b.size || a.count != b.count ||
      a.window != b.window || a.timeout_ms != b.timeout_ms || back->provider != m->provider ||
      back->name != m->name || back->rail != m->rail)
    wireFail("session request: round trip");
  // What the responder then judges: accepted only within its stated bounds.
  if (!fk::checkSpec(a, max_msg)) {
    bool bw = a.kind == fk::SessionKind::kBandwidth;
    if (a.kind != fk::SessionKind::kLatency && !bw) wireFail("checkSpec: an unknown kind");
    if (a.size < fk::kHeaderBytes || a.size > std::min(fk::kMaxMessage, max_msg))
      wireFail("checkSpec: message size");
    if (a.count == 0 || a.count > 100000) wireFail("checkSpec: count");
    if (bw && (a.window == 0 || a.window > 256)) wireFail("checkSpec: window");
    if (uint64_t{a.size} * a.count * (bw ? a.window : 1) > (uint64_t{4} << 30))
      wireFail("checkSpec: a session over 4 GiB");
    if (a.timeout_ms == 0 || a.timeout_ms > 60000) wireFail("checkSpec: timeout");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  hello(bytes);
  helloReply(bytes);
  // A provider's max_msg_size: from 16 bytes to past any message, chosen by the input's size.
  static constexpr size_t kMaxMsg[] = {16, 4096, 8800, 1 << 20, size_t{1} << 40};
  sessionRequest(bytes, kMaxMsg[size % 5]);
  if (auto m = fk::decodeFabricSessionReply(bytes)) {
    if (size != 8 || fk::encodeFabricSessionReply(*m) != bytes)
      wireFail("session reply: not its 8 bytes");
  } else if (size == 8) {
    wireFail("session reply: 8 bytes refused");
  }
  return 0;
}
