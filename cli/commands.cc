#include "cli/commands.h"

namespace vdsolab::cli {

std::vector<Command> Commands() {
  return {RunCommand(),          ReplayCommand(),      CompareCommand(),
          VariantsCommand(),     InspectCommand(),     ConformCommand(),
          BuildVariantCommand(), ConformModelCommand()};
}

}  // namespace vdsolab::cli
