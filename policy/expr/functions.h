#pragma once
// The function library: size, contains, startsWith, endsWith, matches, split, int, double, string,
// quantity, semver and the extensions (lowerAscii, upperAscii, trim, join, indexOf, sum, min, max,
// major/minor/patch). Every function can be called globally f(x, y) or as a method x.f(y).

#include <cstdint>
#include <string_view>
#include <vector>

#include "policy/expr/runtime.h"

namespace fabricwatch::policy::expr {

// Static types, as bit masks: the compiler knows a set of possible kinds for every node.
using TypeMask = uint16_t;
inline constexpr TypeMask kTNull = 1, kTBool = 2, kTInt = 4, kTDouble = 8, kTString = 16,
                          kTList = 32, kTMap = 64, kTSemver = 128, kTDyn = 255,
                          kTNum = kTInt | kTDouble;

std::string typeMaskName(TypeMask t);

struct Overload {
  std::vector<TypeMask> params;  // the receiver of a method call is the first parameter
  TypeMask result;
};

// args are never errors: the call node returns the first failing argument instead.
using FnImpl = RVal (*)(Ctx& c, Position pos, const RVal* args, size_t nargs);

struct FunctionDef {
  const char* name;
  std::vector<Overload> overloads;
  FnImpl impl;
};

const FunctionDef* findFunction(std::string_view name);

}  // namespace fabricwatch::policy::expr
