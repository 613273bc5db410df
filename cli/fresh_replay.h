// File: cli/fresh_replay.h
//
// A plugin's replay file checked in a fresh process: a plugin that keeps
// state between calls (which docs/plugins.md rules out) answers the
// minimisation's reruns, made in vdsolab's process after the run,
// otherwise than a fresh process answers the same calls, so its minimal
// replay may show nothing. run, compare and the default job say so.

#ifndef VDSOLAB_CLI_FRESH_REPLAY_H_
#define VDSOLAB_CLI_FRESH_REPLAY_H_

#include <optional>
#include <string>

#include "variants/variant.h"

namespace vdsolab::cli {

// Whether `vdsolab replay FILE` reproduces the failure in a fresh process
// (its exit status 1); nullopt if that could not be told.
std::optional<bool> ReproducesInFreshProcess(const std::string& file);

// For a plugin's replay `file` that a fresh process does not reproduce,
// why (one sentence, no prefix); "" otherwise, and for other variants
// (whose code keeps no state vdsolab cannot see).
std::string StaleReplayWarning(const std::string& file,
                               const variants::Variant& variant);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_FRESH_REPLAY_H_
