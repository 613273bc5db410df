#include "ktree/testing/defect_patches.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "ktree/internal/fs.h"
#include "ktree/internal/subprocess.h"

namespace vdsolab::ktree::testing {
namespace {

using internal::JoinPath;

constexpr char kGeneric[] = "lib/vdso/gettimeofday.c";
constexpr char kX86[] = "arch/x86/include/asm/vdso/gettimeofday.h";
constexpr char kHelpers[] = "include/vdso/helpers.h";
constexpr char kVclock[] = "arch/x86/entry/vdso/vclock_gettime.c";
constexpr char kDoHres[] = "static __always_inline int do_hres(";
// The first definition is CONFIG_TIME_NS's (the stub follows its #else).
constexpr char kDoHresTimens[] = "static __always_inline int do_hres_timens(";

absl::Status Missing(const std::string& file, const std::string& what) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s: %s not found (a tree this edit does not know)", file, what));
}

// `diff -u` of `rel` against `edited`, with a/ and b/ labels (-p1).
absl::StatusOr<std::string> Diff(const std::string& tree_root,
                                 const std::string& rel,
                                 const std::string& edited,
                                 const std::string& dir,
                                 const std::string& name) {
  if (absl::Status s = internal::MakeDirs(dir); !s.ok()) return s;
  const std::string copy = JoinPath(dir, name + ".edited");
  if (absl::Status s = internal::WriteFileAtomic(copy, edited); !s.ok()) {
    return s;
  }
  absl::StatusOr<internal::RunOutput> r =
      internal::RunProgram({"diff", "-u", "--label", "a/" + rel, "--label",
                            "b/" + rel, JoinPath(tree_root, rel), copy});
  if (!r.ok()) return r.status();
  if (r->exit_code != 1) {
    return absl::InternalError(
        absl::StrFormat("diff exited %d: %s", r->exit_code, r->output));
  }
  const std::string path = JoinPath(dir, name + ".diff");
  if (absl::Status s = internal::WriteFileAtomic(path, r->output); !s.ok()) {
    return s;
  }
  return path;
}

// Replaces the first `from` at or after `start` with `to`.
bool ReplaceAfter(std::string& text, size_t start, const std::string& from,
                  const std::string& to) {
  const size_t at = text.find(from, start);
  if (at == std::string::npos) return false;
  text.replace(at, from.size(), to);
  return true;
}

absl::StatusOr<std::string> Edit(const std::string& tree_root, Defect d,
                                 std::string* rel) {
  *rel = d == Defect::kNoNegativeMotionClamp ||
                 d == Defect::kUnorderedCounterRead ||
                 d == Defect::kPvclockModeInverted
             ? kX86
         : d == Defect::kTimensReadBeginNoRmb ? kHelpers
         : d == Defect::kVdsoTimeWrapper      ? kVclock
                                              : kGeneric;
  absl::StatusOr<std::string> src =
      internal::ReadFile(JoinPath(tree_root, *rel));
  if (!src.ok()) return src.status();
  std::string text = *src;
  switch (d) {
    case Defect::kNoSeqRetry: {
      const size_t f = text.find(kDoHres);
      if (f == std::string::npos) return Missing(*rel, "do_hres()");
      if (!ReplaceAfter(text, f,
                        "} while (unlikely(vdso_read_retry(vd, seq)));",
                        "} while (0);")) {
        return Missing(*rel, "do_hres()'s vdso_read_retry() loop");
      }
      break;
    }
    case Defect::kNoNegativeMotionClamp: {
      // 6.10+: vdso_calc_ns()'s bit-62 filter.
      const std::string bit62 =
          "\t\tif (delta & (1ULL << 62))\n\t\t\treturn base >> vd->shift;\n";
      // 5.x-6.9: vdso_calc_delta()'s guard.
      const std::string guard =
          "\tif (cycles > last)\n\t\treturn (cycles - last) * mult;\n"
          "\treturn 0;\n";
      if (!ReplaceAfter(text, 0, bit62, "") &&
          !ReplaceAfter(text, 0, guard, "\treturn (cycles - last) * mult;\n")) {
        return Missing(*rel, "the negative-motion check");
      }
      break;
    }
    case Defect::kBaseBeforeSeqLoop: {
      const size_t f = text.find(kDoHres);
      if (f == std::string::npos) return Missing(*rel, "do_hres()");
      const std::string early =
          "\tconst u64 base_nsec = vdso_ts->nsec; /* before the seq loop */\n"
          "\n";
      const size_t loop = text.find("\tdo {\n", f);
      if (loop == std::string::npos) return Missing(*rel, "do_hres()'s loop");
      text.insert(loop, early);
      if (!ReplaceAfter(text, loop + early.size(), "vdso_ts->nsec",
                        "base_nsec")) {
        return Missing(*rel, "do_hres()'s vdso_ts->nsec");
      }
      break;
    }
    case Defect::kTimensNoNsecOffset: {
      const size_t f = text.find(kDoHresTimens);
      if (f == std::string::npos) return Missing(*rel, "do_hres_timens()");
      if (!ReplaceAfter(text, f, "\tns += offs->nsec;\n", "")) {
        return Missing(*rel, "do_hres_timens()'s ns += offs->nsec");
      }
      break;
    }
    case Defect::kTimensNoSeqRetry: {
      const size_t f = text.find(kDoHresTimens);
      if (f == std::string::npos) return Missing(*rel, "do_hres_timens()");
      if (!ReplaceAfter(text, f,
                        "} while (unlikely(vdso_read_retry(vd, seq)));",
                        "} while (0);")) {
        return Missing(*rel, "do_hres_timens()'s vdso_read_retry() loop");
      }
      break;
    }
    case Defect::kUnorderedCounterRead: {
      const size_t f = text.find("__arch_get_hw_counter(");
      if (f == std::string::npos)
        return Missing(*rel, "__arch_get_hw_counter()");
      if (!ReplaceAfter(text, f, "return (u64)rdtsc_ordered()",
                        "return (u64)rdtsc()")) {
        return Missing(*rel, "__arch_get_hw_counter()'s rdtsc_ordered()");
      }
      break;
    }
    case Defect::kSignedClockId: {
      const size_t f = text.find("__cvdso_clock_gettime_common(");
      if (f == std::string::npos) {
        return Missing(*rel, "__cvdso_clock_gettime_common()");
      }
      if (!ReplaceAfter(text, f, "(u32) clock >= MAX_CLOCKS",
                        "clock >= MAX_CLOCKS")) {
        return Missing(*rel, "the (u32) clock id check");
      }
      break;
    }
    case Defect::kGettimeofdayUsec: {
      const size_t f = text.find("__cvdso_gettimeofday_data(");
      if (f == std::string::npos) {
        return Missing(*rel, "__cvdso_gettimeofday_data()");
      }
      if (!ReplaceAfter(text, f, "(u32)ts.tv_nsec / NSEC_PER_USEC",
                        "(u32)ts.tv_nsec >> 10")) {
        return Missing(*rel, "the tv_usec conversion");
      }
      break;
    }
    case Defect::kTimeMonotonic: {
      const size_t f = text.find("__cvdso_time_data(");
      if (f == std::string::npos) return Missing(*rel, "__cvdso_time_data()");
      if (!ReplaceAfter(text, f, "basetime[CLOCK_REALTIME].sec",
                        "basetime[CLOCK_MONOTONIC].sec")) {
        return Missing(*rel, "time()'s basetime[CLOCK_REALTIME].sec");
      }
      break;
    }
    case Defect::kGetresCoarseHres: {
      const size_t f = text.find("__cvdso_clock_getres_common(");
      if (f == std::string::npos) {
        return Missing(*rel, "__cvdso_clock_getres_common()");
      }
      if (!ReplaceAfter(text, f, "ns = LOW_RES_NSEC;",
                        "ns = READ_ONCE(vd[CS_HRES_COARSE].hrtimer_res);")) {
        return Missing(*rel, "clock_getres()'s LOW_RES_NSEC");
      }
      break;
    }
    case Defect::kTimeTimensTestInverted: {
      const size_t f = text.find("__cvdso_time_data(");
      if (f == std::string::npos) return Missing(*rel, "__cvdso_time_data()");
      if (!ReplaceAfter(text, f, "vd->clock_mode == VDSO_CLOCKMODE_TIMENS",
                        "vd->clock_mode != VDSO_CLOCKMODE_TIMENS")) {
        return Missing(*rel, "time()'s namespace test");
      }
      break;
    }
    case Defect::kTimeNull: {
      const size_t f = text.find("__cvdso_time_data(");
      if (f == std::string::npos) return Missing(*rel, "__cvdso_time_data()");
      if (!ReplaceAfter(text, f, "\tif (time)\n\t\t*time = t;",
                        "\t*time = t;")) {
        return Missing(*rel, "time()'s `if (time)`");
      }
      break;
    }
    case Defect::kGetresNull: {
      const size_t f = text.find("__cvdso_clock_getres_common(");
      if (f == std::string::npos) {
        return Missing(*rel, "__cvdso_clock_getres_common()");
      }
      if (!ReplaceAfter(text, f, "if (likely(res)) {", "if (1) {")) {
        return Missing(*rel, "clock_getres()'s `if (likely(res))`");
      }
      break;
    }
    case Defect::kGetresNoTvSec: {
      const size_t f = text.find("__cvdso_clock_getres_common(");
      if (f == std::string::npos) {
        return Missing(*rel, "__cvdso_clock_getres_common()");
      }
      if (!ReplaceAfter(text, f, "\t\tres->tv_sec = 0;\n", "")) {
        return Missing(*rel, "clock_getres()'s `res->tv_sec = 0;`");
      }
      break;
    }
    case Defect::kGettimeofdayTvNull: {
      const size_t f = text.find("__cvdso_gettimeofday_data(");
      if (f == std::string::npos) {
        return Missing(*rel, "__cvdso_gettimeofday_data()");
      }
      if (!ReplaceAfter(text, f, "if (likely(tv != NULL)) {", "if (1) {")) {
        return Missing(*rel, "gettimeofday()'s `if (likely(tv != NULL))`");
      }
      break;
    }
    case Defect::kMonotonicToSyscall: {
      const size_t f = text.find("__cvdso_clock_gettime_common(");
      if (f == std::string::npos) {
        return Missing(*rel, "__cvdso_clock_gettime_common()");
      }
      if (!ReplaceAfter(text, f, "if (likely(msk & VDSO_HRES))",
                        "if (likely(msk & VDSO_HRES) && clock != "
                        "CLOCK_MONOTONIC)")) {
        return Missing(*rel, "the VDSO_HRES test");
      }
      break;
    }
    case Defect::kVdsoTimeWrapper: {
      const size_t f = text.find("__vdso_time(");
      if (f == std::string::npos) return Missing(*rel, "__vdso_time()");
      if (!ReplaceAfter(text, f, "return __cvdso_time(t);",
                        "return __cvdso_time(t) + 1;")) {
        return Missing(*rel, "__vdso_time()'s return");
      }
      break;
    }
    case Defect::kPvclockModeInverted: {
      const size_t f = text.find("__arch_get_hw_counter(");
      if (f == std::string::npos)
        return Missing(*rel, "__arch_get_hw_counter()");
      if (!ReplaceAfter(text, f, "if (clock_mode == VDSO_CLOCKMODE_PVCLOCK)",
                        "if (clock_mode != VDSO_CLOCKMODE_PVCLOCK)")) {
        return Missing(*rel, "__arch_get_hw_counter()'s PVCLOCK test");
      }
      break;
    }
    case Defect::kTimensReadBeginNoRmb: {
      const size_t f = text.find("u32 vdso_read_begin(");
      if (f == std::string::npos) return Missing(*rel, "vdso_read_begin()");
      if (!ReplaceAfter(text, f, "\tsmp_rmb();\n", "")) {
        return Missing(*rel, "vdso_read_begin()'s smp_rmb()");
      }
      break;
    }
  }
  return text;
}

}  // namespace

