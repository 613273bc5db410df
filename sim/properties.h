// File: sim/properties.h
//
// The properties a simulation run checks (sim/checker.h says what each
// means), the verdicts on their violations, and the counts a run reports.

#ifndef VDSOLAB_SIM_PROPERTIES_H_
#define VDSOLAB_SIM_PROPERTIES_H_

#include <cstdint>
#include <string>

namespace vdsolab::sim {

enum class Property {
  kExact = 1,
  kMonotonic,
  kCausal,
  kSane,
  kRawRate,
  kCrossClock,
  kTorn,
  kLivelock,
  kCrash,
  kFastPath,
};
inline constexpr int kNumProperties = 10;
const char* PropertyName(Property p);

enum class Verdict { kDefect, kPrecondition, kKnownKernel };
const char* VerdictName(Verdict v);

struct Violation {
  Property property = Property::kExact;
  Verdict verdict = Verdict::kDefect;
  std::string why;     // The verdict's reason.
  std::string detail;  // What was seen.
  uint64_t call_index = 0;
  int reader = 0;  // Reader id.
  uint64_t reader_call = 0;
  uint64_t t_ns = 0;
  // The call was foreign code the watchdog stopped (CallFault::kSpin):
  // every rerun that reaches it costs the watchdog's bound (--call-timeout
  // of CPU or asleep, or 30 times it of wall time), so the minimiser
  // reruns it once.
  bool watchdog_stopped = false;
  // Found by the probe of the other entry points on the settled page
  // before the call (sim/entry_points.h), not by the call itself.
  bool entry_point = false;
};

struct PropertyStats {
  uint64_t checked = 0;
  uint64_t defects = 0;
  uint64_t preconditions = 0;
  uint64_t known_kernel = 0;
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_PROPERTIES_H_
