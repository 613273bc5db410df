// File: cli/commands.h
//
// The vdsolab commands: each declares its flags (cli/flags.h) and runs from
// the parsed values. Exit status everywhere: 0 every check held, 1 a check
// failed, 2 bad input.

#ifndef VDSOLAB_CLI_COMMANDS_H_
#define VDSOLAB_CLI_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "sim/scenario.h"

namespace vdsolab::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;

struct Command {
  CommandSpec spec;
  int (*run)(const ParsedFlags& flags);
};

// The default job (no command name): the built-in end-to-end check.
Command DefaultCommand();

// Writes a failure's minimal replay scenario: to `replay_out` if set,
// else <name>[-<flag_variant>]-seed<N>.replay.toml; the path written, or
// "" after saying why it could not be (run_command.cc).
std::string WriteReplay(const sim::Scenario& replay, const std::string& name,
                        const std::string& flag_variant, uint64_t seed,
                        const std::string& replay_out);
// WriteReplay() for a run of a scenario built in code (the default job's
// stages): `origin`, the scenario as it ran, is written beside the replay
// (<...>.origin.toml) and the replay names it as run.origin, so that a
// replay whose schedule diverges with a fix is judged by that run whole.
std::string WriteReplayWithOrigin(sim::Scenario replay,
                                  const sim::Scenario& origin,
                                  const std::string& name,
                                  const std::string& flag_variant,
                                  uint64_t seed);
// run, replay, compare, variants, inspect, conform, build-variant,
// conform-model.
std::vector<Command> Commands();

// Each command's own entry point.
Command RunCommand();
Command ReplayCommand();
Command CompareCommand();
Command VariantsCommand();
Command InspectCommand();
Command ConformCommand();
Command BuildVariantCommand();
Command ConformModelCommand();

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_COMMANDS_H_