std::vector<Defect> AllDefects() {
  return {Defect::kNoSeqRetry, Defect::kNoNegativeMotionClamp,
          Defect::kBaseBeforeSeqLoop};
}

std::vector<Defect> OtherEntryPointDefects() {
  return {Defect::kGettimeofdayUsec,  Defect::kTimeMonotonic,
          Defect::kGetresCoarseHres,  Defect::kTimeNull,
          Defect::kGetresNull,        Defect::kGetresNoTvSec,
          Defect::kGettimeofdayTvNull};
}

std::vector<Defect> TimensDefects() {
  return {Defect::kTimensNoNsecOffset, Defect::kTimensNoSeqRetry,
          Defect::kTimensReadBeginNoRmb};
}

const char* DefectName(Defect d) {
  switch (d) {
    case Defect::kNoSeqRetry:
      return "no-seq-retry";
    case Defect::kNoNegativeMotionClamp:
      return "no-negative-motion-clamp";
    case Defect::kBaseBeforeSeqLoop:
      return "base-before-seq-loop";
    case Defect::kTimensNoNsecOffset:
      return "timens-no-nsec-offset";
    case Defect::kTimensNoSeqRetry:
      return "timens-no-seq-retry";
    case Defect::kTimensReadBeginNoRmb:
      return "timens-read-begin-no-rmb";
    case Defect::kUnorderedCounterRead:
      return "unordered-counter-read";
    case Defect::kSignedClockId:
      return "signed-clock-id";
    case Defect::kGettimeofdayUsec:
      return "gettimeofday-usec";
    case Defect::kTimeMonotonic:
      return "time-monotonic";
    case Defect::kGetresCoarseHres:
      return "getres-coarse-hres";
    case Defect::kTimeNull:
      return "time-null";
    case Defect::kGetresNull:
      return "getres-null";
    case Defect::kVdsoTimeWrapper:
      return "vdso-time-wrapper";
    case Defect::kGetresNoTvSec:
      return "getres-no-tv-sec";
    case Defect::kGettimeofdayTvNull:
      return "gettimeofday-tv-null";
    case Defect::kMonotonicToSyscall:
      return "monotonic-to-syscall";
    case Defect::kTimeTimensTestInverted:
      return "time-timens-test-inverted";
    case Defect::kPvclockModeInverted:
      return "pvclock-mode-inverted";
  }
  return "?";
}

