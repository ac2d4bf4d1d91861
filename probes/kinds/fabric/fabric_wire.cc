#include "probes/kinds/fabric/fabric_wire.h"

#include "probes/mesh/payload.h"

namespace fabricwatch::probes::fabric {

std::string encodeFabricHello(const FabricHello& m) {
  std::string out;
  putString(out, m.provider);
  putU32(out, m.rail);
  return out;
}

std::optional<FabricHello> decodeFabricHello(std::string_view payload) {
  PayloadReader in(payload);
  FabricHello m;
  m.provider = in.string();
  if (in.ok() && in.left()) m.rail = in.u32();
  if (!in.done()) return std::nullopt;
  return m;
}

std::string encodeFabricHelloReply(const FabricHelloReply& m) {
  std::string out;
  putString(out, m.provider);
  putString(out, m.fabric);
  putU64(out, m.epoch);
  putString(out, m.name);
  putU32(out, m.rail);
  putU64(out, m.rails);
  putString(out, m.domain);
  return out;
}

std::optional<FabricHelloReply> decodeFabricHelloReply(std::string_view payload) {
  PayloadReader in(payload);
  FabricHelloReply m;
  m.provider = in.string();
  m.fabric = in.string();
  m.epoch = in.u64();
  m.name = in.string();
  if (in.ok() && in.left()) {
    m.rail = in.u32();
    m.rails = in.u64();
    m.domain = in.string();
  }
  if (!in.done() || m.name.empty()) return std::nullopt;
  return m;
}

std::string encodeFabricSessionRequest(const FabricSessionRequest& m) {
  std::string out;
  putU64(out, m.spec.id);
  out.push_back(static_cast<char>(m.spec.kind));
  putU32(out, m.spec.size);
  putU32(out, m.spec.count);
  putU32(out, m.spec.window);
  putU32(out, m.spec.timeout_ms);
  putString(out, m.provider);
  putString(out, m.name);
  putU32(out, m.rail);
  return out;
}

std::optional<FabricSessionRequest> decodeFabricSessionRequest(std::string_view payload) {
  PayloadReader in(payload);
  FabricSessionRequest m;
  m.spec.id = in.u64();
  m.spec.kind = static_cast<fabric::SessionKind>(in.u8());  // checkSpec judges it
  m.spec.size = in.u32();
  m.spec.count = in.u32();
  m.spec.window = in.u32();
  m.spec.timeout_ms = in.u32();
  m.provider = in.string();
  m.name = in.string();
  if (in.ok() && in.left()) m.rail = in.u32();
  if (!in.done() || m.name.empty()) return std::nullopt;
  return m;
}

std::string encodeFabricSessionReply(const FabricSessionReply& m) {
  std::string out;
  putU64(out, m.epoch);
  return out;
}

std::optional<FabricSessionReply> decodeFabricSessionReply(std::string_view payload) {
  PayloadReader in(payload);
  FabricSessionReply m;
  m.epoch = in.u64();
  if (!in.done()) return std::nullopt;
  return m;
}

}  // namespace fabricwatch::probes::fabric
