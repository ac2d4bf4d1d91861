#include "tests/support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace fabricwatch::testing {
namespace {

using Clock = std::chrono::steady_clock;

pid_t spawn(const std::vector<std::string>& argv, int out_fd, int err_fd) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    // The child must not inherit a blocked signal mask from a test that blocked signals.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (out_fd >= 0) dup2(out_fd, 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  return pid;
}

void readAvailable(int fd, std::string& into) {
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return;
    into.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

RunResult runCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return {};
  pid_t pid = spawn(argv, out[1], err[1]);
  close(out[1]);
  close(err[1]);
  RunResult r;
  auto deadline = Clock::now() + timeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0 && Clock::now() < deadline) {
    int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    if (poll(fds, 2, std::max(ms, 1)) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  if (open_fds > 0) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

Process::Process(const std::vector<std::string>& argv) {
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) return;
  pid_ = spawn(argv, -1, err[1]);
  close(err[1]);
  err_fd_ = err[0];
  fcntl(err_fd_, F_SETFL, O_NONBLOCK);
}

Process::~Process() {
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (err_fd_ >= 0) close(err_fd_);
}

void Process::drain() {
  if (err_fd_ >= 0) readAvailable(err_fd_, err_);
}

std::optional<std::string> Process::waitForStderr(const std::string& needle,
                                                  std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    drain();
    if (auto pos = err_.find(needle); pos != std::string::npos) {
      auto begin = err_.rfind('\n', pos);
      begin = begin == std::string::npos ? 0 : begin + 1;
      auto end = err_.find('\n', pos);
      return err_.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    }
    if (Clock::now() >= deadline) return std::nullopt;
    pollfd p{err_fd_, POLLIN, 0};
    poll(&p, 1, 20);
  }
}

void Process::signal(int sig) {
  if (pid_ > 0 && !exited_) kill(pid_, sig);
}

std::optional<int> Process::wait(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!exited_) {
    pid_t r = waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      break;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  drain();
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

}  // namespace fabricwatch::testing
