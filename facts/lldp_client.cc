#include "facts/lldp_client.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "core/log.h"
#include "core/utf8.h"

// liblldpctl's C ABI as lldpctl.h (lldpd 1.0.x, liblldpctl.so.4) declares it: the few entry
// points read here, the key and error values they take, and opaque handles. Declared rather
// than included, so that building needs no lldpd headers and the library is only opened where
// a host's lldpd listens.
extern "C" {
struct lldpctl_conn_t;
struct lldpctl_atom_t;
struct lldpctl_atom_iter_t;
}

namespace fabricwatch::facts {
namespace {

using LldpIoCallback = ssize_t (*)(lldpctl_conn_t*, const uint8_t*, size_t, void*);

// lldpctl_key_t and lldpctl_error_t values (lldpctl.h).
constexpr int kKeyInterfaceName = 1000;
constexpr int kKeyPortNeighbors = 1200;
constexpr int kKeyPortIdSubtype = 1203;
constexpr int kKeyPortId = 1204;
constexpr int kKeyPortDescr = 1205;
constexpr int kKeyPortChassis = 1208;
constexpr int kKeyChassisIdSubtype = 1801;
constexpr int kKeyChassisId = 1802;
constexpr int kKeyChassisName = 1803;
constexpr ssize_t kErrEof = -502;
constexpr ssize_t kErrCallbackFailure = -902;

struct LldpCtl {
  lldpctl_conn_t* (*new_name)(const char*, LldpIoCallback, LldpIoCallback, void*);
  int (*release)(lldpctl_conn_t*);
  lldpctl_atom_t* (*get_interfaces)(lldpctl_conn_t*);
  lldpctl_atom_t* (*get_port)(lldpctl_atom_t*);
  lldpctl_atom_t* (*atom_get)(lldpctl_atom_t*, int);
  const char* (*atom_get_str)(lldpctl_atom_t*, int);
  lldpctl_atom_iter_t* (*atom_iter)(lldpctl_atom_t*);
  lldpctl_atom_iter_t* (*atom_iter_next)(lldpctl_atom_t*, lldpctl_atom_iter_t*);
  lldpctl_atom_t* (*atom_iter_value)(lldpctl_atom_t*, lldpctl_atom_iter_t*);
  void (*atom_dec_ref)(lldpctl_atom_t*);
  int (*last_error)(lldpctl_conn_t*);
  const char* (*strerror)(int);
  void (*log_callback)(void (*)(int, const char*));
  std::string error;  // why it is not loaded
};

void logFromLibrary(int severity, const char* msg) {
  core::log::debug("lldpctl", msg ? msg : "", {{"severity", std::to_string(severity)}});
}

const LldpCtl& library() {
  static LldpCtl lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = ::dlopen("liblldpctl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = ::dlerror();
      lib.error = std::string("cannot load liblldpctl.so.4 (Debian's lldpd package): ") +
                  (why ? why : "dlopen failed");
      return;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
      if (!fn && ok) {
        ok = false;
        lib.error = std::string("liblldpctl.so.4 lacks ") + name;
      }
    };
    sym(lib.new_name, "lldpctl_new_name");
    sym(lib.release, "lldpctl_release");
    sym(lib.get_interfaces, "lldpctl_get_interfaces");
    sym(lib.get_port, "lldpctl_get_port");
    sym(lib.atom_get, "lldpctl_atom_get");
    sym(lib.atom_get_str, "lldpctl_atom_get_str");
    sym(lib.atom_iter, "lldpctl_atom_iter");
    sym(lib.atom_iter_next, "lldpctl_atom_iter_next");
    sym(lib.atom_iter_value, "lldpctl_atom_iter_value");
    sym(lib.atom_dec_ref, "lldpctl_atom_dec_ref");
    sym(lib.last_error, "lldpctl_last_error");
    sym(lib.strerror, "lldpctl_strerror");
    sym(lib.log_callback, "lldpctl_log_callback");
    if (ok) lib.log_callback(logFromLibrary);  // its default writes to our stderr
  });
  return lib;
}

using Clock = std::chrono::steady_clock;

// The socket under one deadline, with a cap on what is read: liblldpctl's callbacks.
struct Io {
  int fd = -1;
  Clock::time_point deadline;
  size_t received = 0;
  size_t max_bytes = 0;
  std::string problem;  // set by a callback that gave up

