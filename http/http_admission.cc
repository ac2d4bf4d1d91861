// Connection accounting (http_io_thread.h): who may hold a connection, and when one is closed
// to make room or because it ran out of time. The caps (in total and per client address) are
// what keeps a flood of slow clients from costing a scraper its slot: at a cap the server
// evicts a connection that has not sent a whole request, an idle keep-alive one, or one whose
// client does not read its answer, rather than refuse the newcomer, and an address under its
// fair share of the total takes from the address holding the most; one whose request is with
// a handler is never evicted. Every refusal, eviction and timeout is counted by its reason
// (fabricwatch_http_dropped_total).

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>

#include "http/http_io_thread.h"

namespace fabricwatch::http {

// Whether a new connection from `addr` may be kept, after evicting one to make room if a cap
// is reached; a refusal is counted (the caller closes the socket).
bool HttpServer::Impl::admits(const std::string& addr) {
  auto n = per_address.find(addr);
  if (n != per_address.end() && n->second >= opts.max_connections_per_address &&
      !evictOne(&addr, addr)) {
    count(HttpDrop::kAddressLimit);
    return false;
  }
  if (static_cast<int>(conns.size()) >= opts.max_connections && !evictOne(nullptr, addr)) {
    count(HttpDrop::kLimit);
    return false;
  }
  return true;
}

// Counts an admitted connection against its address and the total, and keeps it.
HttpServer::Impl::Conn& HttpServer::Impl::track(std::unique_ptr<Conn> c) {
  ++per_address[c->addr];
  open.fetch_add(1, std::memory_order_relaxed);
  Conn& ref = *c;
  conns.emplace(c->id, std::move(c));
  return ref;
}

int HttpServer::Impl::evictionRank(State s) {
  switch (s) {
    case State::kLinger:
      return 0;
    case State::kHandshake:
    case State::kHead:
      return 1;
    case State::kIdle:
      return 2;
    case State::kWrite:
      return 3;  // waiting for the client to read (writeResponse() wrote what the socket took)
    case State::kBusy:
      break;
  }
  return -1;  // with the password thread or a handler: never evicted
}

// Closes the connection a cap makes room from: lingering ones first, then those without a
// complete request (head or handshake), then idle keep-alive ones, then those whose answer the
// client does not read (a slow reader is a slow client like one that sends slowly), the one
// whose output moved least recently first in each. At the address cap (`addr`) the victim is
// one of that address's own. At the total cap, an address holding fewer than its share
// (max_connections over the addresses connected, the newcomer's included) takes from the
// address holding the most, and only such a newcomer may evict another address's reader: an
// address at its share never truncates another's answer. Connections whose request is being
// answered (kBusy) are never evicted.
bool HttpServer::Impl::evictOne(const std::string* addr, const std::string& newcomer) {
  auto held = [&](const std::string& a) {
    auto it = per_address.find(a);
    return it == per_address.end() ? 0 : it->second;
  };
  int mine = held(newcomer);
  size_t addresses = per_address.size() + (mine == 0 ? 1 : 0);
  int share = std::max(1, opts.max_connections / static_cast<int>(std::max<size_t>(1, addresses)));
  bool under_share = !addr && mine < share;
  for (int attempt = 0; attempt < 8; ++attempt) {
    Conn* victim = nullptr;
    int victim_rank = 4;
    int victim_held = 0;
    for (auto& [id, c] : conns) {
      if (addr && c->addr != *addr) continue;
      int rank = evictionRank(c->state);
      if (rank < 0) continue;
      int h = addr ? 0 : held(c->addr);
      // Another address's reader: only for a newcomer under its share, from one over it.
      if (rank == 3 && !addr && c->addr != newcomer && !(under_share && h > share)) continue;
      if (!under_share) h = 0;  // the biggest holder first only for a newcomer under its share
      bool better = !victim || rank < victim_rank ||
                    (rank == victim_rank &&
                     (h > victim_held || (h == victim_held && c->since < victim->since)));
      if (better) {
        victim = c.get();
        victim_rank = rank;
        victim_held = h;
      }
    }
    if (!victim) return false;
    uint64_t id = victim->id;
    // Judged by its state now: what has arrived is read. (A reader is judged by `since`: an
    // answer's bytes go out whenever its socket takes them, so one in kWrite is waiting for
    // its client, and the one whose bytes moved least recently goes first.)
    if (victim_rank == 1 || victim_rank == 2) {
      refresh(*victim);
      auto it = conns.find(id);
      if (it == conns.end()) return true;  // it was closed (the client left): room made
      if (evictionRank(it->second->state) != victim_rank) continue;  // it made progress
    }
    if (victim_rank == 1 || victim_rank == 3) count(HttpDrop::kEvicted);
    if (victim_rank == 2) count(HttpDrop::kEvictedIdle);
    closeConn(*victim);
    return true;
  }
  return false;
}

// Closes the connections whose state ran past its deadline (enter() sets them): a head or a
// handshake not done within request_timeout, a response the client did not read within it,
// an idle keep-alive connection, a linger that is over.
void HttpServer::Impl::sweep(Clock::time_point now) {
  next_sweep = Clock::time_point::max();
  std::vector<std::pair<Conn*, State>> expired;
  for (auto& [id, c] : conns) {
    if (c->deadline <= now)
      expired.emplace_back(c.get(), c->state);
    else
      next_sweep = std::min(next_sweep, c->deadline);
  }
  for (auto [c, state] : expired) {
    if (state == State::kHandshake || state == State::kHead) count(HttpDrop::kHeadTimeout);
    if (state == State::kWrite) count(HttpDrop::kWriteTimeout);
    closeConn(*c);
  }
}

void HttpServer::Impl::closeConn(Conn& c) {
  if (c.state == State::kWrite) observe(c);  // answered, if not all of it went out
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
  if (c.ssl) SSL_free(c.ssl);
  close(c.fd);
  auto it = per_address.find(c.addr);
  if (it != per_address.end() && --it->second <= 0) per_address.erase(it);
  open.fetch_sub(1, std::memory_order_relaxed);
  uint64_t id = c.id;  // erase() destroys c: not a reference into it
  conns.erase(id);
}

}  // namespace fabricwatch::http
