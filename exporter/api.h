#pragma once
// The HTTP endpoints besides /metrics and the status page (status_page.h): health, readiness and
// the JSON API. Each renders the current snapshot; none of them waits for a probe.

#include "core/snapshot.h"
#include "http/http_server.h"

namespace fabricwatch::exporter {

http::HttpResponse healthz();
http::HttpResponse readyz(const core::Snapshot* snap);
http::HttpResponse factsJson(const core::Snapshot* snap);
http::HttpResponse violationsJson(const core::Snapshot* snap);
// The violations as the API and `check --format json` list them.
core::Value violationsValue(const std::vector<core::Violation>& violations);
// /api/v1/peers: the mesh's membership, the current round's peers and their latest results,
// as the peer source captured them with the snapshot's facts (Snapshot::captured_api), or
// {"enabled": false ...} when the mesh is off.
http::HttpResponse peersJson(const core::Snapshot* snap);

}  // namespace fabricwatch::exporter
