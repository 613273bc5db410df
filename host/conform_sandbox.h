// File: host/conform_sandbox.h
//
// Where `vdsolab conform` runs the host's vDSO code: in a child process (so
// nothing it does leaks into vdsolab, and a hang ends at an alarm), from a
// copy of the vDSO whose counter reads vdsolab answers.
//
// The copy sits next to a copy of the vvar area at the distances the kernel
// maps the originals (the vDSO reaches its data RIP-relative, so the copy
// reads the copied page), and every counter read its decoded .text has
// (host/vdso_sites.h: rdtsc, rdtscp, the rdtsc_ordered() alternative
// sites) is replaced by ud2 (+ nops), whose SIGILL a handler answers with
// the counter value we choose. (prctl(PR_SET_TSC, PR_TSC_SIGSEGV) is the other
// way to trap the counter; under some hypervisors it succeeds but rdtsc still
// does not fault, so vdsolab does not rely on it.)

#ifndef VDSOLAB_HOST_CONFORM_SANDBOX_H_
#define VDSOLAB_HOST_CONFORM_SANDBOX_H_

#include <time.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/clockid.h"
#include "host/live_vvar.h"

namespace vdsolab::host {

struct ChildOutcome {
  std::string output;   // Everything the child wrote to its pipe.
  bool exited = false;  // It returned (or called exit) with...
  int exit_code = 0;    // ...this code.
  int signal = 0;       // The signal that ended it, or 0.
};

// Runs body(fd) in a forked child, `fd` the write end of a pipe to the
// parent, and waits for it. The child gets SIGALRM after `seconds`.
absl::StatusOr<ChildOutcome> RunInChild(const std::function<int(int fd)>& body,
                                        unsigned seconds);

// The host's __vdso_clock_gettime copied next to a copy of the vvar area,
// its counter reads emulated. One per process (the SIGILL handler's state
// is global); for the child of RunInChild().
class PatchedVdso {
 public:
  // Copies the mapped vDSO and installs the SIGILL handler. Unavailable:
  // the host cannot be used (the message says why); Internal: a failure.
  static absl::StatusOr<std::unique_ptr<PatchedVdso>> Create(
      const VdsoMappings& maps);
  PatchedVdso(const PatchedVdso&) = delete;
  PatchedVdso& operator=(const PatchedVdso&) = delete;

  // The vvar area copy the code reads: the time page at 0, the pvclock
  // page at vdso::kPvclockPageOffset.
  uint8_t* area() const { return area_; }
  // Counter-read sites replaced.
  int patched_sites() const { return patched_sites_; }

  // The host code's clock_gettime(clock) on the area, every counter read
  // answering `tsc`: its return value, and the time in *ts.
  int ClockGettime(ClockId clock, uint64_t tsc, struct timespec* ts) const;

  // Counter reads the handler answered so far (in this process).
  static uint64_t counter_traps();

 private:
  using ClockGettimeFn = int (*)(clockid_t, struct timespec*);
  PatchedVdso(uint8_t* area, int patched_sites, ClockGettimeFn fn)
      : area_(area), patched_sites_(patched_sites), fn_(fn) {}

  uint8_t* area_;
  int patched_sites_;
  ClockGettimeFn fn_;
};

}  // namespace vdsolab::host

#endif  // VDSOLAB_HOST_CONFORM_SANDBOX_H_
