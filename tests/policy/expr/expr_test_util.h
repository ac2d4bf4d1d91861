#pragma once
// Test helpers for the expression language: a small p5-like facts document, and eval()/error
// helpers that compile and evaluate with every top-level key bound.

#include <gtest/gtest.h>

#include <string>

#include "core/value.h"
#include "policy/expr/expr.h"

namespace fabricwatch::policy::expr::testing {

// Four EFA devices (one with a DOWN port), hugepages, software versions, one workload.
core::Value sampleFacts();
// The facts of a p5.48xlarge-like node: 32 EFA devices, 8 GPUs, two workloads.
core::Value p5Facts(int devices = 32);
// Binds every top-level key of facts, plus "variables" and "workload".
Activation bindAll(const core::Value& facts, const core::Value* variables = nullptr,
                   const core::Value* workload = nullptr);
std::string formatError(const ExprError& e);

class ExprTest : public ::testing::Test {
 protected:
  ExprTest();
  // Compiles and evaluates; a failure (compile or eval) fails the test and returns null.
  core::Value eval(const std::string& src, uint64_t cost_limit = 1'000'000);
  // "line:col: message" of the compile or evaluation error; "" (and a test failure) when none.
  std::string evalError(const std::string& src, uint64_t cost_limit = 1'000'000);
  // "line:col: message" of the compile error; "" (and a test failure) when it compiles.
  std::string compileError(const std::string& src, const CompileOptions& opts = {});

  core::Value facts_;
  core::Value variables_;
  core::Value workload_;
};

}  // namespace fabricwatch::policy::expr::testing