  bool wait(short events) {
    for (;;) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (Clock::now() >= deadline) {
        problem = "lldpd did not answer in time";
        return false;
      }
      pollfd p{fd, events, 0};
      int n = ::poll(&p, 1, static_cast<int>(left.count()));
      if (n > 0) return true;
      if (n < 0 && errno != EINTR) {
        problem = std::string("poll: ") + std::strerror(errno);
        return false;
      }
    }
  }
};

ssize_t ioSend(lldpctl_conn_t*, const uint8_t* data, size_t length, void* user) {
  auto* io = static_cast<Io*>(user);
  for (;;) {
    ssize_t n = ::send(io->fd, data, length, MSG_NOSIGNAL);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      io->problem = std::string("writing to lldpd: ") + std::strerror(errno);
      return kErrCallbackFailure;
    }
    if (!io->wait(POLLOUT)) return kErrCallbackFailure;
  }
}

ssize_t ioRecv(lldpctl_conn_t*, const uint8_t* data, size_t length, void* user) {
  auto* io = static_cast<Io*>(user);
  if (io->received >= io->max_bytes) {
    io->problem = "lldpd's answer is over " + std::to_string(io->max_bytes) + " bytes";
    return kErrCallbackFailure;
  }
  length = std::min(length, io->max_bytes - io->received);
  for (;;) {
    // liblldpctl hands its receive buffer over as const; it is its own, to be written.
    ssize_t n = ::recv(io->fd, const_cast<uint8_t*>(data), length, 0);
    if (n > 0) {
      io->received += static_cast<size_t>(n);
      return n;
    }
    if (n == 0) {
      io->problem = "lldpd closed the connection";
      return kErrEof;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      io->problem = std::string("reading from lldpd: ") + std::strerror(errno);
      return kErrCallbackFailure;
    }
    if (!io->wait(POLLIN)) return kErrCallbackFailure;
  }
}

// Connects to the socket at `path` (through its directory when the path is longer than a
// sockaddr_un holds). -1 with errno set when it cannot.
int connectUnix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string target = path;
  int dir = -1;
  if (target.size() >= sizeof(addr.sun_path)) {
    size_t slash = path.rfind('/');
    dir = ::open(path.substr(0, slash == std::string::npos ? 0 : slash).c_str(),
                 O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
      int e = errno;
      ::close(fd);
      errno = e;
      return -1;
    }
    target = "/proc/self/fd/" + std::to_string(dir) + path.substr(slash);
  }
  int rc = -1;
  if (target.size() < sizeof(addr.sun_path)) {
    std::memcpy(addr.sun_path, target.c_str(), target.size() + 1);
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  } else {
    errno = ENAMETOOLONG;
  }
  int e = errno;
  if (dir >= 0) ::close(dir);
  if (rc != 0) {
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

// Every atom taken is given back, however the walk ends.
class AtomRef {
 public:
  AtomRef(const LldpCtl& lib, lldpctl_atom_t* a) : lib_(lib), a_(a) {}
  ~AtomRef() {
    if (a_) lib_.atom_dec_ref(a_);
  }
  AtomRef(const AtomRef&) = delete;
  AtomRef& operator=(const AtomRef&) = delete;
  lldpctl_atom_t* get() const { return a_; }
  explicit operator bool() const { return a_ != nullptr; }

 private:
  const LldpCtl& lib_;
  lldpctl_atom_t* a_;
};

std::string str(const LldpCtl& lib, lldpctl_atom_t* a, int key, size_t max_bytes) {
  const char* s = a ? lib.atom_get_str(a, key) : nullptr;
  if (!s) return "";
  // lldpd copies what the switch sent: hostile text, made valid and short here already.
  return core::sanitizeUtf8(std::string_view(s, strnlen(s, max_bytes * 4 + 4)), max_bytes);
}

LldpNeighbor neighborOf(const LldpCtl& lib, lldpctl_atom_t* n, size_t max) {
  LldpNeighbor out;
  out.port_id = str(lib, n, kKeyPortId, max);
  out.port_id_subtype = str(lib, n, kKeyPortIdSubtype, max);
  out.port_descr = str(lib, n, kKeyPortDescr, max);
  AtomRef chassis(lib, lib.atom_get(n, kKeyPortChassis));
  lldpctl_atom_t* c = chassis ? chassis.get() : n;
  out.chassis_name = str(lib, c, kKeyChassisName, max);
  out.chassis_id = str(lib, c, kKeyChassisId, max);
  out.chassis_id_subtype = str(lib, c, kKeyChassisIdSubtype, max);
  return out;
}

std::string lastError(const LldpCtl& lib, lldpctl_conn_t* conn, const Io& io) {
  if (!io.problem.empty()) return io.problem;
  const char* s = lib.strerror(lib.last_error(conn));
  return std::string("liblldpctl: ") + (s ? s : "unknown error");
}

}  // namespace

