// The seeds of the payload and peers-file fuzzers, made by the code's own encoders (so that the
// corpus starts from what a real peer sends, not from guesses): `fuzz_seeds DIR` writes them
// under DIR/<target>/seed_*; `fuzz_seeds --check DIR` fails when a checked-in seed differs from
// what the encoders make now (the `fuzz_seeds_current` test: a format change renews its seeds
// with `build/tests/fuzz/fuzz_seeds tests/fuzz/corpus`).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "probes/kinds/fabric/fabric_wire.h"
#include "probes/kinds/nccl/nccl_messages.h"
#include "probes/mesh/net_util.h"

namespace {

namespace fk = fabricwatch::probes::fabric;
namespace nk = fabricwatch::probes::nccl;
using Seeds = std::vector<std::pair<std::string, std::string>>;  // file name, bytes

Seeds ncclSeeds() {
  Seeds out;
  nk::NcclRunRequest rq;
  rq.session = 0x0123456789abcdefULL;
  rq.prober = "gpu-node-017";
  for (int i = 0; i < 128; ++i) {  // the 128 bytes of an id, in hex
    rq.unique_id += "0123456789abcdef"[(i * 7) % 16];
    rq.unique_id += "fedcba9876543210"[i % 16];
  }
  rq.operation = "all_reduce";
  rq.timeout_ms = 120000;
  rq.warmup = 5;
  rq.iterations = 20;
  rq.sizes = {1 << 20, 64 << 20, uint64_t{1} << 30};
  out.emplace_back("seed_run_request_all_reduce", nk::encodeNcclRunRequest(rq));
  rq.operation = "send_recv";
  rq.rotate_device = true;
  rq.device = 3;
  rq.nranks = 8;
  rq.rank = 7;
  rq.sizes.assign(16, 4);
  rq.sizes.back() = uint64_t{16} << 30;
  rq.prober = "n\xc3\xb6-de-\xe2\x82\xac";  // multi-byte UTF-8
  out.emplace_back("seed_run_request_send_recv_16_sizes", nk::encodeNcclRunRequest(rq));
  out.emplace_back("seed_run_reply", nk::encodeNcclRunReply({42, "gpu-node-018"}));
  out.emplace_back("seed_status_request", nk::encodeNcclStatusRequest({42}));
  out.emplace_back("seed_status_reply_unknown", nk::encodeNcclStatusReply({42, false, {}}));
  nk::NcclStatusReply st;
  st.session = 42;
  st.known = true;
  st.side.state = "running";
  st.side.gpus = 8;
  st.side.device = 3;
  out.emplace_back("seed_status_reply_running", nk::encodeNcclStatusReply(st));
  st.side.state = "ok";
  st.side.reason = "";
  st.side.nccl_version = "2.21.5";
  st.side.cuda_runtime_version = "12.4";
  st.side.cuda_driver_version = "12.4";
  st.side.id = "3f2a9c1b";
  st.side.inter_node_transport = "NET/OFI";
  st.side.gdr = "enabled";
  st.side.network = "AWS Libfabric";
  st.side.log_status = "ok";
  st.side.seconds = 3.25;
  for (uint64_t b = 4; st.side.results.size() < 16; b *= 8)
    st.side.results.push_back({b, 12.5 + b / 1e6, b / 12.5e3, b / 12.5e3});
  out.emplace_back("seed_status_reply_ok_16_results", nk::encodeNcclStatusReply(st));
  st.side.state = "failed";
  st.side.reason =
      "ncclCommInitRank: unhandled system error (run with NCCL_DEBUG=INFO) \xe2\x80\x94 " +
      std::string(1100, 'r');  // past the 1024-byte bound: cut by the encoder
  st.side.results.clear();
  out.emplace_back("seed_status_reply_failed_long_reason", nk::encodeNcclStatusReply(st));
  out.emplace_back("seed_cancel_request", nk::encodeNcclCancelRequest({42}));
  out.emplace_back("seed_cancel_reply_cancelled", nk::encodeNcclCancelReply({42, true}));
  out.emplace_back("seed_cancel_reply_not_running", nk::encodeNcclCancelReply({42, false}));
  return out;
}

Seeds fabricSeeds() {
  Seeds out;
  std::string hello = fk::encodeFabricHello({"efa", 3});
  out.emplace_back("seed_hello_rail_3", hello);
  out.emplace_back("seed_hello_before_rails", hello.substr(0, hello.size() - 4));
  // An EFA endpoint name: GID (16 bytes), QPN, QKEY, padding; tcp's: a sockaddr_in.
  std::string efa_name(
      "\xfe\x80\0\0\0\0\0\0\x04\x5e\x6b\xff\xfe\x12\x34\x56\x01\x02\0\0\x11\x22\x33\x44"
      "\0\0\0\0\0\0\0\0",
      32);
  std::string tcp_name("\x02\0\x4d\x19\x0a\0\0\x07\0\0\0\0\0\0\0\0", 16);
  fk::FabricHelloReply r{"efa", "efa", 7, efa_name, 3, 0xff, "rdmap16s27-rdm"};
  std::string reply = fk::encodeFabricHelloReply(r);
  out.emplace_back("seed_hello_reply_efa", reply);
  // Before rails: without the trailing rail (4 bytes), rails (8) and domain ("": 2).
  std::string old = fk::encodeFabricHelloReply({"tcp", "10.0.0.0/24", 1, tcp_name, 0, 1, ""});
  out.emplace_back("seed_hello_reply_before_rails", old.substr(0, old.size() - 14));
  fk::FabricSessionRequest s;
  s.spec = {0x1122334455667788ULL, fk::SessionKind::kLatency, 64, 1000, 1, 5000};
  s.provider = "efa";
  s.name = efa_name;
  s.rail = 1;
  out.emplace_back("seed_session_request_latency", fk::encodeFabricSessionRequest(s));
  s.spec = {0x99, fk::SessionKind::kBandwidth, 1 << 20, 64, 64, 30000};
  s.provider = "tcp";
  s.name = tcp_name;
  s.rail = 0;
  std::string bw = fk::encodeFabricSessionRequest(s);
  out.emplace_back("seed_session_request_bandwidth", bw);
  out.emplace_back("seed_session_request_before_rails", bw.substr(0, bw.size() - 4));
  out.emplace_back("seed_session_reply", fk::encodeFabricSessionReply({7}));
  return out;
}

Seeds peersSeeds() {
  using fabricwatch::probes::joinHostPort;
  std::string fleet = "# fleet: one HOST:PORT a line\n";
  for (int i = 1; i <= 4; ++i) fleet += joinHostPort("10.0.1." + std::to_string(i), 19737) + "\n";
  fleet += "\n  " + joinHostPort("gpu-node-017.rack-2.cluster.local", 19737) + "  # rack 2\n";
  fleet += "\t" + joinHostPort("fd00::17", 19737) + "\r\n";
  fleet += joinHostPort("fe80::1", 1) + "\n" + joinHostPort("node_b.", 65535);  // no newline
  return {{"seed_fleet", fleet},
          {"seed_crlf", "10.0.0.1:19737\r\n10.0.0.2:19737\r\n"},
          {"seed_bad_second_line", "10.0.0.1:19737\nnode-2.example\n"},
          {"seed_empty_brackets", "[]:19737\n"},
          {"seed_port_zero", "node-1:0\n"}};
}

}  // namespace

int main(int argc, char** argv) {
  bool check = argc == 3 && std::string(argv[1]) == "--check";
  if (argc != 2 && !check) {
    std::fprintf(stderr, "usage: fuzz_seeds [--check] CORPUS_DIR\n");
    return 2;
  }
  std::filesystem::path root = argv[argc - 1];
  int bad = 0, n = 0;
  for (auto& [target, seeds] :
       {std::pair{"nccl_messages_fuzz", ncclSeeds()}, std::pair{"fabric_wire_fuzz", fabricSeeds()},
        std::pair{"peers_file_fuzz", peersSeeds()}}) {
    if (!check) std::filesystem::create_directories(root / target);
    for (const auto& [name, bytes] : seeds) {
      std::filesystem::path p = root / target / name;
      ++n;
      if (check) {
        std::ifstream in(p, std::ios::binary);
        std::string have((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in || have != bytes) {
          std::fprintf(stderr, "differs from the encoders' bytes: %s\n", p.c_str());
          ++bad;
        }
      } else {
        std::ofstream(p, std::ios::binary) << bytes;
      }
    }
  }
  std::printf("%s %d seeds\n", check ? "checked" : "wrote", n);
  return bad ? 1 : 0;
}
