#pragma once
// YAML -> facts document (core::Value), for facts written inline in policy test files and
// facts files. Plain scalars resolve as YAML 1.2 core schema (null, bool, int, float, string);
// quoted and block scalars are always strings, so "2.35" stays a version string.

#include <yaml-cpp/yaml.h>

#include "core/value.h"

namespace fabricwatch::policy {

core::Value yamlToValue(const YAML::Node& node);

}  // namespace fabricwatch::policy
