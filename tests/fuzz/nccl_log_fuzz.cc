// Fuzzes the NCCL log parser and its verdict: any bytes, fed whole and in two pieces, must give
// the same bounded summary, valid UTF-8 in its JSON, never a crash or an exception. The probe's
// result parser (what a crashed or hostile child wrote) gets the same bytes.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/utf8.h"
#include "core/value_format.h"
#include "nccl/log_parse.h"
#include "nccl/log_verdict.h"
#include "probes/kinds/nccl/probe_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace n = fabricwatch::nccl;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  n::LogLimits lim;
  lim.max_line_bytes = 256;
  lim.max_lines = 1000;
  auto whole = n::parseNcclLog(text, lim);
  n::LogParser split(lim);
  split.feed(text.substr(0, size / 2));
  split.feed(text.substr(size / 2));
  auto parts = split.finish();
  std::string a = fabricwatch::core::toJson(n::summaryValue(whole, n::judge(whole)));
  std::string b = fabricwatch::core::toJson(n::summaryValue(parts, n::judge(parts)));
  if (a != b || fabricwatch::core::sanitizeUtf8(a) != a) std::abort();
  (void)n::renderText(whole, n::judge(whole));
  (void)fabricwatch::probes::nccl::parseResult(text);
  return 0;
}
