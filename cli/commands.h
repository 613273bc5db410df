// File: cli/commands.h
//
// The vdsolab commands: each declares its flags (cli/flags.h) and runs from
// the parsed values. Exit status everywhere: 0 every check held, 1 a check
// failed, 2 bad input.

#ifndef VDSOLAB_CLI_COMMANDS_H_
#define VDSOLAB_CLI_COMMANDS_H_

#include <vector>

#include "cli/flags.h"

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
