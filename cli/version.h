// File: cli/version.h
//
// vdsolab's version, as `vdsolab --version` prints it. Raised with each
// release-worthy change of behaviour (docs/architecture.md lists what the
// numbers mean: the plugin ABI has its own version).

#ifndef VDSOLAB_CLI_VERSION_H_
#define VDSOLAB_CLI_VERSION_H_

namespace vdsolab::cli {

inline constexpr const char* kVersion = "0.9.0";

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_VERSION_H_
