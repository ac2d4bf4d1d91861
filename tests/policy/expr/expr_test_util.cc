#include "tests/policy/expr/expr_test_util.h"

namespace fabricwatch::policy::expr::testing {

namespace {

core::Value port(int n, const char* state) {
  core::Value p =
      core::Value::map({{"port", n},
                        {"state", state},
                        {"phys_state", std::string(state) == "ACTIVE" ? "LinkUp" : "Polling"},
                        {"rate_gbps", 100.0},
                        {"link_layer", "Unspecified"}});
  p["gids"].push(core::Value::map(
      {{"index", 0}, {"address", "fe80:0000:0000:0000:14a8:34ff:fe12:3456"}, {"type", "RoCE v2"}}));
  p["counters"]["port_rcv_errors"] = 0;
  return p;
}

core::Value efaDevice(int i, const char* state) {
  core::Value d = core::Value::map({{"name", "rdmap" + std::to_string(i) + "s0"},
                                    {"kind", "efa"},
                                    {"node_type", "unspecified"},
                                    {"fw_ver", "0.0.0.0"},
                                    {"numa_node", i < 16 ? 0 : 1},
                                    {"pci_address", "0000:" + std::to_string(16 + i) + ":00.0"}});
  d["pcie"] = core::Value::map({{"current_width", 16},
                                {"max_width", 16},
                                {"current_speed_gts", 32.0},
                                {"max_speed_gts", 32.0},
                                {"degraded", false}});
  d["ports"].push(port(1, state));
  return d;
}

core::Value commonFacts() {
  core::Value f;
  f["node"]["name"] = "ip-10-0-0-1";
  f["kernel"] =
      core::Value::map({{"release", "6.1.0-18-cloud-amd64"}, {"hostname", "ip-10-0-0-1"}});
  f["kernel"]["modules"] = core::Value(core::Value::List{"efa", "ib_core", "nvidia_peermem"});
  f["kernel"]["memory_peers"] = true;
  f["memory"]["mem_total_bytes"] = int64_t{2} << 40;
  f["memory"]["hugepages"]["2048kB"] = core::Value::map(
      {{"size_bytes", 2097152}, {"total", 2560}, {"free", 2000}, {"reserved", 0}, {"surplus", 0}});
  f["memory"]["hugepages"]["1048576kB"] = core::Value::map(
      {{"size_bytes", 1073741824}, {"total", 0}, {"free", 0}, {"reserved", 0}, {"surplus", 0}});
  f["limits"]["memlock"] = core::Value::map({{"unlimited", true}});
  f["software"]["libfabric"] = core::Value::map(
      {{"version", "1.22.0amzn1.0"}, {"path", "/opt/amazon/efa/lib/libfabric.so.1"}});
  f["software"]["nccl"] = core::Value::map({{"version", "2.21.5+cuda12.4"}});
  f["nccl"]["settings"]["NCCL_IB_HCA"] =
      core::Value::map({{"value", "^mlx5_0,mlx5_1"}, {"source", "/etc/nccl.conf:3"}});
  f["nccl"]["settings"]["NCCL_SOCKET_IFNAME"] =
      core::Value::map({{"value", "ens"}, {"source", "/etc/nccl.conf:4"}});
  core::Value w = core::Value::map({{"pid", 4242}, {"comm", "python3"}, {"glibc_version", "2.35"}});
  w["env"] = core::Value::map({{"FI_PROVIDER", "efa"},
                               {"FI_EFA_USE_DEVICE_RDMA", "1"},
                               {"NCCL_DEBUG", "INFO"},
                               {"LD_LIBRARY_PATH", "/opt/amazon/efa/lib:/usr/local/cuda/lib64"}});
  w["libraries"] = core::Value::map({{"nccl", "2.21.5"}, {"libfabric", "1.22.0amzn1.0"}});
  w["nccl"]["NCCL_PROTO"] =
      core::Value::map({{"value", "simple"}, {"source", "workload 4242 environment"}});
  f["workloads"].push(w);
  f["resource_group"] = "p5";
  return f;
}

}  // namespace

core::Value sampleFacts() {
  core::Value f = commonFacts();
  for (int i = 0; i < 4; ++i) f["rdma"]["devices"].push(efaDevice(i, i == 3 ? "DOWN" : "ACTIVE"));
  f["rdma"]["devices"].asList()[0]["name"] = "efa_0";
  f["gpu"]["count"] = 8;
  return f;
}

core::Value p5Facts(int devices) {
  core::Value f = commonFacts();
  for (int i = 0; i < devices; ++i) f["rdma"]["devices"].push(efaDevice(i, "ACTIVE"));
  f["gpu"]["count"] = 8;
  for (int g = 0; g < 8; ++g) {
    core::Value d = core::Value::map({{"pci_address", "0000:" + std::to_string(0x53 + g) + ":00.0"},
                                      {"vendor", "0x10de"},
                                      {"numa_node", g < 4 ? 0 : 1}});
    for (int k = 0; k < devices / 8; ++k)
      d["nics"].push("rdmap" + std::to_string(g * 4 + k) + "s0");
    f["gpu"]["devices"].push(d);
  }
  for (int n = 0; n < 2; ++n) {
    core::Value i = core::Value::map(
        {{"name", "ens" + std::to_string(32 + n)}, {"operstate", "up"}, {"mtu", 9001}});
    f["net"]["interfaces"].push(i);
  }
  return f;
}

Activation bindAll(const core::Value& facts, const core::Value* variables,
                   const core::Value* workload) {
  Activation a;
  for (const auto& [k, v] : facts.asMap()) a.bind(k, &v);
  if (variables) a.bind("variables", variables);
  if (workload) a.bind("workload", workload);
  return a;
}

std::string formatError(const ExprError& e) {
  return std::to_string(e.pos.line) + ":" + std::to_string(e.pos.column) + ": " + e.message;
}

ExprTest::ExprTest() : facts_(sampleFacts()) {
  variables_["efa_count"] = 4;
  variables_["names"] = core::Value(core::Value::List{"a", "b"});
  workload_ = facts_["workloads"].asList()[0];
}

core::Value ExprTest::eval(const std::string& src, uint64_t cost_limit) {
  auto r = compile(src);
  if (auto* e = std::get_if<ExprError>(&r)) {
    ADD_FAILURE() << src << ": compile error " << formatError(*e);
    return core::Value();
  }
  Activation a = bindAll(facts_, &variables_, &workload_);
  EvalOptions opts;
  opts.cost_limit = cost_limit;
  EvalResult res = std::get<std::shared_ptr<const Program>>(r)->evaluate(a, opts);
  if (!res.ok()) {
    ADD_FAILURE() << src << ": eval error " << formatError(res.errors[0]);
    return core::Value();
  }
  return res.value;
}

std::string ExprTest::evalError(const std::string& src, uint64_t cost_limit) {
  auto r = compile(src);
  if (auto* e = std::get_if<ExprError>(&r)) return formatError(*e);
  Activation a = bindAll(facts_, &variables_, &workload_);
  EvalOptions opts;
  opts.cost_limit = cost_limit;
  EvalResult res = std::get<std::shared_ptr<const Program>>(r)->evaluate(a, opts);
  if (res.ok()) {
    ADD_FAILURE() << src << ": expected an error";
    return "";
  }
  return formatError(res.errors[0]);
}

std::string ExprTest::compileError(const std::string& src, const CompileOptions& opts) {
  auto r = compile(src, opts);
  if (auto* e = std::get_if<ExprError>(&r)) return formatError(*e);
  ADD_FAILURE() << src << ": expected a compile error";
  return "";
}

}  // namespace fabricwatch::policy::expr::testing
