// File: cli/commands.h
//
// The vdsolab subcommands besides the default run.

#ifndef VDSOLAB_CLI_COMMANDS_H_
#define VDSOLAB_CLI_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>

namespace vdsolab::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitNotReproduced = 3;

// `vdsolab run FILE [--seed N]`: runs a scenario file; on a failure writes
// a minimal replay file to `replay_out` (or <name>-seed<N>.replay.toml).
int RunScenario(const std::string& path, std::optional<uint64_t> seed,
                const std::string& replay_out);

// `vdsolab replay FILE`: reproduces a replay file's failing call.
int ReplayScenario(const std::string& path);

// `vdsolab inspect [--format=json] [--samples=N | --watch]`: the live vvar
// page decoded; with samples, what its updates show.
int Inspect(bool json, int samples);

// `vdsolab conform [--samples=N]`: the host vDSO against vdsolab's reader.
int Conform(int samples, uint64_t seed);

// A path as the user meant it: relative to the directory `bazel run` was
// started in, else to the runfiles (for the built-in scenarios/).
std::string ResolveInputPath(const std::string& path);
std::string ResolveOutputPath(const std::string& path);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_COMMANDS_H_
