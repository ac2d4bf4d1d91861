#pragma once
// Builds the mesh from the configuration: node name, secret, membership sources, prober.
// Kept apart from the prober so that a Kubernetes membership source slots in here.

#include <memory>
#include <string>

#include "config/config.h"
#include "core/result.h"
#include "probes/mesh/peer_prober.h"

namespace fabricwatch::probes {

// peer.node_name, else $NODE_NAME, else the host name.
std::string resolveNodeName(const config::Config& cfg);

// Reads a secret file: trailing newlines are stripped; fewer than 16 bytes is an error.
core::Result<std::string> readSecretFile(const std::string& path);

// nullptr when no discovery source is configured (the mesh is off); an error when the mesh is
// configured but cannot run safely (no or short secret, bad addresses, no OpenSSL for its
// HMAC: core/openssl.h), or a kind cannot be built. Nothing is started. `resource_group`: the
// node's group when one is set (KindSetup).
// `metrics`: the optional series the configuration turns on, for the kinds (KindSetup).
core::Result<std::shared_ptr<PeerProber>> makePeerProber(
    const config::Config& cfg, const std::string& resource_group = "",
    std::shared_ptr<const core::MetricSelection> metrics = nullptr);

}  // namespace fabricwatch::probes
