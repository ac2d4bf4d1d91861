#include "probes/kinds/nccl/probe_child.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

#include "probes/kinds/nccl/nccl_api.h"
#include "probes/kinds/nccl/probe_protocol.h"

namespace fabricwatch::probes::nccl {
namespace {

using gpu::CudaApi;
using gpu::cudaVersionString;
using gpu::kCudaSuccess;
using gpu::loadCuda;

int resultFd() { return ::fcntl(3, F_GETFD) >= 0 ? 3 : STDOUT_FILENO; }

void writeAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

std::string readInput() {
  std::string in;
  char buf[4096];
  while (in.size() < 64 * 1024) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  return in;
}

std::string hex(const NcclUniqueId& id) {
  static const char* k = "0123456789abcdef";
  std::string out;
  for (unsigned char c : id.internal) {
    out += k[c >> 4];
    out += k[c & 15];
  }
  return out;
}

bool unhex(const std::string& s, NcclUniqueId& id) {
  auto v = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (s.size() != 2 * sizeof id.internal) return false;
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    int hi = v(s[2 * i]), lo = v(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    id.internal[i] = static_cast<char>(hi << 4 | lo);
  }
  return true;
}

// One device's share of a run.
struct Rank {
  int device = 0;
  int rank = 0;  // in the communicator
  NcclComm comm = nullptr;
  CudaStream stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

// Allocates, measures every size, and frees. Fills res.results, or sets res.state/reason.
void measure(const CudaApi& cuda, const NcclApi& nccl, const ChildRequest& req,
             std::vector<Rank>& ranks, int nranks, ChildResult& res) {
  uint64_t max_bytes = 0;
  for (auto b : req.sizes) max_bytes = std::max(max_bytes, b);
  auto fail = [&](const std::string& why) {
    res.state = "failed";
    res.reason = why;
  };
  for (auto& r : ranks) {
    int e;
    if ((e = cuda.setDevice(r.device)) != kCudaSuccess ||
        (e = cuda.malloc(&r.send, max_bytes)) != kCudaSuccess ||
        (e = cuda.malloc(&r.recv, max_bytes)) != kCudaSuccess ||
        (e = cuda.memset(r.send, 0, max_bytes)) != kCudaSuccess ||
        (e = cuda.streamCreate(&r.stream)) != kCudaSuccess) {
      fail("device " + std::to_string(r.device) + ": " + cuda.error(e));
      break;
    }
  }
  const bool send_recv = req.operation == "send_recv";
  // One iteration of the operation for every rank of this process, grouped. send_recv is
  // nccl-tests' sendrecv: each rank sends its buffer to the next rank and receives from the
  // previous one.
  auto iteration = [&](uint64_t bytes) -> int {
    int rc = nccl.groupStart();
    for (auto& r : ranks) {
      if (rc != kNcclSuccess) break;
      if (send_recv) {
        rc = nccl.send(r.send, bytes / 4, kNcclFloat32, (r.rank + 1) % nranks, r.comm, r.stream);
        if (rc == kNcclSuccess)
          rc = nccl.recv(r.recv, bytes / 4, kNcclFloat32, (r.rank + nranks - 1) % nranks, r.comm,
                         r.stream);
      } else {
        rc = nccl.allReduce(r.send, r.recv, bytes / 4, kNcclFloat32, kNcclSum, r.comm, r.stream);
      }
    }
    int end = nccl.groupEnd();
    return rc != kNcclSuccess ? rc : end;
  };
  auto sync = [&]() -> int {
    for (auto& r : ranks) {
      cuda.setDevice(r.device);
      if (int e = cuda.streamSynchronize(r.stream); e != kCudaSuccess) return e;
    }
    return kCudaSuccess;
  };
  for (uint64_t bytes : req.sizes) {
    if (res.state == "failed") break;
    using Clock = std::chrono::steady_clock;
    int rc = kNcclSuccess;
    for (int i = 0; i < req.warmup && rc == kNcclSuccess; ++i) rc = iteration(bytes);
    if (rc == kNcclSuccess && sync() != kCudaSuccess) rc = -1;
    auto t0 = Clock::now();
    for (int i = 0; i < req.iterations && rc == kNcclSuccess; ++i) rc = iteration(bytes);
    int se = rc == kNcclSuccess ? sync() : kCudaSuccess;
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (rc != kNcclSuccess) {
      fail(std::string(send_recv ? "ncclSend/ncclRecv (" : "ncclAllReduce (") +
           std::to_string(bytes) +
           " bytes): " + (rc < 0 ? std::string("CUDA error") : nccl.error(rc)));
      break;
    }
    if (se != kCudaSuccess) {
      fail("cudaStreamSynchronize: " + cuda.error(se));
      break;
    }
    SizeResult s;
    s.bytes = bytes;
    s.time_us = secs / req.iterations * 1e6;
    s.algbw_gbps = static_cast<double>(bytes) / (s.time_us * 1e-6) / 1e9;
    s.busbw_gbps = busBw(req.operation, s.algbw_gbps, nranks);
    res.results.push_back(s);
  }
  for (auto& r : ranks) {
    int async = kNcclSuccess;
    if (r.comm && nccl.commGetAsyncError(r.comm, &async) == kNcclSuccess && async != kNcclSuccess &&
        async != kNcclInProgress && res.state != "failed")
      fail("asynchronous NCCL error: " + nccl.error(async));
    cuda.setDevice(r.device);
    if (r.send) cuda.free(r.send);
    if (r.recv) cuda.free(r.recv);
    if (r.stream) cuda.streamDestroy(r.stream);
    if (r.comm) nccl.commDestroy(r.comm);
  }
  if (res.state.empty()) res.state = "ok";
}

std::string testModeName() {
  const char* m = std::getenv(std::string(kTestModeEnv).c_str());
  return m ? m : "";
}

[[noreturn]] void hangUntilKilled() {
  while (true) std::this_thread::sleep_for(std::chrono::hours(1));
}

// Test-only behaviours (kTestModeEnv), so that the runner's timeout and crash handling and the
// daemon's isolation can be tested on a machine without a GPU.
void testMode(int out) {
  std::string mode = testModeName();
  if (mode.empty()) return;
  if (mode == "hang") {
    writeAll(out, "state=");  // a partial line, as a child stuck mid-write leaves
    hangUntilKilled();
  }
  if (mode == "crash") std::abort();
  if (mode == "flood") {
    std::string line(1000, 'x');
    line += "\n";
    for (int i = 0; i < 4096; ++i) writeAll(out, line);
    std::exit(0);
  }
}

}  // namespace

int runProbeChild() {
  // An NCCL call that hangs must not outlive the daemon that started it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  int out = resultFd();
  testMode(out);
  ChildResult res;
  std::string error;
  auto req = parseRequest(readInput(), error);
  if (!req) {
    res.state = "failed";
    res.reason = "bad request: " + error;
    writeAll(out, encodeResult(res));
    return 2;
  }
  if (req->parent > 0 && ::getppid() != req->parent) return 0;  // the daemon is already gone
  auto report = [&] {
    writeAll(out, encodeResult(res));
    return 0;
  };
  CudaApi cuda;
  std::string why;
  if (!loadCuda(req->cudart_libraries, cuda, why)) {
    res.state = "unavailable";
    res.reason = "CUDA runtime not loadable: " + why;
    return report();
  }
  NcclApi nccl;
  if (!loadNccl(req->nccl_library, nccl, why)) {
    res.state = "unavailable";
    res.reason = "NCCL not loadable: " + why;
    return report();
  }
  int v = 0;
  if (nccl.getVersion(&v) == kNcclSuccess) res.nccl_version = ncclVersionString(v);
  if (cuda.runtimeGetVersion(&v) == kCudaSuccess && v > 0)
    res.cuda_runtime_version = cudaVersionString(v);
  if (cuda.driverGetVersion(&v) == kCudaSuccess && v > 0)  // 0: no driver installed
    res.cuda_driver_version = cudaVersionString(v);
  // A rank run makes (rank 0) or takes the unique id first: ncclGetUniqueId needs no GPU, so
  // the exchange between the two nodes runs even where the device check below fails.
  NcclUniqueId id{};
  if (req->mode == "rank") {
    if (req->operation == "send_recv" && (!nccl.send || !nccl.recv)) {
      res.state = "unavailable";
      res.reason = "NCCL " + res.nccl_version + " has no ncclSend/ncclRecv (2.7 and later)";
      return report();
    }
    if (req->unique_id.empty()) {
      if (req->rank != 0) {
        res.state = "failed";
        res.reason = "rank " + std::to_string(req->rank) + " needs the unique id of rank 0";
        return report();
      }
      if (int rc = nccl.getUniqueId(&id); rc != kNcclSuccess) {
        res.state = "failed";
        res.reason = "ncclGetUniqueId: " + nccl.error(rc);
        return report();
      }
      res.unique_id = hex(id);
      writeAll(out, "unique_id=" + res.unique_id + "\n");  // first, so the peer can join
    } else if (!unhex(req->unique_id, id)) {
      res.state = "failed";
      res.reason = "unique_id is not 256 hex digits";
      return report();
    } else {
      res.unique_id = req->unique_id;
    }
  }
  if (testModeName() == "hang_in_init") hangUntilKilled();
  int count = 0;
  if (int e = cuda.getDeviceCount(&count); e != kCudaSuccess) {
    res.state = "unavailable";
    res.reason = "cudaGetDeviceCount: " + cuda.error(e);
    return report();
  }
  res.gpus = count;
  std::vector<Rank> ranks;
  int nranks = 0;
  if (req->mode == "local") {
    if (count < 2) {
      res.state = "unavailable";
      res.reason = std::to_string(count) + " GPU(s): a local all-reduce needs at least 2";
      return report();
    }
    std::vector<NcclComm> comms(static_cast<size_t>(count));
    std::vector<int> devs;
    for (int i = 0; i < count; ++i) devs.push_back(i);
    if (int rc = nccl.commInitAll(comms.data(), count, devs.data()); rc != kNcclSuccess) {
      res.state = "failed";
      res.reason = "ncclCommInitAll: " + nccl.error(rc);
      return report();
    }
    for (int i = 0; i < count; ++i) ranks.push_back(Rank{i, i, comms[static_cast<size_t>(i)]});
    nranks = count;
  } else {
    if (count < 1) {
      res.state = "unavailable";
      res.reason = "no GPU (cudaGetDeviceCount found 0)";
      return report();
    }
    int device = req->rotate_device ? req->device % count : req->device;
    if (device >= count) {
      res.state = "unavailable";
      res.reason = "device " + std::to_string(device) + " does not exist (" +
                   std::to_string(count) + " GPUs)";
      return report();
    }
    res.device = device;
    cuda.setDevice(device);
    Rank r{device, req->rank};
    if (int rc = nccl.commInitRank(&r.comm, req->nranks, id, req->rank); rc != kNcclSuccess) {
      res.state = "failed";
      res.reason = "ncclCommInitRank: " + nccl.error(rc);
      return report();
    }
    ranks.push_back(r);
    nranks = req->nranks;
  }
  res.ranks = nranks;
  measure(cuda, nccl, *req, ranks, nranks, res);
  return report();
}

}  // namespace fabricwatch::probes::nccl
