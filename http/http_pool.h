#pragma once
// The threads behind the HTTP server's I/O thread: a fixed pool that runs the handlers of
// complete requests, and one thread that checks passwords (bcrypt takes milliseconds per try),
// each with its own queue, so that password guessing never occupies the handlers. Answers go
// back through `Post`, which hands them to the I/O thread.

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "http/basic_auth.h"
#include "http/http_message.h"

namespace fabricwatch::http {

class WebSecurity;

struct HttpJob {
  uint64_t conn = 0;  // the I/O thread's connection id
  HttpRequest request;
  std::shared_ptr<const WebSecurity> security;  // whose users check `credentials`
  std::optional<Credentials> credentials;       // set when they still need a bcrypt check
};

class HttpPool {
 public:
  using Handle = std::function<HttpResponse(const HttpRequest&)>;
  using Post = std::function<void(uint64_t conn, HttpResponse)>;

  // Requests waiting for a password check, from every client address together.
  static constexpr size_t kMaxAuthQueue = 64;

  // What submitAuth() did with a request.
  struct AuthAdmission {
    bool queued = false;
    // A request of the address holding the most that gave its place up (answer it 503).
    std::optional<uint64_t> displaced;
  };

  HttpPool(int threads, Handle handle, Post post);
  ~HttpPool();
  HttpPool(const HttpPool&) = delete;
  HttpPool& operator=(const HttpPool&) = delete;

  // Runs the handler on a pool thread.
  void submit(HttpJob job);
  // Checks job.credentials first: the handler runs if they are right, else 401 is posted.
  // Each client address gets a fair share of the queue, and the checks are taken from the
  // addresses in turn, one each: so guessing from a few addresses costs another address at
  // most one check per guessing address, never its place. When the queue is full, a request
  // from an address holding fewer than its share (kMaxAuthQueue over the addresses waiting,
  // its own included) takes the place of the newest request of the address holding the most;
  // otherwise it is refused (queued false).
  AuthAdmission submitAuth(HttpJob job, const std::string& client);
  // Joins the threads; queued jobs are dropped.
  void stop();

 private:
  void workerLoop();
  void authLoop();

  Handle handle_;
  Post post_;
  std::mutex mu_;
  std::condition_variable jobs_cv_;
  std::condition_variable auth_cv_;
  std::deque<HttpJob> jobs_;
  // The password queue: the requests of each address, and the addresses in the order their
  // next check is taken (each once, while it has requests).
  std::unordered_map<std::string, std::deque<HttpJob>> auth_jobs_;
  std::deque<std::string> auth_turns_;
  size_t auth_queued_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
  std::thread auth_;
};

// 401 with the Basic challenge.
HttpResponse unauthorizedResponse();

}  // namespace fabricwatch::http
