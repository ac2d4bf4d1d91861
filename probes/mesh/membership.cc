#include "probes/mesh/membership.h"

#include <sys/stat.h>

#include "core/diagnostic.h"
#include "core/host_fs.h"
#include "core/host_port.h"
#include "core/utf8.h"
#include "probes/mesh/net_util.h"

namespace fabricwatch::probes {

const char* memberStateName(MemberState s) {
  switch (s) {
    case MemberState::kPending:
      return "pending";
    case MemberState::kActive:
      return "active";
    case MemberState::kSelf:
      return "self";
  }
  return "pending";
}

core::Result<std::vector<std::string>> DnsSource::list() {
  DnsResult r = resolver_(name_, timeout_);
  if (!r.ok) return core::Error{"dns " + name_ + ": " + r.error};
  std::vector<std::string> out;
  for (const auto& a : r.addresses) out.push_back(joinHostPort(a, port_));
  return out;
}

core::Result<std::vector<std::string>> parsePeersFile(std::string_view text,
                                                      std::string_view file) {
  auto problem = [&](int line, size_t column, const std::string& message) {
    core::Diagnostic d{std::string(file), line, static_cast<int>(column), message, ""};
    return core::Error{d.format()};
  };
  if (text.size() > kMaxPeersFileBytes)
    return problem(0, 0, "over " + std::to_string(kMaxPeersFileBytes) + " bytes");
  std::vector<std::string> out;
  int n = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == text.npos ? text.npos : end - at);
    at = end == text.npos ? text.size() : end + 1;
    ++n;
    line = line.substr(0, line.find('#'));
    size_t b = line.find_first_not_of(" \t\r");
    if (b == line.npos) continue;
    size_t e = line.find_last_not_of(" \t\r");
    std::string ep(line.substr(b, e - b + 1));
    if (!core::isPeerEndpoint(ep))
      return problem(n, b + 1,
                     core::quoteForDisplay(ep, 100) +
                         " is not HOST:PORT (an IPv4 address, an IPv6 address in brackets or a "
                         "DNS name; a port 1-65535)");
    if (out.size() == kMaxPeersFileMembers)
      return problem(n, b + 1, "more than " + std::to_string(kMaxPeersFileMembers) + " members");
    out.push_back(std::move(ep));
  }
  return out;
}

core::Result<std::vector<std::string>> FileSource::list() {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    stamp_.reset();
    return core::Error{"file " + path_ + ": cannot stat"};
  }
  Stamp s{static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
  if (stamp_ && *stamp_ == s) return cached_;
  auto text = core::readRegularFile(path_, kMaxPeersFileBytes);
  if (!text) return core::Error{"file " + path_ + ": " + text.error().message};
  auto parsed = parsePeersFile(*text, path_);  // "PATH:LINE:COL: ..."
  if (!parsed) return parsed.error();
  cached_ = std::move(*parsed);
  stamp_ = s;
  return cached_;
}

Membership::Membership(std::vector<std::unique_ptr<MembershipSource>> sources,
                       std::chrono::milliseconds grace)
    : sources_(std::move(sources)), last_lists_(sources_.size()), grace_(grace) {}

std::vector<std::string> Membership::refresh(SteadyTime now) {
  // List outside the lock: a DNS lookup may take up to its timeout.
  std::vector<std::string> errors;
  std::vector<std::pair<std::string, std::vector<std::string>>> lists;
  for (size_t i = 0; i < sources_.size(); ++i) {
    auto r = sources_[i]->list();
    if (r)
      last_lists_[i] = std::move(*r);
    else
      errors.push_back(sources_[i]->kind() + ": " + r.error().message);
    lists.emplace_back(sources_[i]->kind(), last_lists_[i]);
  }
  std::lock_guard lock(mu_);
  for (auto& [_, m] : members_) m.sources.clear();
  for (const auto& [kind, list] : lists) {
    for (const auto& addr : list) {
      auto [it, inserted] = members_.try_emplace(addr);
      Member& m = it->second;
      if (inserted) {
        m.address = addr;
        m.first_seen = now;
      }
      m.sources.insert(kind);
      m.last_listed = now;
    }
  }
  std::erase_if(members_, [&](const auto& kv) { return now - kv.second.last_listed > grace_; });
  return errors;
}

void Membership::markAnswered(const std::string& address, const std::string& node,
                              const std::string& group, bool is_self) {
  std::lock_guard lock(mu_);
  auto it = members_.find(address);
  if (it == members_.end()) return;
  it->second.state = is_self ? MemberState::kSelf : MemberState::kActive;
  it->second.node = node;
  it->second.group = group;
}

void Membership::markSelf(const std::string& address) {
  std::lock_guard lock(mu_);
  auto it = members_.find(address);
  if (it != members_.end()) it->second.state = MemberState::kSelf;
}

std::vector<Member> Membership::members() const {
  std::lock_guard lock(mu_);
  std::vector<Member> out;
  for (const auto& [_, m] : members_) out.push_back(m);
  return out;
}

std::vector<std::string> Membership::namesAt(const std::string& ip) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [a, m] : members_) {
    if (m.node.empty() || m.state == MemberState::kSelf) continue;
    size_t colon = a.rfind(':');
    if (colon == std::string::npos) continue;
    std::string_view host(a.data(), colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    if (host == ip) out.push_back(m.node);
  }
  return out;
}

std::vector<std::string> Membership::addresses(MemberState state) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [a, m] : members_)
    if (m.state == state) out.push_back(a);
  return out;
}

}  // namespace fabricwatch::probes
