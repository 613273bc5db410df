// File: ktree/testing/defect_patches.h
//
// Unified diffs that reintroduce real vDSO defects into a kernel tree,
// made at test time from the tree's own files (an edit of a copy in memory,
// then `diff -u` against the original), so no kernel text is kept in
// vdsolab:
//
//   no-seq-retry          do_hres()'s seq loop ends after one pass
//                         (`while (unlikely(vdso_read_retry(vd, seq)))`
//                         becomes `while (0)`): a racing update is not
//                         retried.
//   no-negative-motion-clamp
//                         6.10+: the bit-62 check in x86 vdso_calc_ns() is
//                         gone; 6.1: the `cycles > last` guard of x86
//                         vdso_calc_delta() is gone. A counter behind
//                         cycle_last converts as a huge delta.
//   base-before-seq-loop  do_hres() reads the base time's nsec before the
//                         seq loop, outside the section the seq protects.
//   timens-no-nsec-offset do_hres_timens() adds the namespace's seconds
//                         but not its nanoseconds.
//   timens-no-seq-retry   do_hres_timens()'s seq loop ends after one pass.

#ifndef VDSOLAB_KTREE_TESTING_DEFECT_PATCHES_H_
#define VDSOLAB_KTREE_TESTING_DEFECT_PATCHES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace vdsolab::ktree::testing {

enum class Defect {
  kNoSeqRetry,
  kNoNegativeMotionClamp,
  kBaseBeforeSeqLoop,
  kTimensNoNsecOffset,
  kTimensNoSeqRetry,
  // vdso_read_begin() (include/vdso/helpers.h) without its smp_rmb(): in
  // 6.1 and 6.12 only the time namespace paths call it (do_hres() and
  // do_coarse() open-code it), so only a namespace reader under relaxed
  // ordering can see the difference.
  kTimensReadBeginNoRmb,
  // __arch_get_hw_counter() reading the TSC with rdtsc() instead of
  // rdtsc_ordered() (no lfence). Named in the variant's line; in the
  // simulation an early read may run before its call began, and across
  // two readers returns less than a call that ended before (causal).
  kUnorderedCounterRead,
  // __cvdso_clock_gettime_common()'s id check without its (u32) cast: a
  // negative id passes it and indexes the clock tables from outside them
  // (scenarios/invalid-clock-ids.toml).
  kSignedClockId,
  // __cvdso_gettimeofday_data() converting nanoseconds to microseconds with
  // a shift (>> 10, a divide by 1024): gettimeofday() runs slow within
  // each second (sim/entry_points.h).
  kGettimeofdayUsec,
  // __cvdso_time_data() reading basetime[CLOCK_MONOTONIC].sec instead of
  // CLOCK_REALTIME's: time() answers the seconds since boot.
  kTimeMonotonic,
  // __cvdso_clock_getres_common() answering the coarse clocks with
  // hrtimer_res instead of LOW_RES_NSEC.
  kGetresCoarseHres,
  // __cvdso_time_data() storing through its argument without the NULL
  // test: time(NULL), the common call, crashes.
  kTimeNull,
  // __cvdso_clock_getres_common() storing the resolution without its
  // `if (likely(res))`: clock_getres(id, NULL), which POSIX allows,
  // crashes.
  kGetresNull,
  // x86's exported __vdso_time() wrapper (arch/x86/entry/vdso/
  // vclock_gettime.c) adding a second: code vdsolab compiles but never
  // runs (it calls __cvdso_time_data()), so the build notes that nothing
  // tests the patch.
  kVdsoTimeWrapper,
  // __cvdso_clock_getres_common() without `res->tv_sec = 0;`: the caller's
  // tv_sec is left as it was, right only where it happened to be zero.
  kGetresNoTvSec,
  // __cvdso_gettimeofday_data() storing the time without its
  // `if (likely(tv != NULL))`: gettimeofday(NULL, &tz), a call for the
  // timezone alone, crashes.
  kGettimeofdayTvNull,
  // __cvdso_clock_gettime_common() sending CLOCK_MONOTONIC to the syscall
  // (`if (likely(msk & VDSO_HRES) && clock != CLOCK_MONOTONIC)`): every
  // answer right, the vDSO's fast path for the commonest clock lost.
  kMonotonicToSyscall,
  // __cvdso_time_data()'s namespace test inverted (`vd->clock_mode !=
  // VDSO_CLOCKMODE_TIMENS`): a task in no namespace reads the namespace
  // data, which the kernel does not map for it (SIGBUS).
  kTimeTimensTestInverted,
  // x86's __arch_get_hw_counter() with its PVCLOCK test inverted
  // (`clock_mode != VDSO_CLOCKMODE_PVCLOCK`): on kvm-clock the pvclock page
  // is never read and every hres call goes to the syscall, right but
  // without the fast path (property fast_path).
  kPvclockModeInverted,
};

// The defects of the initial namespace's paths.
std::vector<Defect> AllDefects();
// The defects of the time namespace path (do_hres_timens()).
std::vector<Defect> TimensDefects();
// The defects of gettimeofday(), time() and clock_getres().
std::vector<Defect> OtherEntryPointDefects();
const char* DefectName(Defect d);  // "no-seq-retry", ...

// Writes `dir`/<name>.diff against the tree at `tree_root` (its files are
// read, not changed) and returns its path. An error says which anchor the
// tree's source lacks.
absl::StatusOr<std::string> WriteDefectPatch(const std::string& tree_root,
                                             Defect d, const std::string& dir);

// A patch that breaks compilation: an undeclared identifier in do_hres().
// Returns its path; *line is the line of lib/vdso/gettimeofday.c the
// compiler must name.
absl::StatusOr<std::string> WriteCompileErrorPatch(const std::string& tree_root,
                                                   const std::string& dir,
                                                   int* line);

// A patch of two hunks whose second does not apply (its context is not in
// the tree).
absl::StatusOr<std::string> WriteNonApplyingPatch(const std::string& tree_root,
                                                  const std::string& dir);

// A patch adding `statement` (e.g. an asm statement) to do_hres()'s seq
// loop after its smp_rmb(); written as `dir`/<name>.diff.
absl::StatusOr<std::string> WriteStatementPatch(const std::string& tree_root,
                                                const std::string& dir,
                                                const std::string& name,
                                                const std::string& statement);

// A harmless patch (a comment added to lib/vdso/gettimeofday.c), tagged so
// different tags make different patches.
absl::StatusOr<std::string> WriteCommentPatch(const std::string& tree_root,
                                              const std::string& dir,
                                              const std::string& tag);

}  // namespace vdsolab::ktree::testing

#endif  // VDSOLAB_KTREE_TESTING_DEFECT_PATCHES_H_
