#pragma once
// Who is in the mesh. Sources list endpoints ("host:port"): a static list, a DNS name (every
// A/AAAA record of the DaemonSet's headless Service, re-resolved on each refresh), a file that
// is re-read when it changes; a Kubernetes API source can implement the same interface.
//
// Two rules keep the mesh quiet while a fleet changes:
//  - an endpoint no source lists any more is kept for a grace period before it is dropped
//    (a DNS blip or a rolling update does not flap the membership);
//  - a new endpoint is "pending" until it has answered one authenticated echo: only active
//    members are selected for probing, so a node still starting raises no alarms.
// A source that fails keeps its previous list for the same reason.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "probes/mesh/dns_probe.h"

namespace fabricwatch::probes {

using SteadyTime = std::chrono::steady_clock::time_point;

class MembershipSource {
 public:
  virtual ~MembershipSource() = default;
  virtual std::string kind() const = 0;  // "static", "dns", "file" (later "kubernetes")
  // The endpoints listed now; an error leaves the previous list in force.
  virtual core::Result<std::vector<std::string>> list() = 0;
};

class StaticSource : public MembershipSource {
 public:
  explicit StaticSource(std::vector<std::string> endpoints) : endpoints_(std::move(endpoints)) {}
  std::string kind() const override { return "static"; }
  core::Result<std::vector<std::string>> list() override { return endpoints_; }

 private:
  std::vector<std::string> endpoints_;
};

class DnsSource : public MembershipSource {
 public:
  using Resolver = std::function<DnsResult(const std::string&, std::chrono::milliseconds)>;
  DnsSource(std::string name, int port, std::chrono::milliseconds timeout,
            Resolver resolver = resolveHost)
      : name_(std::move(name)), port_(port), timeout_(timeout), resolver_(std::move(resolver)) {}
  std::string kind() const override { return "dns"; }
  core::Result<std::vector<std::string>> list() override;

 private:
  std::string name_;
  int port_;
  std::chrono::milliseconds timeout_;
  Resolver resolver_;
};

// One endpoint per line; blank lines and '#' comments are ignored. Re-read only when the file's
// inode, size or modification time changes (cheap enough to check every round, and it works on
// the symlink swaps a Kubernetes ConfigMap volume does, where inotify watches go stale).
class FileSource : public MembershipSource {
 public:
  explicit FileSource(std::string path) : path_(std::move(path)) {}
  std::string kind() const override { return "file"; }
  core::Result<std::vector<std::string>> list() override;

 private:
  std::string path_;
  struct Stamp {
    uint64_t ino = 0, size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  std::optional<Stamp> stamp_;
  std::vector<std::string> cached_;
};

// Pure parser for the peers file: one HOST:PORT a line, HOST an IPv4 address, an IPv6 address
// in brackets or a DNS name (letters, digits, '-', '_', '.'), PORT 1-65535; '#' comments, blank
// lines, spaces, tabs and CRs around are ignored. At most kMaxPeersFileBytes of text and
// kMaxPeersFileMembers members. An error is one line, "FILE:LINE:COL: ...", the line's text
// quoted, escaped and cut (file names the file in it).
inline constexpr size_t kMaxPeersFileBytes = size_t{16} << 20;
inline constexpr size_t kMaxPeersFileMembers = 65536;
core::Result<std::vector<std::string>> parsePeersFile(std::string_view text,
                                                      std::string_view file = "peers file");

enum class MemberState { kPending, kActive, kSelf };
const char* memberStateName(MemberState s);

struct Member {
  std::string address;  // as listed: "IP:PORT" or "host:port"
  MemberState state = MemberState::kPending;
  std::string node;               // learned from its echo replies
  std::string group;              // topology group, learned from its echo replies
  std::set<std::string> sources;  // which sources list it now (empty during the grace period)
  SteadyTime first_seen{};
  SteadyTime last_listed{};
};

class Membership {
 public:
  Membership(std::vector<std::unique_ptr<MembershipSource>> sources,
             std::chrono::milliseconds grace);

  // Lists every source and applies the grace period; returns the sources that failed
  // ("dns: timeout").
  std::vector<std::string> refresh(SteadyTime now);

  // An authenticated echo from this member came back: it becomes active (or self).
  void markAnswered(const std::string& address, const std::string& node, const std::string& group,
                    bool is_self);
  // Marks an address as this node itself (e.g. the static list names our own listener).
  void markSelf(const std::string& address);

  std::vector<Member> members() const;
  // The node names members listed at `ip` (as "IP:PORT" or "[IP]:PORT") answered with, this
  // node itself left out (several daemons may share an address, as on loopback).
  std::vector<std::string> namesAt(const std::string& ip) const;
  std::vector<std::string> addresses(MemberState state) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<MembershipSource>> sources_;
  std::vector<std::vector<std::string>> last_lists_;  // per source, kept when it fails
  std::chrono::milliseconds grace_;
  std::map<std::string, Member> members_;
};

}  // namespace fabricwatch::probes
