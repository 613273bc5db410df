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

// `vdsolab run FILE [--seed N] [--variant NAME]`: runs a scenario file
// (with the variant it names, or `variant_name`); on a failure writes a
// minimal replay file to `replay_out` (or <name>-seed<N>.replay.toml).
int RunScenario(const std::string& path, std::optional<uint64_t> seed,
                const std::string& replay_out, const std::string& variant_name);

// `vdsolab replay FILE`: reproduces a replay file's failing call.
int ReplayScenario(const std::string& path);

// `vdsolab variants`: every variant with its provenance and clocks.
int ListVariants();

// `vdsolab inspect [--format=json] [--samples=N | --watch]`: the live vvar
// page decoded; with samples, what its updates show.
int Inspect(bool json, int samples);

// `vdsolab conform [--samples=N]`: the host vDSO against vdsolab's reader.
int Conform(int samples, uint64_t seed);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_COMMANDS_H_
