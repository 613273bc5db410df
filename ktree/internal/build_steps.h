// File: ktree/internal/build_steps.h
//
// The steps that turn a (patched) tree into the plugin: compile the tree's
// x86-64 vDSO to assembly with a layout probe appended, rewrite its counter
// and syscall sites, assemble, compile the runtime glue with a generated
// config header, link, and check the result (no counter or syscall
// instruction left in executable code, no undefined symbol but libc's).

#ifndef VDSOLAB_KTREE_INTERNAL_BUILD_STEPS_H_
#define VDSOLAB_KTREE_INTERNAL_BUILD_STEPS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ktree/internal/asm_rewrite.h"
#include "ktree/internal/diagnostics.h"
#include "ktree/internal/layout_match.h"
#include "ktree/internal/shims.h"

namespace vdsolab::ktree::internal {

// The entry points the wrapper adds to the tree's code, which the glue
// calls: everything vdsolab runs of the tree is reached from them.
// clock_gettime() (__cvdso_clock_gettime_data()), and the other entry
// points of x86's vclock_gettime.c: gettimeofday(), time(),
// clock_getres() (their __cvdso_*_data() functions).
inline constexpr char kTreeEntryPoint[] = "vdsolab_tree_clock_gettime";
inline constexpr char kTreeGettimeofday[] = "vdsolab_tree_gettimeofday";
inline constexpr char kTreeTime[] = "vdsolab_tree_time";
inline constexpr char kTreeClockGetres[] = "vdsolab_tree_clock_getres";

struct StepContext {
  Compiler cc;
  std::vector<std::string> cflags;
  std::string src_root;  // The tree, or its patched copy.
  std::string scratch;   // This build's private directory.
  // For diagnostics: src_root -> "", scratch -> "<vdsolab>".
  std::vector<PathPrefix> prefixes;
  // "in Linux 6.12.117 (/usr/src/linux-source-6.12.tar.xz + fix.diff)".
  std::string what;
  std::string* log = nullptr;
};

struct CompiledTree {
  std::string assembly;           // The compiler's -S output.
  std::vector<std::string> deps;  // Absolute paths of every file read.
  ProbeAttempt attempt;           // The struct generation that compiled.
  std::map<std::string, uint64_t> probe;
};

// Compiles the wrapper around the tree's vclock_gettime.c with the probe of
// `predicted` appended (one compile in the usual case). If that fails, the
// other struct generations are tried alone; a compile error of the tree
// itself is an InvalidArgument naming its tree-relative file:line.
absl::StatusOr<CompiledTree> CompileTree(const StepContext& ctx,
                                         const ProbeAttempt& predicted);

// What the glue's generated config header says.
struct GlueConfig {
  std::string name, provenance, summary, layout, era, origin;
  uint32_t data_offset = 0;
  std::vector<uint32_t> seq_offsets;
  std::vector<int32_t> clocks;
  uint32_t counter_semantics = 0;
  uint32_t semantics_flags = 0;
  uint32_t counter_read = 0;
  uint32_t config_hz = 0;
};
std::string FormatGlueConfig(const GlueConfig& c);

// Assembles the rewritten assembly, compiles the glue, links `out_so` and
// checks it.
absl::Status LinkPlugin(const StepContext& ctx, const std::string& assembly,
                        const GlueConfig& config, const std::string& out_so);

// The embedded sources (ktree/internal/glue.c, vdsolab_plugin.h) and a
// fingerprint of every fixed input of a build, for the cache key.
std::string BuildFingerprint();

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_BUILD_STEPS_H_
