#pragma once
// The subcommands of the fabricwatch binary. Each takes the arguments after its name and
// returns the process exit code.

#include <string>
#include <vector>

namespace fabricwatch::exporter {

inline constexpr int kExitOk = 0;
inline constexpr int kExitViolations = 1;  // check: violations at or above --fail-on
inline constexpr int kExitUsage = 2;       // usage or configuration error

using Args = std::vector<std::string>;

int runServe(const Args& args);
int runFacts(const Args& args);
int runConfig(const Args& args);
int runVersion(const Args& args);
int runCheck(const Args& args);
int runPolicy(const Args& args);
int runNcclLog(const Args& args);
int runDiagnose(const Args& args);

}  // namespace fabricwatch::exporter
