// [peer] and [probe]: this node's identity in the peer mesh, its authenticated listener, and what
// every probe kind shares (discovery, selection, rounds). docs/peers.md.
#include "config/keys.h"
#include "config/loader.h"

namespace fabricwatch::config {

TableDef peerTable() {
  using std::chrono::hours;
  using std::chrono::milliseconds;
  using P = Config::Peer;
  return TableKeys<P>("peer", [](Config& c) -> P& { return c.peer; })
      .string("node_name", &P::node_name,
              [](const std::string& v) -> std::optional<std::string> {
                if (v.size() > 253) return "node name longer than 253 characters";
                return std::nullopt;
              })
      .flag("This node's name in the peer mesh (default $NODE_NAME, else the host name).",
            "node.name")
      .string("listen_address", &P::listen_address, checkListenAddress)
      .flag("Peer channel address, IP:PORT or :PORT.")
      .string("secret_file", &P::secret_file)
      .flag("File with the mesh's shared HMAC secret.")
      .integer("max_connections", 1, 4096, &P::max_connections)
      .integer("max_connections_per_address", 1, 4096, &P::max_connections_per_address)
      .duration("frame_timeout", milliseconds(10), milliseconds(60000), &P::frame_timeout)
      .duration("idle_timeout", milliseconds(100), milliseconds(600000), &P::idle_timeout)
      .duration("max_clock_skew", milliseconds(1000), hours(1), &P::max_clock_skew)
      .build();
}

TableDef probeTable() {
  using std::chrono::hours;
  using std::chrono::milliseconds;
  using P = Config::Probe;
  return TableKeys<P>("probe", [](Config& c) -> P& { return c.probe; })
      .duration("interval", milliseconds(100), hours(1), &P::interval)
      .flag("Time between probe rounds, e.g. 10s.")
      .integer("peers_per_round", 1, 1024, &P::peers_per_round)
      .flag("Peers probed per round.")
      .stringList("peers", &P::peers, checkPeerAddress)
      .flag("Static mesh members, HOST:PORT,...", "peers")
      .string("dns_name", &P::dns_name)
      .flag("DNS name whose A/AAAA records are mesh members.")
      .integer("dns_port", 0, 65535, &P::dns_port)
      .string("peers_file", &P::peers_file)
      .flag("File listing mesh members, one HOST:PORT per line.")
      .duration("grace_period", milliseconds(0), hours(24), &P::grace_period)
      .string("topology_label", &P::topology_label)
      .string("topology_group", &P::topology_group)
      .integer("workers", 1, 64, &P::workers)
      .validate([](const P&, const Config& c, const ReportProblem& report) {
        if (auto err = checkPeerConfig(c))
          report({"probe.peers", "probe.dns_name", "probe.peers_file", "peer.secret_file"}, *err);
      })
      .build();
}

}  // namespace fabricwatch::config
