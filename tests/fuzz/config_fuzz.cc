// Fuzzes the configuration loader: any bytes must come back as a config or positioned problems,
// never a crash, a hang or an exception.
#include <cstdint>
#include <string_view>

#include "config/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = fabricwatch::config::loadConfig(text, "fuzz.toml", {{"kernel", "rdma"}});
  for (const auto& d : r.problems) (void)d.format();
  return 0;
}
