#include "probes/kinds/fabric/endpoint.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "core/log.h"
#include "probes/kinds/fabric/libfabric.h"
#include "probes/kinds/fabric/providers.h"

namespace fabricwatch::probes::fabric {
namespace {

// The API version the probe is written against: the headers' own, or the loaded library's when
// that is older (fi_getinfo refuses a newer one).
uint32_t requestedVersion(const Libfabric& f) {
  return std::min<uint32_t>(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), f.version());
}

std::string addrFormatName(uint32_t f) {
  switch (f) {
    case FI_SOCKADDR:
      return "FI_SOCKADDR";
    case FI_SOCKADDR_IN:
      return "FI_SOCKADDR_IN";
    case FI_SOCKADDR_IN6:
      return "FI_SOCKADDR_IN6";
    case FI_SOCKADDR_IB:
      return "FI_SOCKADDR_IB";
    case FI_ADDR_PSMX2:
      return "FI_ADDR_PSMX2";
    case FI_ADDR_EFA:
      return "FI_ADDR_EFA";
    case FI_ADDR_STR:
      return "FI_ADDR_STR";
    default:
      return "format " + std::to_string(f);
  }
}

struct InfoDeleter {
  void operator()(fi_info* i) const {
    if (i) libfabric()->freeinfo(i);
  }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

InfoPtr hintsFor(const EndpointOptions& o, const std::string& prov_name) {
  InfoPtr h(libfabric()->dupinfo(nullptr));  // fi_allocinfo()
  if (!h) return h;
  h->caps = FI_MSG | (o.hmem ? FI_HMEM : 0);
  // Modes the probe handles: a context per operation, and a prefix before each payload.
  h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_MSG_PREFIX;
  h->ep_attr->type = FI_EP_RDM;
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                            FI_MR_ENDPOINT | (o.hmem ? FI_MR_HMEM : 0);
  h->domain_attr->threading = FI_THREAD_DOMAIN;
  if (!prov_name.empty()) h->fabric_attr->prov_name = ::strdup(prov_name.c_str());
  if (!o.domain.empty()) h->domain_attr->name = ::strdup(o.domain.c_str());
  return h;
}

// fi_getinfo with stderr captured (providers print while they initialise).
int getinfo(const EndpointOptions& o, const std::string& prov_name, const char* node,
            InfoPtr& out) {
  InfoPtr hints = hintsFor(o, prov_name);
  if (!hints) return -FI_ENOMEM;
  fi_info* info = nullptr;
  int ret = 0;
  const Libfabric& f = *libfabric();
  std::string said = core::log::captureStderr([&] {
    SignalDispositions keep;  // providers initialise here: no crash handler of theirs stays
    ret = f.getinfo(requestedVersion(f), node, nullptr, node ? FI_SOURCE : 0, hints.get(), &info);
  });
  if (!said.empty())
    core::log::warn("fabric", "libfabric printed while loading providers", {{"output", said}});
  out.reset(info);
  return ret;
}

// The entries of fi_getinfo's list whose provider is `prov` (every entry when it is empty), with
// their provider names in the same order: what both the domain listing and the opening choose from.
void matchingEntries(fi_info* list, const std::string& prov, std::vector<std::string>& names,
                     std::vector<fi_info*>& entries) {
  for (fi_info* i = list; i; i = i->next) {
    std::string n = i->fabric_attr && i->fabric_attr->prov_name ? i->fabric_attr->prov_name : "";
    if (!prov.empty() && !providerMatches(prov, n)) continue;
    names.push_back(n);
    entries.push_back(i);
  }
}

}  // namespace

std::string FabricError::message() const {
  std::string m = op.empty() ? text : op + ": " + text;
  if (!detail.empty() && detail != text) m += " (" + detail + ")";
  return m;
}

FabricError libfabricError(std::string op, int ret, std::string detail) {
  int code = ret < 0 ? -ret : ret;
  return {std::move(op), code, fabricStrerror(code), std::move(detail)};
}

std::string libfabricVersion() {
  const Libfabric* f = libfabric();
  return f ? versionString(f->version()) : "";
}

std::optional<DomainList> listDomains(const EndpointOptions& opts,
                                      std::optional<FabricError>& error) {
  std::string why;
  if (!libfabric(&why)) {
    error = FabricError{"dlopen", 0, "cannot load libfabric.so.1", why};
    return std::nullopt;
  }
  std::string prov = opts.provider == kAuto ? "" : opts.provider;
  EndpointOptions any = opts;
  any.domain.clear();
  InfoPtr list;
  if (int ret = getinfo(any, prov, nullptr, list)) {
    error = libfabricError("fi_getinfo", ret);
    return std::nullopt;
  }
  std::vector<std::string> names;
  std::vector<fi_info*> entries;
  matchingEntries(list.get(), prov, names, entries);
  std::optional<size_t> pick =
      prov.empty() ? pickAuto(names) : (entries.empty() ? std::nullopt : std::optional<size_t>(0));
  if (!pick) {
    error = FabricError{"fi_getinfo", FI_ENODATA, fabricStrerror(FI_ENODATA), "no provider"};
    return std::nullopt;
  }
  DomainList out;
  out.provider = names[*pick];
  for (size_t k = 0; k < entries.size(); ++k) {
    if (names[k] != out.provider) continue;
    const fi_info* i = entries[k];
    std::string d = i->domain_attr && i->domain_attr->name ? i->domain_attr->name : "";
    if (d.empty() || std::find(out.domains.begin(), out.domains.end(), d) != out.domains.end())
      continue;
    out.domains.push_back(d);
  }
  return out;
}

// --- Buffer ---

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& o) noexcept { *this = std::move(o); }

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    base_ = std::exchange(o.base_, nullptr);
    size_ = std::exchange(o.size_, 0);
    prefix_ = std::exchange(o.prefix_, 0);
    mr_ = std::exchange(o.mr_, nullptr);
    desc_ = std::exchange(o.desc_, nullptr);
  }
  return *this;
}

