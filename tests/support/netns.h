#pragma once
// A small lab of Linux network namespaces for multi-host tests on one machine: a hub namespace
// holding a bridge, and one namespace per node joined to it by a veth pair, with addresses
// (10.x) that exist only inside the namespaces. Names are unique per run (pid + counter), so
// parallel test runs do not collide; everything is deleted in the destructor, even after a
// failed assertion (deleting a namespace removes its links). Only for tests: it runs `ip`.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/http_client.h"
#include "tests/support/process.h"

namespace fabricwatch::testing {

class NetnsLab {
 public:
  // nullopt when namespaces can be created here, else why not (not root, no CAP_NET_ADMIN,
  // no `ip`, a container without netns support ...). FW_TEST_NO_NETNS=1 forces the fallback.
  static std::optional<std::string> unavailableReason();

  // subnet: the first three octets, e.g. "10.77.0".
  explicit NetnsLab(std::string subnet = "10.77.0");
  ~NetnsLab();
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  // Adds node `host` (1..254): namespace, veth pair to the bridge, address subnet.host/24.
  // Returns the namespace name, or "" on failure (see lastError()).
  std::string addNode(int host);
  std::string address(int host) const { return subnet_ + "." + std::to_string(host); }
  const std::string& nsOf(int host) const;

  // Takes the node's link (its end of the veth pair: eth0, or a rail's ethN) down or up.
  bool setLink(int host, bool up, const std::string& dev = "eth0");

  // A second network beside eth0, as a rail of a rail-optimised cluster: a bridge of its own in
  // the hub (brN) and, for each of `hosts` (added already), a veth pair whose node end is ethN
  // with address subnet.host/24. rail: 1..9. `names` gives a host's end another name (a NIC
  // named otherwise on that node: "ens2f0", "rail1x"), at most 15 characters.
  bool addRail(int rail, const std::string& subnet, const std::vector<int>& hosts,
               const std::map<int, std::string>& names = {});
  // The hub's end of a host's rail (what traffic towards the host leaves by): vhHOSTrRAIL.
  static std::string hubLink(int host, int rail);
  // Runs argv inside the hub's namespace (tc on a hub link slows what a host receives there).
  RunResult inHub(const std::vector<std::string>& argv) const;
  // argv run inside the hub's namespace, for a process that keeps running (a switch's lldpd).
  std::vector<std::string> hubExecArgv(const std::vector<std::string>& argv) const;

  // Runs argv inside the node's namespace: `ip netns exec NS argv...`.
  std::vector<std::string> execArgv(int host, const std::vector<std::string>& argv) const;

  // An HTTP GET from inside the node's namespace (a thread that setns()es into it).
  std::optional<HttpResult> httpGet(int host, const std::string& ip, int port,
                                    const std::string& path) const;

  const std::string& lastError() const { return error_; }

 private:
  bool ip(const std::vector<std::string>& args);
  std::string subnet_;
  std::string prefix_;
  std::string hub_;
  std::vector<std::pair<int, std::string>> nodes_;
  std::string error_;
};

}  // namespace fabricwatch::testing