const char* lldpStatusName(LldpAnswer::Status s) {
  switch (s) {
    case LldpAnswer::Status::kNoDaemon:
      return "absent";
    case LldpAnswer::Status::kNoLibrary:
      return "no_library";
    case LldpAnswer::Status::kOk:
      return "ok";
    case LldpAnswer::Status::kFailed:
      return "failed";
  }
  return "failed";
}

LldpAnswer queryLldpd(const std::string& socket_path, const LldpLimits& limits) {
  LldpAnswer out;
  Io io;
  io.deadline = Clock::now() + limits.timeout;
  io.max_bytes = limits.max_bytes;
  io.fd = connectUnix(socket_path);
  if (io.fd < 0) {
    if (errno == ENOENT || errno == ECONNREFUSED) return out;  // no lldpd here
    out.status = LldpAnswer::Status::kFailed;
    int e = errno;
    out.error = socket_path + ": " + std::strerror(e);
    if (e == EACCES)
      out.error +=
          " (the socket is lldpd's group's: run fabricwatch in that group, "
          "docs/topology.md)";
    return out;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{io.fd};
  const LldpCtl& lib = library();
  if (!lib.error.empty()) {
    out.status = LldpAnswer::Status::kNoLibrary;
    out.error = lib.error;
    return out;
  }
  lldpctl_conn_t* conn = lib.new_name(socket_path.c_str(), ioSend, ioRecv, &io);
  if (!conn) {
    out.status = LldpAnswer::Status::kFailed;
    out.error = "lldpctl_new_name failed";
    return out;
  }
  struct Release {
    const LldpCtl& lib;
    lldpctl_conn_t* conn;
    ~Release() { lib.release(conn); }
  } release{lib, conn};

  auto fail = [&](std::string why) {
    out.status = LldpAnswer::Status::kFailed;
    out.error = std::move(why);
    out.interfaces.clear();
    return out;
  };
  AtomRef ifaces(lib, lib.get_interfaces(conn));
  if (!ifaces) return fail(lastError(lib, conn, io));
  for (auto* it = lib.atom_iter(ifaces.get()); it; it = lib.atom_iter_next(ifaces.get(), it)) {
    AtomRef iface(lib, lib.atom_iter_value(ifaces.get(), it));
    if (!iface) break;
    if (out.interfaces.size() >= limits.max_interfaces) {
      out.truncated = true;
      break;
    }
    LldpInterface li;
    li.name = str(lib, iface.get(), kKeyInterfaceName, limits.max_string_bytes);
    AtomRef port(lib, lib.get_port(iface.get()));  // one exchange with lldpd
    if (!port) return fail(lastError(lib, conn, io));
    AtomRef neighbors(lib, lib.atom_get(port.get(), kKeyPortNeighbors));
    if (neighbors) {
      for (auto* nit = lib.atom_iter(neighbors.get()); nit;
           nit = lib.atom_iter_next(neighbors.get(), nit)) {
        AtomRef n(lib, lib.atom_iter_value(neighbors.get(), nit));
        if (!n) break;
        if (li.neighbors.size() >= limits.max_neighbors) {
          out.truncated = true;
          break;
        }
        li.neighbors.push_back(neighborOf(lib, n.get(), limits.max_string_bytes));
      }
    }
    out.interfaces.push_back(std::move(li));
  }
  out.status = LldpAnswer::Status::kOk;
  return out;
}

}  // namespace fabricwatch::facts