absl::StatusOr<std::string> WriteDefectPatch(const std::string& tree_root,
                                             Defect d, const std::string& dir) {
  std::string rel;
  absl::StatusOr<std::string> edited = Edit(tree_root, d, &rel);
  if (!edited.ok()) return edited.status();
  return Diff(tree_root, rel, *edited, dir, DefectName(d));
}

absl::StatusOr<std::string> WriteStatementPatch(const std::string& tree_root,
                                                const std::string& dir,
                                                const std::string& name,
                                                const std::string& statement,
                                                int* line) {
  absl::StatusOr<std::string> src =
      internal::ReadFile(JoinPath(tree_root, kGeneric));
  if (!src.ok()) return src.status();
  std::string text = *src;
  const size_t f = text.find(kDoHres);
  if (f == std::string::npos) return Missing(kGeneric, "do_hres()");
  const size_t rmb = text.find("\t\tsmp_rmb();\n", f);
  if (rmb == std::string::npos) return Missing(kGeneric, "smp_rmb()");
  const size_t after = rmb + std::string("\t\tsmp_rmb();\n").size();
  text.insert(after, "\t\t" + statement + "\n");
  if (line != nullptr) {
    *line = 1;
    for (size_t i = 0; i < after; ++i) *line += text[i] == '\n';
  }
  return Diff(tree_root, kGeneric, text, dir, name);
}

