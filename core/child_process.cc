#include "core/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#if !defined(__GLIBC__) || !__GLIBC_PREREQ(2, 34)
#error "posix_spawn_file_actions_addclosefrom_np needs glibc 2.34 or later"
#endif

namespace fabricwatch::core {
namespace {

using Clock = std::chrono::steady_clock;

// A descriptor closed when it goes out of scope.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// A pipe whose ends sit above descriptor 10, so that dup2() onto 0-3 in the child never finds
// an end already there (dup2 onto itself would keep close-on-exec set).
bool makePipe(Fd& r, Fd& w) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return false;
  r.fd = ::fcntl(p[0], F_DUPFD_CLOEXEC, 10);
  w.fd = ::fcntl(p[1], F_DUPFD_CLOEXEC, 10);
  ::close(p[0]);
  ::close(p[1]);
  return r.fd >= 0 && w.fd >= 0;
}

int pidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// Waits up to `limit` for the child to exit (it has been sent SIGKILL or has closed its pipes),
// then reaps it. A child stuck in the kernel (uninterruptible sleep in a driver) is left to a
// thread that reaps it whenever it dies.
bool reap(pid_t pid, int pidfd, std::chrono::milliseconds limit, int& status) {
  auto deadline = Clock::now() + limit;
  while (true) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not ours any more: nothing to reap
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    } else {
      ::poll(nullptr, 0, 10);  // no pidfd (kernel < 5.3): poll the status every 10 ms
    }
  }
  std::thread([pid] {
    int st;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  }).detach();
  return false;
}

}  // namespace

std::string ChildResult::describe() const {
  switch (outcome) {
    case Outcome::kExited:
      return "exited with status " + std::to_string(exit_code);
    case Outcome::kSignaled: {
      const char* name = ::strsignal(signal);
      return "killed by signal " + std::to_string(signal) + " (" + (name ? name : "?") + ")";
    }
    case Outcome::kTimedOut:
      return "timed out after " + std::to_string(static_cast<int64_t>(seconds * 1000)) +
             " ms: the process group was killed" + (reaped ? "" : " (it has not exited yet)");
    case Outcome::kCancelled:
      return "cancelled after " + std::to_string(static_cast<int64_t>(seconds * 1000)) +
             " ms: the process group was killed" + (reaped ? "" : " (it has not exited yet)");
    case Outcome::kSpawnFailed:
      return "could not start: " + error;
  }
  return "";
}

