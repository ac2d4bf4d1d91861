#pragma once
// The HTTP endpoints besides /metrics: health, readiness, the JSON API and a status page. Each
// renders the current snapshot; none of them waits for a probe.

#include "core/snapshot.h"
#include "exporter/http_server.h"

namespace fabricwatch::exporter {

HttpResponse healthz();
HttpResponse readyz(const core::Snapshot* snap);
HttpResponse factsJson(const core::Snapshot* snap);
HttpResponse violationsJson(const core::Snapshot* snap);
HttpResponse statusPage(const core::Snapshot* snap);

}  // namespace fabricwatch::exporter