absl::StatusOr<std::string> WriteStatementPatch(const std::string& tree_root,
                                                const std::string& dir,
                                                const std::string& name,
                                                const std::string& statement) {
  return WriteStatementPatch(tree_root, dir, name, statement, nullptr);
}

absl::StatusOr<std::string> WriteCompileErrorPatch(const std::string& tree_root,
                                                   const std::string& dir,
                                                   int* line) {
  return WriteStatementPatch(tree_root, dir, "compile-error",
                             "vdsolab_undeclared_identifier = 1;", line);
}

absl::StatusOr<std::string> WriteNonApplyingPatch(const std::string& tree_root,
                                                  const std::string& dir) {
  absl::StatusOr<std::string> good =
      WriteDefectPatch(tree_root, Defect::kNoSeqRetry, dir);
  if (!good.ok()) return good.status();
  absl::StatusOr<std::string> text = internal::ReadFile(*good);
  if (!text.ok()) return text.status();
  // A second hunk whose lines are vdsolab's, not the tree's.
  const std::string bad = *text +
                          "@@ -5000,3 +5000,3 @@\n"
                          " vdsolab: a context line the tree does not have\n"
                          "-vdsolab: nor this one\n"
                          "+vdsolab: replaced\n"
                          " vdsolab: more context\n";
  const std::string path = JoinPath(dir, "does-not-apply.diff");
  if (absl::Status s = internal::WriteFileAtomic(path, bad); !s.ok()) return s;
  return path;
}

absl::StatusOr<std::string> WriteCommentPatch(const std::string& tree_root,
                                              const std::string& dir,
                                              const std::string& tag) {
  absl::StatusOr<std::string> src =
      internal::ReadFile(JoinPath(tree_root, kGeneric));
  if (!src.ok()) return src.status();
  return Diff(tree_root, kGeneric,
              *src + "/* vdsolab test comment: " + tag + " */\n", dir,
              "comment-" + tag);
}

}  // namespace vdsolab::ktree::testing
