#include "http/http_pool.h"

#include <algorithm>

#include "http/web_security.h"

namespace fabricwatch::http {

HttpResponse unauthorizedResponse() {
  HttpResponse r{401, "text/plain; charset=utf-8", "Unauthorized\n"};
  r.extra_headers.emplace_back("WWW-Authenticate", "Basic realm=\"fabricwatch\"");
  return r;
}

HttpPool::HttpPool(int threads, Handle handle, Post post)
    : handle_(std::move(handle)), post_(std::move(post)) {
  for (int i = 0; i < std::max(1, threads); ++i) workers_.emplace_back([this] { workerLoop(); });
  auth_ = std::thread([this] { authLoop(); });
}

HttpPool::~HttpPool() { stop(); }

void HttpPool::submit(HttpJob job) {
  std::lock_guard lock(mu_);
  jobs_.push_back(std::move(job));
  jobs_cv_.notify_one();
}

HttpPool::AuthAdmission HttpPool::submitAuth(HttpJob job, const std::string& client) {
  std::lock_guard lock(mu_);
  AuthAdmission out;
  auto mine = auth_jobs_.find(client);
  size_t held = mine == auth_jobs_.end() ? 0 : mine->second.size();
  if (auth_queued_ >= kMaxAuthQueue) {
    size_t addresses = auth_jobs_.size() + (held == 0 ? 1 : 0);
    size_t share = std::max<size_t>(1, kMaxAuthQueue / addresses);
    if (held >= share) return out;
    auto most = auth_jobs_.begin();
    for (auto it = auth_jobs_.begin(); it != auth_jobs_.end(); ++it)
      if (it->second.size() > most->second.size()) most = it;
    if (most == auth_jobs_.end() || most->second.size() <= held + 1) return out;
    out.displaced = most->second.back().conn;
    most->second.pop_back();
    --auth_queued_;
    // It keeps at least one request, so its turn stays where it is.
  }
  auto& q = auth_jobs_[client];
  if (q.empty()) auth_turns_.push_back(client);
  q.push_back(std::move(job));
  ++auth_queued_;
  out.queued = true;
  auth_cv_.notify_one();
  return out;
}

void HttpPool::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  jobs_cv_.notify_all();
  auth_cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  if (auth_.joinable()) auth_.join();
}

void HttpPool::workerLoop() {
  while (true) {
    HttpJob job;
    {
      std::unique_lock lock(mu_);
      jobs_cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    post_(job.conn, handle_(job.request));
  }
}

void HttpPool::authLoop() {
  while (true) {
    HttpJob job;
    {
      std::unique_lock lock(mu_);
      auth_cv_.wait(lock, [&] { return stopping_ || auth_queued_ > 0; });
      if (stopping_) return;
      // The next address in turn; it goes to the back if it has more waiting.
      std::string client = std::move(auth_turns_.front());
      auth_turns_.pop_front();
      auto it = auth_jobs_.find(client);
      job = std::move(it->second.front());
      it->second.pop_front();
      --auth_queued_;
      if (it->second.empty())
        auth_jobs_.erase(it);
      else
        auth_turns_.push_back(std::move(client));
    }
    bool ok = job.security->basicAuth()->verify(*job.credentials);
    job.credentials.reset();
    if (!ok) {
      post_(job.conn, unauthorizedResponse());
      continue;
    }
    submit(std::move(job));
  }
}

}  // namespace fabricwatch::http
