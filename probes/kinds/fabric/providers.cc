#include "probes/kinds/fabric/providers.h"

#include <fnmatch.h>
#include <rdma/fabric.h>

#include <algorithm>
#include <array>
#include <cstdio>

namespace fabricwatch::probes::fabric {
namespace {

constexpr std::array<std::string_view, 6> kAutoOrder = {"efa", "verbs;ofi_rxm", "tcp;ofi_rxm",
                                                        "tcp", "udp;ofi_rxd",   "sockets"};

}  // namespace

std::optional<int> autoRank(std::string_view prov_name) {
  auto it = std::find(kAutoOrder.begin(), kAutoOrder.end(), prov_name);
  if (it == kAutoOrder.end()) return std::nullopt;
  return static_cast<int>(it - kAutoOrder.begin());
}

std::optional<size_t> pickAuto(const std::vector<std::string>& prov_names) {
  std::optional<size_t> best;
  int best_rank = 0;
  for (size_t i = 0; i < prov_names.size(); ++i) {
    auto r = autoRank(prov_names[i]);
    if (r && (!best || *r < best_rank)) {
      best = i;
      best_rank = *r;
    }
  }
  return best;
}

bool providerMatches(std::string_view configured, std::string_view prov_name) {
  if (configured == prov_name) return true;
  // "tcp" answered by "tcp;ofi_rxm": the core provider under a utility one.
  return configured.find(';') == std::string_view::npos && prov_name.size() > configured.size() &&
         prov_name.substr(0, configured.size()) == configured &&
         prov_name[configured.size()] == ';';
}

bool isSocketProvider(std::string_view prov_name) {
  std::string_view core = prov_name.substr(0, prov_name.find(';'));
  return core == "tcp" || core == "udp" || core == "sockets" || core == "net";
}

std::optional<std::string> providerForGroup(const std::vector<GroupProvider>& table,
                                            std::string_view group) {
  if (group.empty()) return std::nullopt;
  std::string g(group);
  for (const auto& row : table)
    if (::fnmatch(row.glob.c_str(), g.c_str(), 0) == 0) return row.provider;
  return std::nullopt;
}

ProviderChoice chooseProvider(const std::string& configured, bool from_flag,
                              const std::vector<GroupProvider>& table,
                              const std::string& resource_group) {
  if (from_flag) return {configured, "flag"};
  if (configured != kAuto) return {configured, "config"};
  if (auto p = providerForGroup(table, resource_group)) return {*p, "group"};
  return {std::string(kAuto), "auto"};
}

namespace {

struct Bit {
  uint64_t bit;
  const char* name;
};

std::vector<std::string> names(uint64_t word, const std::vector<Bit>& bits) {
  std::vector<std::string> out;
  for (const auto& b : bits) {
    if (word & b.bit) {
      out.emplace_back(b.name);
      word &= ~b.bit;
    }
  }
  for (int i = 0; i < 64; ++i) {
    if (word & (uint64_t{1} << i)) {
      char buf[24];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(uint64_t{1} << i));
      out.emplace_back(buf);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> modeBitNames(uint64_t mode) {
  static const std::vector<Bit> kBits = {{FI_CONTEXT, "FI_CONTEXT"},
                                         {FI_CONTEXT2, "FI_CONTEXT2"},
                                         {FI_MSG_PREFIX, "FI_MSG_PREFIX"},
                                         {FI_ASYNC_IOV, "FI_ASYNC_IOV"},
                                         {FI_RX_CQ_DATA, "FI_RX_CQ_DATA"},
                                         {FI_LOCAL_MR, "FI_LOCAL_MR"},
                                         {FI_NOTIFY_FLAGS_ONLY, "FI_NOTIFY_FLAGS_ONLY"},
                                         {FI_RESTRICTED_COMP, "FI_RESTRICTED_COMP"},
                                         {FI_BUFFERED_RECV, "FI_BUFFERED_RECV"}};
  return names(mode, kBits);
}

std::vector<std::string> mrModeBitNames(uint64_t mr_mode) {
  static const std::vector<Bit> kBits = {
      {FI_MR_LOCAL, "FI_MR_LOCAL"},         {FI_MR_RAW, "FI_MR_RAW"},
      {FI_MR_VIRT_ADDR, "FI_MR_VIRT_ADDR"}, {FI_MR_ALLOCATED, "FI_MR_ALLOCATED"},
      {FI_MR_PROV_KEY, "FI_MR_PROV_KEY"},   {FI_MR_MMU_NOTIFY, "FI_MR_MMU_NOTIFY"},
      {FI_MR_RMA_EVENT, "FI_MR_RMA_EVENT"}, {FI_MR_ENDPOINT, "FI_MR_ENDPOINT"},
      {FI_MR_HMEM, "FI_MR_HMEM"},           {FI_MR_COLLECTIVE, "FI_MR_COLLECTIVE"}};
  return names(mr_mode, kBits);
}

std::string versionString(uint32_t version) {
  return std::to_string(FI_MAJOR(version)) + "." + std::to_string(FI_MINOR(version));
}

}  // namespace fabricwatch::probes::fabric