ChildResult runChild(const ChildSpec& spec) {
  ChildResult res;
  auto started = Clock::now();
  Fd in_r, in_w, res_r, res_w, out_r, out_w;
  if (!makePipe(in_r, in_w) || !makePipe(res_r, res_w) || !makePipe(out_r, out_w)) {
    res.error = std::string("pipe: ") + std::strerror(errno);
    return res;
  }

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&fa, in_r.fd, 0);
  posix_spawn_file_actions_adddup2(&fa, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&fa, out_w.fd, 2);
  posix_spawn_file_actions_adddup2(&fa, res_w.fd, 3);
  posix_spawn_file_actions_addclosefrom_np(&fa, 4);  // the daemon's sockets and sysfs files
  // Its own process group (so that a timeout kills whatever it started too), no blocked
  // signals and default dispositions (the daemon blocks SIGTERM/SIGHUP for sigwait).
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, spec.exe.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    res.error = spec.exe + ": " + std::strerror(rc);
    return res;
  }
  res.pid = pid;
  in_r.reset();
  res_w.reset();
  out_w.reset();
  Fd pidfd(pidfdOpen(pid));
  for (Fd* f : {&in_w, &res_r, &out_r}) ::fcntl(f->fd, F_SETFL, O_NONBLOCK);

  size_t written = 0;
  if (spec.input.empty()) in_w.reset();
  std::string line;  // the result line being assembled for on_result_line
  auto deadline = started + spec.timeout;
  bool timed_out = false, cancelled = false, exited = false;
  auto cancelRequested = [&] { return spec.cancel && spec.cancel->load(); };
  // With a cancel flag the loop wakes every 50 ms to look at it.
  const int64_t max_wait_ms = spec.cancel ? 50 : 1000;
  char buf[8192];

  auto drain = [&](Fd& f, bool is_result) {
    while (f.fd >= 0) {
      ssize_t n = ::read(f.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return;  // EAGAIN: nothing more for now
      if (n == 0) {
        f.reset();
        return;
      }
      std::string_view chunk(buf, static_cast<size_t>(n));
      if (!is_result) {
        res.output.append(chunk);
        if (res.output.size() > 2 * spec.max_output_bytes)
          res.output.erase(0, res.output.size() - spec.max_output_bytes);
        continue;
      }
      size_t room = spec.max_result_bytes - std::min(spec.max_result_bytes, res.result.size());
      if (chunk.size() > room) res.result_truncated = true;
      chunk = chunk.substr(0, room);
      res.result.append(chunk);
      if (!spec.on_result_line) continue;
      for (char c : chunk) {
        if (c != '\n') {
          line += c;
          continue;
        }
        spec.on_result_line(line);
        line.clear();
      }
    }
  };

  while ((res_r.fd >= 0 || out_r.fd >= 0) && !exited) {
    if (cancelRequested()) {
      cancelled = true;
      break;
    }
    // Rounded up: a deadline 0.4 ms away is not past yet.
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[4];
    int n = 0;
    int i_in = -1, i_res = -1, i_out = -1, i_pid = -1;
    if (in_w.fd >= 0) fds[i_in = n++] = {in_w.fd, POLLOUT, 0};
    if (res_r.fd >= 0) fds[i_res = n++] = {res_r.fd, POLLIN, 0};
    if (out_r.fd >= 0) fds[i_out = n++] = {out_r.fd, POLLIN, 0};
    if (pidfd.fd >= 0) fds[i_pid = n++] = {pidfd.fd, POLLIN, 0};
    int pr = ::poll(fds, static_cast<nfds_t>(n),
                    static_cast<int>(std::min<int64_t>(left.count(), max_wait_ms)));
    if (pr < 0 && errno != EINTR) break;
    if (pr <= 0) continue;
    if (i_in >= 0 && fds[i_in].revents) {
      ssize_t w = ::write(in_w.fd, spec.input.data() + written, spec.input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == spec.input.size())
        in_w.reset();
    }
    if (i_res >= 0 && fds[i_res].revents) drain(res_r, true);
    if (i_out >= 0 && fds[i_out].revents) drain(out_r, false);
    // The child exited while something it started may still hold the pipes open: take what is
    // there and stop.
    if (i_pid >= 0 && fds[i_pid].revents) {
      drain(res_r, true);
      drain(out_r, false);
      exited = true;
    }
  }
  in_w.reset();
  if (!line.empty() && spec.on_result_line && !timed_out && !cancelled) spec.on_result_line(line);
  if (res.output.size() > spec.max_output_bytes)
    res.output.erase(0, res.output.size() - spec.max_output_bytes);

  // Kill the group before reaping: a zombie leader keeps the group id from being reused, so the
  // signal can only reach the child and what it started.
  int status = 0;
  if (timed_out || cancelled) {
    ::kill(-pid, SIGKILL);
    res.reaped = reap(pid, pidfd.fd, std::chrono::seconds(5), status);
    res.outcome = timed_out ? ChildResult::Outcome::kTimedOut : ChildResult::Outcome::kCancelled;
    res.signal = SIGKILL;
  } else {
    // Pipes closed (or the child exited): it is exiting; wait for it within what is left of the
    // deadline, then kill whatever remains.
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    siginfo_t info{};
    auto exitedNow = [&] {
      info.si_pid = 0;
      return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
             info.si_pid == pid;
    };
    bool done = exitedNow();
    while (!done && left.count() > 0 && !cancelRequested()) {
      if (pidfd.fd >= 0) {
        pollfd p{pidfd.fd, POLLIN, 0};
        ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), max_wait_ms)));
      } else {
        ::poll(nullptr, 0, 10);
      }
      done = exitedNow();
      left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    }
    ::kill(-pid, SIGKILL);
    res.reaped = reap(pid, pidfd.fd, std::chrono::seconds(5), status);
    if (!done && cancelRequested()) {
      res.outcome = ChildResult::Outcome::kCancelled;
      res.signal = SIGKILL;
    } else if (!done) {
      res.outcome = ChildResult::Outcome::kTimedOut;
      res.signal = SIGKILL;
    } else if (WIFSIGNALED(status)) {
      res.outcome = ChildResult::Outcome::kSignaled;
      res.signal = WTERMSIG(status);
    } else {
      res.outcome = ChildResult::Outcome::kExited;
      res.exit_code = WEXITSTATUS(status);
    }
  }
  res.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return res;
}

}  // namespace fabricwatch::core