void Buffer::release() {
  if (mr_) fi_close(&mr_->fid);
  mr_ = nullptr;
  desc_ = nullptr;
  ::free(base_);
  base_ = nullptr;
}

// --- Endpoint ---

std::unique_ptr<Endpoint> Endpoint::open(const EndpointOptions& opts, ProviderFacts& facts,
                                         std::optional<FabricError>& error) {
  std::unique_ptr<Endpoint> ep(new Endpoint());
  error = ep->build(opts);
  facts = ep->facts_;
  if (error) return nullptr;
  return ep;
}

std::optional<FabricError> Endpoint::build(const EndpointOptions& opts) {
  std::string why;
  if (!libfabric(&why)) return FabricError{"dlopen", 0, "cannot load libfabric.so.1", why};
  facts_.api_version = libfabricVersion();
  // 1. Which provider: the configured one, or the best that fi_getinfo lists.
  std::string prov = opts.provider == kAuto ? "" : opts.provider;
  InfoPtr list;
  int ret = getinfo(opts, prov, nullptr, list);
  if (ret) return libfabricError("fi_getinfo", ret);
  std::vector<std::string> names;
  std::vector<fi_info*> entries;
  matchingEntries(list.get(), prov, names, entries);
  std::optional<size_t> pick;
  if (prov.empty())
    pick = pickAuto(names);
  else if (!entries.empty())
    pick = 0;
  if (!pick) {
    std::string seen;
    for (const auto& n : names)
      if (seen.find(n) == std::string::npos) seen += (seen.empty() ? "" : ", ") + n;
    return FabricError{"fi_getinfo", FI_ENODATA, fabricStrerror(FI_ENODATA),
                       "no provider usable by auto among: " + (seen.empty() ? "none" : seen)};
  }
  std::string chosen = names[*pick];
  InfoPtr info(libfabric()->dupinfo(entries[*pick]));
  // 2. Socket providers bind to the peer channel's address when it is a specific one, so the
  // fabric path is the one the mesh probes (and stays inside a network namespace).
  if (isSocketProvider(chosen) && !opts.source_address.empty()) {
    InfoPtr bound;
    ret = getinfo(opts, chosen, opts.source_address.c_str(), bound);
    if (ret) return libfabricError("fi_getinfo", ret, "binding " + opts.source_address);
    info.reset(libfabric()->dupinfo(bound.get()));
  }
  if (!info) return libfabricError("fi_dupinfo", -FI_ENOMEM);
  // Queues as deep as a probe needs (queue_sizes.h): lowered in the fi_info the endpoint opens
  // with, where the provider is one this was measured on.
  if (size_t d = queueDepthFor(chosen, opts.queue_depth)) {
    info->tx_attr->size = std::min(info->tx_attr->size, d);
    info->rx_attr->size = std::min(info->rx_attr->size, d);
  }
  info_ = info.release();

  facts_.provider = chosen;
  facts_.fabric = info_->fabric_attr->name ? info_->fabric_attr->name : "";
  facts_.domain = info_->domain_attr->name ? info_->domain_attr->name : "";
  facts_.provider_version = versionString(info_->fabric_attr->prov_version);
  facts_.mode = modeBitNames(info_->mode);
  facts_.mr_mode = mrModeBitNames(info_->domain_attr->mr_mode);
  facts_.mr_local = (info_->domain_attr->mr_mode & FI_MR_LOCAL) || (info_->mode & FI_LOCAL_MR);
  facts_.registered = facts_.mr_local || opts.register_buffers;
  facts_.hmem = (info_->caps & FI_HMEM) != 0;
  facts_.inject_size = info_->tx_attr->inject_size;
  facts_.max_msg_size = info_->ep_attr->max_msg_size;
  facts_.msg_prefix_size = (info_->mode & FI_MSG_PREFIX) ? info_->ep_attr->msg_prefix_size : 0;
  facts_.addr_format = addrFormatName(info_->addr_format);
  mr_endpoint_ = (info_->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0;
  prov_key_ = (info_->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
  if (opts.max_message > facts_.max_msg_size)
    return FabricError{"fi_getinfo", FI_EMSGSIZE, fabricStrerror(FI_EMSGSIZE),
                       "messages of " + std::to_string(opts.max_message) + " bytes exceed " +
                           chosen + "'s max_msg_size " + std::to_string(facts_.max_msg_size)};

  // 3. The objects, in the order libfabric wants them.
  if ((ret = libfabric()->fabric(info_->fabric_attr, &fabric_, nullptr)))
    return libfabricError("fi_fabric", ret);
  if ((ret = fi_domain(fabric_, info_, &domain_, nullptr))) return libfabricError("fi_domain", ret);
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.wait_obj = FI_WAIT_NONE;  // the probe polls: a wait object adds a wake-up per message
  cq_attr.size = 0;
  if ((ret = fi_cq_open(domain_, &cq_attr, &cq_, nullptr)))
    return libfabricError("fi_cq_open", ret);
  fi_av_attr av_attr{};
  av_attr.type = info_->domain_attr->av_type;  // FI_AV_UNSPEC: the provider's choice
  if ((ret = fi_av_open(domain_, &av_attr, &av_, nullptr)))
    return libfabricError("fi_av_open", ret);
  if ((ret = fi_endpoint(domain_, info_, &ep_, nullptr))) return libfabricError("fi_endpoint", ret);
  if ((ret = fi_ep_bind(ep_, &av_->fid, 0))) return libfabricError("fi_ep_bind", ret, "av");
  if ((ret = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV)))
    return libfabricError("fi_ep_bind", ret, "cq");
  if ((ret = fi_enable(ep_))) return libfabricError("fi_enable", ret);
  std::string name(256, '\0');
  size_t len = name.size();
  ret = fi_getname(&ep_->fid, name.data(), &len);
  if (ret == -FI_ETOOSMALL && len <= 4096) {
    name.resize(len);
    ret = fi_getname(&ep_->fid, name.data(), &len);
  }
  if (ret) return libfabricError("fi_getname", ret);
  name.resize(len);
  name_ = std::move(name);
  return std::nullopt;
}

void keepForever(std::shared_ptr<void> p) {
  static std::mutex mu;
  static auto* kept = new std::vector<std::shared_ptr<void>>();
  std::lock_guard lock(mu);
  kept->push_back(std::move(p));
}

Endpoint::~Endpoint() {
  // Children before parents: endpoint, its AV and CQ, then the domain and fabric.
  if (ep_) fi_close(&ep_->fid);
  if (av_) fi_close(&av_->fid);
  if (cq_) fi_close(&cq_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) libfabric()->freeinfo(info_);
}

std::optional<fi_addr_t> Endpoint::insert(const std::string& name,
                                          std::optional<FabricError>& error) {
  fi_addr_t addr = FI_ADDR_UNSPEC;
  int ret = fi_av_insert(av_, name.data(), 1, &addr, 0, nullptr);
  if (ret != 1) {
    error = libfabricError("fi_av_insert", ret < 0 ? ret : -FI_EINVAL);
    return std::nullopt;
  }
  return addr;
}

void Endpoint::remove(fi_addr_t addr) { fi_av_remove(av_, &addr, 1, 0); }

std::optional<Buffer> Endpoint::allocate(size_t bytes, std::optional<FabricError>& error) {
  Buffer b;
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t total = bytes + facts_.msg_prefix_size;
  size_t rounded = (total + page - 1) / page * page;
  void* p = nullptr;
  if (::posix_memalign(&p, page, rounded) != 0) {
    error = libfabricError("posix_memalign", -FI_ENOMEM);
    return std::nullopt;
  }
  std::memset(p, 0, rounded);
  b.base_ = static_cast<char*>(p);
  b.size_ = bytes;
  b.prefix_ = facts_.msg_prefix_size;
  if (facts_.registered) {
    // Without FI_MR_PROV_KEY the application picks the keys, unique within the domain.
    uint64_t key = prov_key_ ? 0 : next_key_++;
    int ret = fi_mr_reg(domain_, b.base_, total, FI_SEND | FI_RECV, 0, key, 0, &b.mr_, nullptr);
    if (ret) {
      error = libfabricError("fi_mr_reg", ret, std::to_string(total) + " bytes");
      return std::nullopt;
    }
    if (mr_endpoint_) {
      if ((ret = fi_mr_bind(b.mr_, &ep_->fid, 0)) || (ret = fi_mr_enable(b.mr_))) {
        error = libfabricError("fi_mr_bind", ret);
        return std::nullopt;
      }
    }
    b.desc_ = fi_mr_desc(b.mr_);
  }
  return b;
}

std::optional<FabricError> Endpoint::registerDevice(void* addr, size_t len, int iface, int device) {
  iovec iov{addr, len};
  fi_mr_attr attr{};
  attr.mr_iov = &iov;
  attr.iov_count = 1;
  attr.access = FI_SEND | FI_RECV;
  attr.iface = static_cast<fi_hmem_iface>(iface);
  attr.device.cuda = device;
  attr.requested_key = prov_key_ ? 0 : next_key_++;
  fid_mr* mr = nullptr;
  int ret = fi_mr_regattr(domain_, &attr, 0, &mr);
  if (ret) return libfabricError("fi_mr_regattr", ret, "device memory");
  fi_close(&mr->fid);
  return std::nullopt;
}

ssize_t Endpoint::postRecv(const Buffer& b, size_t len, void* context) {
  return fi_recv(ep_, b.base(), len + b.prefix(), b.desc(), FI_ADDR_UNSPEC, context);
}

ssize_t Endpoint::postSend(const Buffer& b, size_t len, fi_addr_t dest, void* context) {
  return fi_send(ep_, b.base(), len + b.prefix(), b.desc(), dest, context);
}

ssize_t Endpoint::inject(const Buffer& b, size_t len, fi_addr_t dest) {
  return fi_inject(ep_, b.base(), len + b.prefix(), dest);
}

void Endpoint::cancel(void* context) { fi_cancel(&ep_->fid, context); }

void Endpoint::abandon() {
  orphans_.clear();
  // The objects stay reachable, as a leak kept on purpose (LeakSanitizer scans what is kept).
  struct Fids {
    void *ep, *av, *cq, *domain, *fabric;
  };
  keepForever(std::make_shared<Fids>(Fids{ep_, av_, cq_, domain_, fabric_}));
  ep_ = nullptr;
  av_ = nullptr;
  cq_ = nullptr;
  domain_ = nullptr;
  fabric_ = nullptr;
}

void Endpoint::closeEndpoint() {
  if (ep_) fi_close(&ep_->fid);
  ep_ = nullptr;
}

void Endpoint::orphan(const std::vector<void*>& in_flight) {
  orphans_.insert(orphans_.end(), in_flight.begin(), in_flight.end());
}

bool Endpoint::dropOrphan(void* context) {
  auto it = std::find(orphans_.begin(), orphans_.end(), context);
  if (it == orphans_.end()) return false;
  orphans_.erase(it);
  return true;
}

void Endpoint::drainOrphans() {
  // Between sessions nothing else is in flight: whatever else completes is dropped too.
  for (int i = 0; i < 64 && !orphans_.empty() && ep_; ++i) {
    fi_cq_msg_entry entries[16];
    FabricError err;
    void* failed = nullptr;
    ssize_t n = readQueue(entries, 16, &err, &failed);
    if (n == 0 || (n < 0 && !failed)) break;  // empty, or the queue itself failed
    if (n < 0) dropOrphan(failed);
    for (ssize_t k = 0; k < n; ++k) dropOrphan(entries[k].op_context);
  }
}

ssize_t Endpoint::readQueue(fi_cq_msg_entry* entries, size_t max, FabricError* error,
                            void** failed_context) {
  ssize_t n = fi_cq_read(cq_, entries, std::min<size_t>(max, 16));
  if (n > 0) return n;
  if (n == -FI_EAGAIN) return 0;
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    ssize_t r = fi_cq_readerr(cq_, &err, 0);
    if (r < 0) {
      *error = libfabricError("fi_cq_readerr", static_cast<int>(r));
      return r;
    }
    const char* detail = fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0);
    *error = libfabricError("completion", err.err, detail ? detail : "");
    *failed_context = err.op_context;
    return -static_cast<ssize_t>(err.err ? err.err : FI_EOTHER);
  }
  *error = libfabricError("fi_cq_read", static_cast<int>(n));
  return n;
}

ssize_t Endpoint::poll(Completion* out, size_t max, FabricError* error, void** failed_context) {
  fi_cq_msg_entry entries[16];
  void* failed = nullptr;
  ssize_t n = readQueue(entries, max, error, &failed);
  if (n < 0) {
    if (failed && !orphans_.empty() && dropOrphan(failed)) return 0;  // a failed session's
    *failed_context = failed;
    return n;
  }
  ssize_t kept = 0;
  for (ssize_t i = 0; i < n; ++i) {
    if (!orphans_.empty() && dropOrphan(entries[i].op_context)) continue;
    out[kept].context = entries[i].op_context;
    out[kept].flags = entries[i].flags;
    out[kept].len = entries[i].len >= facts_.msg_prefix_size
                        ? entries[i].len - facts_.msg_prefix_size
                        : entries[i].len;
    ++kept;
  }
  return kept;
}

}  // namespace fabricwatch::probes::fabric
