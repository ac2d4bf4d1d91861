// Fuzzes the sysfs and procfs parsers (facts/*_parse.cc): every parser gets the same
// bytes, as a file of the host could hold anything. None may crash, hang or throw, and what
// they return must render as valid JSON.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/utf8.h"
#include "core/value_format.h"
#include "facts/fact_reader.h"
#include "facts/host_parse.h"
#include "facts/pci_parse.h"
#include "facts/rdma_parse.h"
#include "facts/software_parse.h"
#include "facts/workload_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace n = fabricwatch::facts;
  namespace core = fabricwatch::core;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // rdma
  (void)n::parseCodeName(text);
  (void)n::parseRateGbps(text);
  (void)n::isUnavailableCounter(text);
  (void)n::isZeroGid(text);
  (void)n::rdmaKind(text, n::RdmaHardware{true, std::string(text.substr(0, size / 2)), 0});
  (void)n::ueventValue(text, "DRIVER");
  // pci
  (void)n::parsePcieSpeed(text);
  (void)n::isPciAddress(text);
  auto bridges = n::pciBridges(text);
  (void)n::pciProximity(bridges, n::pciBridges(text.substr(size / 2)));
  // host (/proc and sysfs)
  (void)n::parseMeminfo(text);
  core::Value v = core::Value::map();
  v["memlock"] = n::parseMemlock(text);
  v["driver"] = n::parseNvidiaDriverVersion(text);
  for (const auto& m : n::parseModules(text)) v["modules"].push(m);
  for (const auto& a : n::parseIfInet6(text)) v["inet6"].push(a.ifname + " " + a.address);
  if (auto b = n::parseBondMode(text)) v["bond"] = b->name;
  // software
  for (const auto& e : n::parseNcclConf(text)) v["conf"][e.key] = e.value;
  for (const auto& [pkg, ver] : n::parseDpkgStatus(text)) v["dpkg"][pkg] = ver;
  auto efa = n::parseEfaInstalledPackages(text);
  (void)n::packageVersion(text, text.substr(0, size / 3));
  (void)n::versionAfter(text.substr(0, size / 4), text);
  // workloads (/proc/PID)
  auto libs = n::parseMappedLibraries(text);
  for (const auto& [k, val] : n::parseEnviron(text, n::isFabricVariable)) v["env"][k] = val;
  auto cg = n::parseCgroupIdentity(text);
  (void)n::findGlibcVersion(text);
  (void)n::parseInteger(text);
  (void)n::parseUnsigned(text);
  // Whatever the parsers returned, the JSON a scrape or the API would serve is valid UTF-8
  // once it has entered the snapshot (core/scheduler.cc makes it so).
  core::makeStringsValidUtf8(v);
  if (!core::isValidUtf8(core::toJson(v))) std::abort();
  (void)efa;
  (void)libs;
  (void)cg;
  return 0;
}
