#pragma once
// One libfabric RDM endpoint with everything it needs, opened once and kept: the provider's
// fi_info, fabric, domain, completion queue, address vector, and registered buffers. It honours
// what the provider asks of the application, so code that runs on tcp runs on efa and verbs:
//   - mode bits FI_CONTEXT / FI_CONTEXT2 (every operation gets its own fi_context2) and
//     FI_MSG_PREFIX (buffers reserve the provider's prefix before the payload);
//   - mr_mode FI_MR_LOCAL (buffers are registered and their descriptors passed), FI_MR_ALLOCATED
//     (buffers are allocated before registration), FI_MR_PROV_KEY (the provider picks keys),
//     FI_MR_VIRT_ADDR (recorded; only RMA would use it) and FI_MR_ENDPOINT (regions are bound
//     to the endpoint). EFA asks for the first four; tcp for none.
// An Endpoint is used by one thread at a time (FI_THREAD_DOMAIN: each has its own domain).
// Calls that may print (fi_getinfo loads providers that use libibverbs) run under
// core::log::captureStderr, so the daemon's output stays structured.

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probes/kinds/fabric/queue_sizes.h"

namespace fabricwatch::probes::fabric {

using Clock = std::chrono::steady_clock;

// A libfabric failure, or one of the probe's own (a timeout: code 0).
struct FabricError {
  std::string op;      // fi_getinfo, fi_domain, fi_av_insert, fi_send, fi_recv, completion ...
  int code = 0;        // positive libfabric errno (FI_ENODATA = 61 ...); 0: not libfabric's
  std::string text;    // fi_strerror(code), or the probe's own ("timed out ...")
  std::string detail;  // the provider's own words (fi_cq_strerror): facts and logs only

  std::string message() const;  // "fi_getinfo: No data available (detail)"
};
FabricError libfabricError(std::string op, int ret, std::string detail = "");

// What a configuration asks of the endpoint.
struct EndpointOptions {
  std::string provider = "auto";  // a name from providers.h; "auto": the best one present
  std::string domain;             // libfabric domain name (mlx5_0, rdmap16s27-rdm, lo); "": any
  std::string source_address;     // numeric IP that socket providers bind to; "": theirs
  bool register_buffers = false;  // register buffers even where FI_MR_LOCAL is not asked for
  bool hmem = false;              // ask for FI_HMEM (GPU memory); fails where unsupported
  size_t max_message = 4096;      // the largest message it must carry
  // tx_attr->size and rx_attr->size where the provider is layered on rxm (queue_sizes.h).
  size_t queue_depth = kProbeQueueDepth;
};

// The provider as chosen and opened: facts and the _info metric.
struct ProviderFacts {
  std::string provider;           // fi_getinfo's prov_name, e.g. "tcp;ofi_rxm"
  std::string fabric;             // fabric_attr->name, e.g. "127.0.0.1/32", "efa"
  std::string domain;             // domain_attr->name, e.g. "lo", "rdmap16s27-rdm"
  std::string provider_version;   // fabric_attr->prov_version, e.g. "117.0"
  std::string api_version;        // fi_version() of the loaded libfabric, e.g. "1.17"
  std::vector<std::string> mode;  // mode bits the provider asks for
  std::vector<std::string> mr_mode;
  bool mr_local = false;    // buffers must be registered
  bool registered = false;  // buffers are registered (required, or register_buffers)
  bool hmem = false;        // the endpoint has FI_HMEM
  size_t inject_size = 0, max_msg_size = 0, msg_prefix_size = 0;
  std::string addr_format;  // FI_SOCKADDR_IN, FI_ADDR_EFA ...
};

class Endpoint;

// A host buffer (page aligned, allocated before registration) with the provider's prefix
// reserved before the payload, registered when the endpoint needs it. Must not outlive its
// Endpoint.
class Buffer {
 public:
  Buffer() = default;
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  char* payload() const { return base_ + prefix_; }  // where the message's bytes go
  char* base() const { return base_; }               // what is posted (prefix included)
  size_t capacity() const { return size_; }          // payload bytes
  size_t prefix() const { return prefix_; }
  void* desc() const { return desc_; }  // null when not registered

