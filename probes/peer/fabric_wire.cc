#include "probes/peer/fabric_wire.h"

#include "probes/peer/messages.h"

namespace fabricwatch::probes::peer {
namespace {

bool getU32(std::string_view& in, uint32_t& v) {
  if (in.size() < 4) return false;
  v = peer::getU32(in.data());
  in.remove_prefix(4);
  return true;
}

bool getU64(std::string_view& in, uint64_t& v) {
  if (in.size() < 8) return false;
  v = peer::getU64(in.data());
  in.remove_prefix(8);
  return true;
}

}  // namespace

std::string encodeFabricHello(const FabricHello& m) {
  std::string out;
  putString(out, m.provider);
  return out;
}

std::optional<FabricHello> decodeFabricHello(std::string_view in) {
  FabricHello m;
  if (!getString(in, m.provider) || !in.empty()) return std::nullopt;
  return m;
}

std::string encodeFabricHelloReply(const FabricHelloReply& m) {
  std::string out;
  putString(out, m.provider);
  putString(out, m.fabric);
  putU64(out, m.epoch);
  putString(out, m.name);
  return out;
}

std::optional<FabricHelloReply> decodeFabricHelloReply(std::string_view in) {
  FabricHelloReply m;
  if (!getString(in, m.provider) || !getString(in, m.fabric) || !getU64(in, m.epoch) ||
      !getString(in, m.name) || !in.empty() || m.name.empty())
    return std::nullopt;
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
  return out;
}

std::optional<FabricSessionRequest> decodeFabricSessionRequest(std::string_view in) {
  FabricSessionRequest m;
  if (!getU64(in, m.spec.id) || in.empty()) return std::nullopt;
  m.spec.kind = static_cast<fabric::SessionKind>(static_cast<uint8_t>(in[0]));
  in.remove_prefix(1);
  if (!getU32(in, m.spec.size) || !getU32(in, m.spec.count) || !getU32(in, m.spec.window) ||
      !getU32(in, m.spec.timeout_ms) || !getString(in, m.provider) || !getString(in, m.name) ||
      !in.empty() || m.name.empty())
    return std::nullopt;
  return m;
}

std::string encodeFabricSessionReply(const FabricSessionReply& m) {
  std::string out;
  putU64(out, m.epoch);
  return out;
}

std::optional<FabricSessionReply> decodeFabricSessionReply(std::string_view in) {
  FabricSessionReply m;
  if (!getU64(in, m.epoch) || !in.empty()) return std::nullopt;
  return m;
}

}  // namespace fabricwatch::probes::peer
