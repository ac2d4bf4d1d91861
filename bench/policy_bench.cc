// Policy engine figures: 1,000 rules over a p5-like facts document (32 EFA devices, one
// workload), loading + compiling every shipped pack, and the counters' history of a p5.
//
//   cmake -S . -B build -DFW_BUILD_BENCH=ON && make -C build policy_bench
//   build/bench/policy_bench
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "facts/rdma_source.h"
#include "policy/counter_history.h"
#include "policy/evaluator.h"
#include "policy/nccl_facts.h"
#include "policy/pack_loader.h"
#include "policy/yaml_value.h"
#include "probes/registry.h"

namespace fabricwatch::policy {
namespace {

core::Value p5Facts() {
  std::ifstream in(std::string(FW_SOURCE_DIR) + "/config/policies/testdata/p5.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  core::Value f = yamlToValue(YAML::Load(ss.str()));
  prepareFacts(f, "efa-p5");
  return f;
}

// Rule shapes as the shipped packs write them: per-device iteration happens once, in the pack's
// variables, and rules compare the results. The 1,000 rules cycle through them.
const char* kShapes[] = {
    "size(variables.efa) >= 32",
    "size(variables.efa_not_active) == 0",
    "has(software.efa_ofi_dir)",
    "variables.hp_bytes >= quantity(\"5Gi\")",
    "\"ib_uverbs\" in kernel.modules",
    "has(limits.memlock) && limits.memlock.unlimited",
    "\"rdmap47s0\" in variables.efa_names",
    "!has(gpu.count) || gpu.count == 8",
    "variables.expected_efa == 0 ? size(variables.efa) > 0 : size(variables.efa) >= "
    "variables.expected_efa",
    "resource_group.startsWith(\"efa-\") && variables.hp.free > 0",
};
// The worst case: every rule iterates the 32 devices itself.
const char* kIteratingShapes[] = {
    "size(variables.efa) >= 32",
    "variables.efa.all(d, d.ports.all(p, p.state == \"ACTIVE\"))",
    "has(software.efa_ofi_dir)",
    "variables.hp_bytes >= quantity(\"5Gi\")",
    "\"ib_uverbs\" in kernel.modules",
    "has(limits.memlock) && limits.memlock.unlimited",
    "rdma.devices.exists(d, d.name == \"rdmap47s0\")",
    "!has(gpu.count) || gpu.count == 8",
    "size(variables.efa.filter(d, d.ports.exists(p, p.state != \"ACTIVE\"))) == 0",
    "resource_group.startsWith(\"efa-\") && variables.hp.free > 0",
};
const char* kWorkloadShapes[] = {
    "has(workload.env) && \"FI_EFA_USE_DEVICE_RDMA\" in workload.env && "
    "workload.env.FI_EFA_USE_DEVICE_RDMA == \"1\"",
    "!has(workload.glibc_version) || semver(workload.glibc_version) >= semver(\"2.34\")",
    "has(workload.env) && \"LD_LIBRARY_PATH\" in workload.env && "
    "workload.env.LD_LIBRARY_PATH.startsWith(\"/opt/amazon-efa-ofi/\")",
};

std::string thousandRulePack(bool iterating) {
  std::string y =
      "apiVersion: fabricwatch.io/v1\nkind: PolicyPack\nmetadata: {name: bench}\nspec:\n"
      "  match: {resourceGroups: [\"efa-*\"]}\n  variables:\n"
      "    - {name: efa, expression: 'rdma.devices.filter(d, d.kind == \"efa\")'}\n"
      "    - {name: hp, expression: 'memory.hugepages[\"2048kB\"]'}\n"
      "    - {name: hp_bytes, expression: 'variables.hp.total * variables.hp.size_bytes'}\n"
      "    - {name: efa_names, expression: 'variables.efa.map(d, d.name)'}\n"
      "    - {name: efa_not_active, expression: 'variables.efa.filter(d, d.ports.exists(p, "
      "p.state != \"ACTIVE\"))'}\n"
      "    - name: expected_efa\n"
      "      expression: 'resource_group in {\"efa-p5\": 32, \"efa-p4d\": 4} ? "
      "{\"efa-p5\": 32, \"efa-p4d\": 4}[resource_group] : 0'\n"
      "  rules:\n";
  for (int i = 0; i < 1000; ++i) {
    bool workload = i % 10 == 9;  // 100 workload rules, 900 node rules
    std::string expr = workload    ? kWorkloadShapes[(i / 10) % 3]
                       : iterating ? kIteratingShapes[i % 10]
                                   : kShapes[i % 10];
    std::string quoted;
    for (char c : expr) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    y += "    - id: r" + std::to_string(i) + "\n      severity: warning\n" +
         (workload ? "      subject: workload\n" : "") + "      expression: '" + quoted +
         "'\n      messageExpression: '\"rule " + std::to_string(i) +
         " failed on \" + resource_group'\n      remediation: x\n";
  }
  return y;
}

// state.range(0): 0 shipped-pack style, 1 every rule iterating the devices.
void BM_Evaluate1000Rules(benchmark::State& state) {
  auto r = loadPackText(thousandRulePack(state.range(0) == 1), "bench.yaml",
                        fabricwatch::probes::factRoots());
  if (!r.ok()) {
    state.SkipWithError(core::formatAll(r.problems).c_str());
    return;
  }
  core::Value facts = p5Facts();
  size_t violations = 0, errors = 0;
  for (auto _ : state) {
    Evaluation e = evaluate(r.packs, facts, "efa-p5");
    violations = e.violations.size();
    errors = e.errors.size();
    benchmark::DoNotOptimize(e);
  }
  state.counters["rules"] = 1000;
  state.counters["violations"] = static_cast<double>(violations);
  state.counters["errors"] = static_cast<double>(errors);
}
BENCHMARK(BM_Evaluate1000Rules)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_LoadShippedPacks(benchmark::State& state) {
  size_t rules = 0;
  for (auto _ : state) {
    PackLoadResult r = loadEmbeddedPacks(fabricwatch::probes::factRoots());
    if (!r.ok()) {
      state.SkipWithError(core::formatAll(r.problems).c_str());
      return;
    }
    rules = 0;
    for (const auto& p : r.packs) rules += p.rules.size();
    benchmark::DoNotOptimize(r);
  }
  state.counters["rules"] = static_cast<double>(rules);
}
BENCHMARK(BM_LoadShippedPacks)->Unit(benchmark::kMillisecond);

// The shipped packs' YAML, parsed and compiled as the binary did before they were compiled in.
void BM_LoadShippedPacksFromYaml(benchmark::State& state) {
  std::vector<std::string> names, texts;
  for (const auto& path : packFiles({std::string(FW_SOURCE_DIR) + "/config/policies"})) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    names.push_back(std::filesystem::path(path).filename().string());
    texts.push_back(text.str());
  }
  std::vector<PackText> files;
  for (size_t i = 0; i < names.size(); ++i) files.push_back({names[i], texts[i]});
  for (auto _ : state) {
    PackLoadResult r = loadPackTexts(files, fabricwatch::probes::factRoots());
    if (!r.ok()) {
      state.SkipWithError(core::formatAll(r.problems).c_str());
      return;
    }
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_LoadShippedPacksFromYaml)->Unit(benchmark::kMillisecond);

void BM_EvaluateShippedPacksOnP5(benchmark::State& state) {
  PackLoadResult r = loadEmbeddedPacks(fabricwatch::probes::factRoots());
  core::Value facts = p5Facts();
  for (auto _ : state) benchmark::DoNotOptimize(evaluate(r.packs, facts, "efa-p5"));
}
BENCHMARK(BM_EvaluateShippedPacksOnP5)->Unit(benchmark::kMicrosecond);

// The counters' history in serve on a p5 (tests/fixtures/p5_efa: 1,088 counters), the window
// holding 20 collections: Arg 1, a new rdma collection recorded and its increases and rates
// added to a copy of the facts (what the stage does when the rdma source ran); Arg 0, the
// increases and rates added to a copy without recording (every other publish); Arg 2, the copy
// alone, for reference (the stage works on each snapshot's own document, copied anyway).
void BM_CounterHistoryP5(benchmark::State& state) {
  facts::RdmaSource rdma;
  const core::Value facts =
      rdma.collect({std::string(FW_SOURCE_DIR) + "/tests/fixtures/p5_efa"}).facts;
  CounterHistory h;
  const auto window = std::chrono::minutes(10);
  auto at = std::chrono::system_clock::time_point{} + std::chrono::hours(24 * 365 * 56);
  for (int i = 0; i < 20; ++i) h.record(facts, at += std::chrono::seconds(30), window);
  const bool record = state.range(0) == 1, copy_only = state.range(0) == 2;
  for (auto _ : state) {
    core::Value f = facts;
    if (record) h.record(f, at += std::chrono::seconds(30), window);
    if (!copy_only) h.annotate(f, window);
    benchmark::DoNotOptimize(f);
  }
  state.counters["counters"] = static_cast<double>(h.counters());
}
BENCHMARK(BM_CounterHistoryP5)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace fabricwatch::policy

BENCHMARK_MAIN();