 private:
  friend class Endpoint;
  void release();
  char* base_ = nullptr;
  size_t size_ = 0, prefix_ = 0;
  struct fid_mr* mr_ = nullptr;
  void* desc_ = nullptr;
};

// A completion: the operation's context, and for receives the bytes received.
struct Completion {
  void* context = nullptr;
  uint64_t flags = 0;
  size_t len = 0;
};

class Endpoint {
 public:
  // fi_getinfo, choice (`auto`), then fabric, domain, CQ, AV and endpoint; facts are filled as
  // far as it got (the provider is known even when its domain fails to open).
  static std::unique_ptr<Endpoint> open(const EndpointOptions& opts, ProviderFacts& facts,
                                        std::optional<FabricError>& error);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  const ProviderFacts& facts() const { return facts_; }
  // The endpoint's address (fi_getname): what peers insert into their address vectors.
  const std::string& name() const { return name_; }

  std::optional<fi_addr_t> insert(const std::string& name, std::optional<FabricError>& error);
  void remove(fi_addr_t addr);

  // A buffer for `bytes` of payload, registered if needed.
  std::optional<Buffer> allocate(size_t bytes, std::optional<FabricError>& error);

  // Registers device memory (iface FI_HMEM_CUDA ...) and releases the registration at once:
  // whether the provider can reach that memory. nullopt when it can.
  std::optional<FabricError> registerDevice(void* addr, size_t len, int iface, int device);

  // Posting; -FI_EAGAIN means "poll and retry". `len` counts payload bytes.
  ssize_t postRecv(const Buffer& b, size_t len, void* context);
  ssize_t postSend(const Buffer& b, size_t len, fi_addr_t dest, void* context);
  ssize_t inject(const Buffer& b, size_t len, fi_addr_t dest);
  bool canInject(size_t len) const { return len + facts_.msg_prefix_size <= facts_.inject_size; }
  // Cancels a posted operation (its completion then reports FI_ECANCELED).
  void cancel(void* context);

  // Closes the endpoint alone, ending what is in flight on it, so that the buffers it had
  // posted can be freed (a failed session's receives are still posted). Nothing may be posted
  // afterwards; the rest closes with the Endpoint.
  void closeEndpoint();
  bool closed() const { return ep_ == nullptr; }
  // Forgets every libfabric object without closing any (they leak, kept reachable): for an
  // endpoint that a failed session left with operations in flight, where closing it could crash
  // the provider (RetiredEndpoints).
  void abandon();

  // The contexts of a failed session's operations still in flight: poll() drops their
  // completions (whoever retired the endpoint keeps what they use, RetiredEndpoints).
  void orphan(const std::vector<void*>& in_flight);
  size_t orphans() const { return orphans_.size(); }  // those not completed yet
  // Reads the completion queue (bounded) for the orphans' completions: between sessions, when
  // nothing else is in flight.
  void drainOrphans();

  // Reads up to `max` completions into `out`; returns how many (0: none yet), or a negative
  // libfabric error; a failed operation is returned as an error with its context.
  ssize_t poll(Completion* out, size_t max, FabricError* error, void** failed_context);

 private:
  Endpoint() = default;
  std::optional<FabricError> build(const EndpointOptions& opts);

  // fi_cq_read into `entries` (at most 16); a failed operation's error entry is read and
  // returned negative, with its context in `*failed_context`: what poll() and drainOrphans()
  // read.
  ssize_t readQueue(fi_cq_msg_entry* entries, size_t max, FabricError* error,
                    void** failed_context);
  // True when `context` was an orphan's (and is one no more).
  bool dropOrphan(void* context);

  ProviderFacts facts_;
  std::vector<void*> orphans_;
  struct fi_info* info_ = nullptr;
  struct fid_fabric* fabric_ = nullptr;
  struct fid_domain* domain_ = nullptr;
  struct fid_cq* cq_ = nullptr;
  struct fid_av* av_ = nullptr;
  struct fid_ep* ep_ = nullptr;
  std::string name_;
  bool mr_endpoint_ = false;
  bool prov_key_ = false;
  uint64_t next_key_ = 1;  // keys the probe picks where the provider does not
};

// Holds `p` for the life of the process (reachable, so no leak report): what an abandoned
// endpoint's operations may still read or write.
void keepForever(std::shared_ptr<void> p);

// The provider `opts` chooses (its `auto`, as Endpoint::open picks it) and the domains
// fi_getinfo lists for it, in its order, each once: the node's RDMA devices (verbs: mlx5_0 ...;
// efa: rdmap16s27-rdm ...; tcp: interfaces). nullopt when there is none (`error` says why).
struct DomainList {
  std::string provider;
  std::vector<std::string> domains;
};
std::optional<DomainList> listDomains(const EndpointOptions& opts,
                                      std::optional<FabricError>& error);

// fi_version() of the loaded library, "1.17".
std::string libfabricVersion();

}  // namespace fabricwatch::probes::fabric
