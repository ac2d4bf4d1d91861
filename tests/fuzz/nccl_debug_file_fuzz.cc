// Fuzzes NCCL_DEBUG_FILE's expansion (nccl/log_file.h: expandDebugFileName), which turns a
// workload's environment, written by whoever starts the job, into a path the daemon opens inside
// that process's root. The bytes are "pattern NUL hostname NUL pid". Properties:
//  - the host name adds no path separator, no '%' and no '.' (it is cut at its first '.' and
//    '%' and '/' become '-'): with a PID of digits, the output has no more '/' than the pattern;
//  - the output is bounded (4 KiB, plus at most one expansion);
//  - it equals an independent model of NCCL's debug.cc rules (%h, %p, %%, anything else kept)
//    wherever the model's output is under the bound, and is a prefix of it otherwise.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "nccl/log_file.h"

namespace {

[[noreturn]] void expandFail(const char* what) {
  std::fprintf(stderr, "nccl_debug_file_fuzz: %s\n", what);
  std::abort();
}

std::string model(std::string_view pattern, std::string_view hostname, std::string_view pid) {
  std::string host;
  for (char c : hostname) {
    if (c == '.') break;
    host += (c == '%' || c == '/') ? '-' : c;
  }
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[++i];
      out += c == '%'   ? std::string("%")
             : c == 'h' ? host
             : c == 'p' ? std::string(pid)
                        : std::string("%") + c;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  size_t a = bytes.find('\0');
  std::string_view pattern = bytes.substr(0, a);
  std::string_view rest = a == std::string_view::npos ? std::string_view{} : bytes.substr(a + 1);
  size_t b = rest.find('\0');
  std::string_view host = rest.substr(0, b);
  std::string_view pid = b == std::string_view::npos ? std::string_view{} : rest.substr(b + 1);

  std::string out = fabricwatch::nccl::expandDebugFileName(pattern, host, pid);
  if (out.size() > 4096 + std::max({host.size(), pid.size(), size_t{2}}))
    expandFail("expansion not bounded");
  std::string want = model(pattern, host, pid);
  if (want.size() < 4096 ? out != want : want.compare(0, out.size(), out) != 0)
    expandFail("expansion differs from NCCL's rules");
  // A numeric PID: the host name adds no '/'.
  std::string digits;
  for (char c : pid)
    if (c >= '0' && c <= '9') digits += c;
  std::string numeric = fabricwatch::nccl::expandDebugFileName(pattern, host, digits);
  if (std::count(numeric.begin(), numeric.end(), '/') >
      std::count(pattern.begin(), pattern.end(), '/'))
    expandFail("the host name added a path separator");
  std::string h = fabricwatch::nccl::expandDebugFileName("%h", host, "");
  if (h.find_first_of("/%.") != std::string::npos) expandFail("a host name kept '/', '%' or '.'");
  return 0;
}
