#include "probes/kinds/nccl/probe_protocol.h"

#include <charconv>
#include <cstdio>
#include <sstream>

#include "core/utf8.h"

namespace fabricwatch::probes::nccl {
namespace {

constexpr size_t kMaxLines = 256;
constexpr size_t kMaxSizes = 16;

std::string oneLine(std::string_view s) {
  std::string out = core::sanitizeUtf8(s, 1000);  // control characters (newlines) become '?'
  return out;
}

template <typename T>
bool number(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t e = s.find(sep, start);
    if (e == std::string_view::npos) e = s.size();
    if (e > start) out.push_back(s.substr(start, e - start));
    start = e + 1;
  }
  return out;
}

// Calls f(key, value) for each KEY=VALUE line, at most kMaxLines.
template <typename F>
void eachLine(std::string_view text, F f) {
  size_t n = 0;
  for (auto line : split(text, '\n')) {
    if (++n > kMaxLines) break;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    f(line.substr(0, eq), line.substr(eq + 1));
  }
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string encodeRequest(const ChildRequest& r) {
  std::ostringstream o;
  o << "mode=" << r.mode << "\noperation=" << r.operation << "\nsizes=";
  for (size_t i = 0; i < r.sizes.size(); ++i) o << (i ? "," : "") << r.sizes[i];
  o << "\nwarmup=" << r.warmup << "\niterations=" << r.iterations
    << "\nnccl_library=" << r.nccl_library << "\ncudart_libraries=";
  for (size_t i = 0; i < r.cudart_libraries.size(); ++i)
    o << (i ? "," : "") << r.cudart_libraries[i];
  o << "\nrank=" << r.rank << "\nnranks=" << r.nranks << "\ndevice=" << r.device
    << "\nrotate_device=" << (r.rotate_device ? 1 : 0) << "\nunique_id=" << r.unique_id
    << "\nparent=" << r.parent << "\n";
  return o.str();
}

std::optional<ChildRequest> parseRequest(std::string_view text, std::string& error) {
  ChildRequest r;
  eachLine(text, [&](std::string_view k, std::string_view v) {
    auto intKey = [&](int& out, int lo, int hi) {
      if (!number(v, out) || out < lo || out > hi)
        error = std::string(k) + ": \"" + oneLine(v) + "\" is not in [" + std::to_string(lo) +
                ", " + std::to_string(hi) + "]";
    };
    if (k == "mode") {
      r.mode = std::string(v);
      if (r.mode != "local" && r.mode != "rank") error = "mode must be local or rank";
    } else if (k == "operation") {
      r.operation = std::string(v);
      if (!validOperation(r.operation)) error = "operation must be all_reduce or send_recv";
    } else if (k == "rotate_device") {
      if (v != "0" && v != "1") error = "rotate_device must be 0 or 1";
      r.rotate_device = v == "1";
    } else if (k == "sizes") {
      r.sizes.clear();
      for (auto s : split(v, ',')) {
        uint64_t b = 0;
        if (!number(s, b) || b < 4 || b > (uint64_t{16} << 30) || r.sizes.size() >= kMaxSizes) {
          error = "sizes: \"" + oneLine(s) + "\" must be 4 bytes to 16 GiB, at most 16 sizes";
          return;
        }
        r.sizes.push_back(b);
      }
      if (r.sizes.empty()) error = "sizes: none given";
    } else if (k == "warmup") {
      intKey(r.warmup, 0, 1000);
    } else if (k == "iterations") {
      intKey(r.iterations, 1, 10000);
    } else if (k == "nccl_library") {
      r.nccl_library = std::string(v);
    } else if (k == "cudart_libraries") {
      r.cudart_libraries.clear();
      for (auto s : split(v, ',')) r.cudart_libraries.emplace_back(s);
    } else if (k == "rank") {
      intKey(r.rank, 0, 65535);
    } else if (k == "nranks") {
      intKey(r.nranks, 1, 65536);
    } else if (k == "device") {
      intKey(r.device, 0, 1023);
    } else if (k == "parent") {
      if (!number(v, r.parent) || r.parent < 0) error = "parent: not a PID";
    } else if (k == "unique_id") {
      r.unique_id = std::string(v);
      if (!r.unique_id.empty() && r.unique_id.size() != 256) error = "unique_id: 256 hex digits";
    }
  });
  if (error.empty() && r.rank >= r.nranks) error = "rank must be below nranks";
  if (!error.empty()) return std::nullopt;
  return r;
}

std::string encodeResult(const ChildResult& r) {
  std::ostringstream o;
  o << "state=" << oneLine(r.state) << "\n";
  if (!r.reason.empty()) o << "reason=" << oneLine(r.reason) << "\n";
  if (!r.nccl_version.empty()) o << "nccl_version=" << r.nccl_version << "\n";
  if (!r.cuda_driver_version.empty()) o << "cuda_driver_version=" << r.cuda_driver_version << "\n";
  if (!r.cuda_runtime_version.empty())
    o << "cuda_runtime_version=" << r.cuda_runtime_version << "\n";
  if (r.gpus >= 0) o << "gpus=" << r.gpus << "\n";
  if (r.ranks > 0) o << "ranks=" << r.ranks << "\n";
  if (r.device >= 0) o << "device=" << r.device << "\n";
  if (r.unique_id.size() == 256) o << "unique_id=" << r.unique_id << "\n";
  for (const auto& s : r.results)
    o << "result=" << s.bytes << " " << fmt(s.time_us) << " " << fmt(s.algbw_gbps) << " "
      << fmt(s.busbw_gbps) << "\n";
  return o.str();
}

ChildResult parseResult(std::string_view text) {
  ChildResult r;
  eachLine(text, [&](std::string_view k, std::string_view v) {
    if (k == "state") {
      r.state = core::sanitizeUtf8(v, 32);
    } else if (k == "reason") {
      r.reason = core::sanitizeUtf8(v, 1000);
    } else if (k == "nccl_version") {
      r.nccl_version = core::sanitizeUtf8(v, 32);
    } else if (k == "cuda_driver_version") {
      r.cuda_driver_version = core::sanitizeUtf8(v, 32);
    } else if (k == "cuda_runtime_version") {
      r.cuda_runtime_version = core::sanitizeUtf8(v, 32);
    } else if (k == "gpus") {
      number(v, r.gpus);
    } else if (k == "ranks") {
      number(v, r.ranks);
    } else if (k == "device") {
      number(v, r.device);
    } else if (k == "unique_id") {
      if (v.size() == 256 && v.find_first_not_of("0123456789abcdef") == std::string_view::npos)
        r.unique_id = std::string(v);
    } else if (k == "result" && r.results.size() < kMaxSizes) {
      auto f = split(v, ' ');
      SizeResult s;
      if (f.size() == 4 && number(f[0], s.bytes) && number(f[1], s.time_us) &&
          number(f[2], s.algbw_gbps) && number(f[3], s.busbw_gbps))
        r.results.push_back(s);
    }
  });
  return r;
}

double allReduceBusBw(double algbw, int ranks) {
  if (ranks <= 0) return 0;
  return algbw * 2.0 * (ranks - 1) / ranks;
}

double busBw(std::string_view operation, double algbw, int ranks) {
  return operation == "send_recv" ? algbw : allReduceBusBw(algbw, ranks);
}

bool validOperation(std::string_view operation) {
  return operation == "all_reduce" || operation == "send_recv";
}

}  // namespace fabricwatch::probes::nccl
