// vdsolab: userspace emulator of the Linux vDSO clock path.
//
// `vdsolab [flags]` runs the built-in end-to-end check; `vdsolab COMMAND
// [flags]` runs a command (vdsolab --help lists them). Exit status
// everywhere: 0 every check held, 1 a check failed, 2 bad input.

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/version.h"
#include "variants/plugin/loader.h"

namespace vdsolab::cli {
namespace {

std::string TopLevelHelp(const std::vector<Command>& commands) {
  const Command def = DefaultCommand();
  std::string o = absl::StrFormat(
      "vdsolab %s: emulate the Linux vDSO clock path and check it.\n\n"
      "usage: vdsolab [flags]             %s\n",
      kVersion, def.spec.summary);
  for (const Command& c : commands) {
    absl::StrAppendFormat(&o, "       vdsolab %-15s %s\n", c.spec.name,
                          c.spec.summary);
  }
  o += "\n`vdsolab COMMAND --help` describes a command and its flags; "
       "`vdsolab --version` names the version.\n\n"
       "Without a command:\n\n";
  o += CommandHelp(def.spec).substr(CommandHelp(def.spec).find('\n') + 2);
  return o;
}

// Parses `args` for `command` and runs it (or prints its help).
int Dispatch(const Command& command, const std::vector<std::string>& args) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(command.spec, args);
  if (!flags.ok()) {
    Fail(command.spec.name.empty()
             ? std::string(flags.status().message())
             : absl::StrFormat("%s: %s", command.spec.name,
                               flags.status().message()));
    return kExitBadInput;
  }
  if (flags->help()) {
    std::fputs(CommandHelp(command.spec).c_str(), stdout);
    return kExitOk;
  }
  return command.run(*flags);
}

int Main(int argc, char** argv) {
  RememberStartDirectory();
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::vector<Command> commands = Commands();
  if (args.empty() || args[0].empty() || args[0][0] == '-') {
    for (const std::string& a : args) {
      if (a == "--") break;
      if (a == "--version") {
        std::printf("vdsolab %s\n", kVersion);
        return kExitOk;
      }
      if (a == "--help" || a == "-h") {
        std::fputs(TopLevelHelp(commands).c_str(), stdout);
        return kExitOk;
      }
    }
    return Dispatch(DefaultCommand(), args);
  }
  std::string name = args[0];
  args.erase(args.begin());
  if (name == "help") {
    if (args.empty()) {
      std::fputs(TopLevelHelp(commands).c_str(), stdout);
      return kExitOk;
    }
    name = args[0];
    args = {"--help"};
  }
  if (name == "version") {
    std::printf("vdsolab %s\n", kVersion);
    return kExitOk;
  }
  for (const Command& c : commands) {
    if (c.spec.name == name) return Dispatch(c, args);
  }
  Fail(absl::StrFormat(
      "unknown command '%s' (vdsolab --help lists the commands)", name));
  return kExitBadInput;
}

}  // namespace
}  // namespace vdsolab::cli

int main(int argc, char** argv) {
  const int rc = vdsolab::cli::Main(argc, argv);
  if (vdsolab::variants::LoaderPoisoned() ||
      vdsolab::variants::ForeignCodeLoaded()) {
    // A plugin crashed inside dlopen(): exit()'s handlers would wait for
    // the loader lock the jump out of it left held. Or a plugin is loaded:
    // its destructors would run in exit(), after the report, and a crash
    // or _exit() there would replace the exit status the report stands for.
    std::fflush(nullptr);
    _exit(rc);
  }
  return rc;
}
