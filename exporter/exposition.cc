#include "exporter/exposition.h"

#include "core/text_format.h"
#include "exporter/gzip.h"
#include "exporter/snapshot_collector.h"

namespace fabricwatch::exporter {

std::shared_ptr<const core::Exposition> renderExposition(const core::Snapshot& snapshot) {
  auto families = renderSnapshot(snapshot);
  auto e = std::make_shared<core::Exposition>();
  core::appendTextFormat(e->text, families);
  for (const auto& f : families) e->series += f.metric.size();
  e->gzip_prefix = gzip::prefix(e->text);
  e->crc32 = gzip::crc32(e->text);
  return e;
}

http::HttpResponse metricsResponse(const std::shared_ptr<const core::Snapshot>& snapshot,
                                   const std::string& per_request, bool gzip) {
  http::HttpResponse r;
  r.content_type = kMetricsContentType;
  std::shared_ptr<const core::Exposition> e;
  if (snapshot) e = snapshot->exposition ? snapshot->exposition : renderExposition(*snapshot);
  if (!e) {
    if (gzip) {
      r.content_encoding = "gzip";
      r.body = gzip::compress(per_request);
    } else {
      r.body = per_request;
    }
    return r;
  }
  // Shared bytes alias the exposition, which keeps them alive (not the whole snapshot).
  if (gzip) {
    r.content_encoding = "gzip";
    r.shared_body = std::shared_ptr<const std::string>(e, &e->gzip_prefix);
    gzip::appendEnd(r.tail, per_request, e->crc32, e->text.size());
  } else {
    r.shared_body = std::shared_ptr<const std::string>(e, &e->text);
    r.tail = per_request;
  }
  return r;
}

}  // namespace fabricwatch::exporter
