// Expression language figures: 1,000 compiled rule expressions evaluated over a p5-like facts
// document (32 EFA devices, 8 GPUs, one workload) built in code. The target: one full pass
// over the 1,000 rules in under 1 ms.
//
//   cmake -S . -B build -DFW_BUILD_BENCH=ON && make -C build expr_bench
//   build/bench/expr_bench
//
// BM_Evaluate1000Rules reports the time of one full pass (all 1,000 rules) per iteration.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/value.h"
#include "policy/expr/expr.h"

namespace fabricwatch::policy::expr {
namespace {

core::Value p5Facts() {
  core::Value f;
  f["node"]["name"] = "ip-10-1-2-3";
  f["resource_group"] = "efa-p5";
  f["kernel"] =
      core::Value::map({{"release", "6.1.0-18-cloud-amd64"}, {"hostname", "ip-10-1-2-3"}});
  f["kernel"]["modules"] = core::Value(
      core::Value::List{"efa", "ib_core", "ib_uverbs", "nvidia", "nvidia_peermem", "gdrdrv"});
  f["kernel"]["memory_peers"] = true;
  for (int i = 0; i < 32; ++i) {
    core::Value d = core::Value::map({{"name", "rdmap" + std::to_string(i + 16) + "s0"},
                                      {"kind", "efa"},
                                      {"node_type", "unspecified"},
                                      {"fw_ver", "0.0.0.0"},
                                      {"hca_type", "efa1"},
                                      {"numa_node", i < 16 ? 0 : 1},
                                      {"pci_address", "0000:" + std::to_string(i + 16) + ":00.0"}});
    d["pcie"] = core::Value::map({{"current_width", 16},
                                  {"max_width", 16},
                                  {"current_speed_gts", 32.0},
                                  {"max_speed_gts", 32.0},
                                  {"degraded", false}});
    core::Value p = core::Value::map({{"port", 1},
                                      {"state", "ACTIVE"},
                                      {"phys_state", "LinkUp"},
                                      {"rate_gbps", 100.0},
                                      {"link_layer", "Unspecified"}});
    p["gids"].push(core::Value::map({{"index", 0}, {"address", "fe80::1"}, {"type", "RoCE v2"}}));
    for (const char* c : {"rx_bytes", "tx_bytes", "rx_drops", "send_bytes", "recv_bytes"}) {
      p["hw_counters"][c] = 12345;
    }
    d["ports"].push(p);
    f["rdma"]["devices"].push(d);
  }
  f["gpu"]["count"] = 8;
  for (int g = 0; g < 8; ++g) {
    core::Value d = core::Value::map({{"pci_address", "0000:" + std::to_string(0x53 + g) + ":00.0"},
                                      {"numa_node", g < 4 ? 0 : 1}});
    for (int k = 0; k < 4; ++k) d["nics"].push("rdmap" + std::to_string(16 + g * 4 + k) + "s0");
    f["gpu"]["devices"].push(d);
  }
  f["memory"]["mem_total_bytes"] = int64_t{2} << 40;
  f["memory"]["hugepages"]["2048kB"] = core::Value::map(
      {{"size_bytes", 2097152}, {"total", 5120}, {"free", 5000}, {"reserved", 0}, {"surplus", 0}});
  f["limits"]["memlock"] = core::Value::map({{"unlimited", true}});
  f["software"]["libfabric"] = core::Value::map({{"version", "1.22.0amzn1.0"}});
  f["software"]["nccl"] = core::Value::map({{"version", "2.21.5+cuda12.4"}});
  f["software"]["efa_ofi_dir"] = "/opt/amazon-efa-ofi";
  f["nccl"]["settings"]["NCCL_IB_HCA"] =
      core::Value::map({{"value", "rdmap16s0,rdmap17s0"}, {"source", "/etc/nccl.conf:3"}});
  core::Value w = core::Value::map({{"pid", 4242}, {"comm", "python3"}, {"glibc_version", "2.35"}});
  w["env"] =
      core::Value::map({{"FI_PROVIDER", "efa"},
                        {"FI_EFA_USE_DEVICE_RDMA", "1"},
                        {"NCCL_DEBUG", "INFO"},
                        {"LD_LIBRARY_PATH", "/opt/amazon-efa-ofi/lib:/usr/local/cuda/lib64"}});
  f["workloads"].push(w);
  return f;
}

// Rule shapes like the shipped packs'; %N% is replaced by the rule number so that no two rules are
// the same text. A third of them iterate over all 32 devices.
const char* kShapes[] = {
    "size(rdma.devices.filter(d, d.kind == 'efa')) >= 32 + %N% % 1",
    "rdma.devices.all(d, d.ports.all(p, p.state == 'ACTIVE' && p.phys_state == 'LinkUp'))",
    "rdma.devices.all(d, !d.pcie.degraded && d.pcie.current_width >= 16 - %N% % 2)",
    "memory.hugepages['2048kB'].total * memory.hugepages['2048kB'].size_bytes >= quantity('5Gi')",
    "'ib_uverbs' in kernel.modules && kernel.memory_peers",
    "limits.memlock.unlimited || limits.memlock.soft_bytes >= quantity('64Mi')",
    "rdma.devices.exists(d, d.name == 'rdmap%N%s0')",
    "!has(gpu.count) || gpu.count == 8",
    "semver(workload.glibc_version) >= semver('2.34')",
    "!has(software.nccl.version) || semver(software.nccl.version) >= semver('2.18.%N%')",
    "has(workload.env) && 'FI_EFA_USE_DEVICE_RDMA' in workload.env && "
    "workload.env.FI_EFA_USE_DEVICE_RDMA == '1'",
    "workload.env.LD_LIBRARY_PATH.split(':').exists(p, p.startsWith('/opt/amazon-efa-ofi'))",
    "nccl.settings.NCCL_IB_HCA.value.startsWith('^') || nccl.settings.NCCL_IB_HCA.value"
    ".split(',').all(h, rdma.devices.exists(d, d.name == h))",
    "resource_group.startsWith('efa-') && memory.hugepages['2048kB'].free > %N%",
    "kernel.release.matches('^6\\\\.[0-9]+')",
};

std::string ruleText(int n) {
  std::string s = kShapes[n % (sizeof(kShapes) / sizeof(kShapes[0]))];
  for (size_t k; (k = s.find("%N%")) != std::string::npos;) s.replace(k, 3, std::to_string(n));
  return s;
}

std::vector<std::shared_ptr<const Program>> compileRules(int n) {
  std::vector<std::shared_ptr<const Program>> out;
  for (int i = 0; i < n; ++i) {
    auto c = compile(ruleText(i));
    if (auto* p = std::get_if<std::shared_ptr<const Program>>(&c)) out.push_back(*p);
  }
  return out;
}

void BM_Evaluate1000Rules(benchmark::State& state) {
  const core::Value facts = p5Facts();
  const auto rules = compileRules(1000);
  if (rules.size() != 1000) {
    state.SkipWithError("a rule did not compile");
    return;
  }
  const core::Value variables = core::Value::map();
  int64_t trues = 0, errors = 0;
  uint64_t cost = 0;
  for (auto _ : state) {
    Activation a;
    for (const auto& [k, v] : facts.asMap()) a.bind(k, &v);
    a.bind("variables", &variables);
    a.bind("workload", &facts.find("workloads")->asList()[0]);
    trues = errors = 0;
    cost = 0;
    for (const auto& r : rules) {
      EvalResult res = r->evaluate(a);
      cost += res.cost;
      if (!res.ok()) {
        ++errors;
      } else if (res.value.isBool() && res.value.asBool()) {
        ++trues;
      }
    }
    benchmark::DoNotOptimize(trues);
  }
  state.counters["rules"] = static_cast<double>(rules.size());
  state.counters["true"] = static_cast<double>(trues);
  state.counters["errors"] = static_cast<double>(errors);
  state.counters["cost_per_pass"] = static_cast<double>(cost);
  state.counters["rules_per_s"] = benchmark::Counter(static_cast<double>(rules.size()),
                                                     benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Evaluate1000Rules)->Unit(benchmark::kMicrosecond);

void BM_Compile1000Rules(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(compileRules(1000));
}
BENCHMARK(BM_Compile1000Rules)->Unit(benchmark::kMillisecond);

void BM_EvaluateOneDeviceRule(benchmark::State& state) {
  const core::Value facts = p5Facts();
  auto prog = std::get<std::shared_ptr<const Program>>(compile(
      "rdma.devices.all(d, d.ports.all(p, p.state == 'ACTIVE' && p.phys_state == 'LinkUp'))"));
  Activation a;
  for (const auto& [k, v] : facts.asMap()) a.bind(k, &v);
  for (auto _ : state) benchmark::DoNotOptimize(prog->evaluate(a));
}
BENCHMARK(BM_EvaluateOneDeviceRule)->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace fabricwatch::policy::expr

BENCHMARK_MAIN();
