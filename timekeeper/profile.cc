#include "timekeeper/profile.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace vdsolab::timekeeper {
namespace {

struct DefectName {
  const char* name;
  void (*enable)(TimekeeperProfile* p);
};

const std::vector<DefectName>& DefectTable() {
  static const auto* table = new std::vector<DefectName>{
      {"adjtimex_forwards_and_clears_error",
       [](TimekeeperProfile* p) {
         p->defects.adjtimex_forwards_and_clears_error = true;
       }},
      {"suspend_without_forward",
       [](TimekeeperProfile* p) { p->defects.suspend_without_forward = true; }},
      {"vsyscall_boottime_shift_overflow",
       [](TimekeeperProfile* p) {
         p->defects.vsyscall_boottime_shift_overflow = true;
       }},
      {"clocksource_max_raw_delta_zero",
       [](TimekeeperProfile* p) {
         p->defects.clocksource_max_raw_delta_zero = true;
       }},
      {"ntp_offset_readback_u32",
       [](TimekeeperProfile* p) { p->ntp.offset_readback_u32 = true; }},
      {"ntp_time_constant_add_before_clamp",
       [](TimekeeperProfile* p) {
         p->ntp.time_constant_add_before_clamp = true;
       }},
      {"ntp_maxerror_unclamped",
       [](TimekeeperProfile* p) { p->ntp.maxerror_unclamped = true; }},
  };
  return *table;
}

}  // namespace

const std::vector<std::string>& KnownEras() {
  static const auto* eras = new std::vector<std::string>{
      "5.3", "6.1", "6.10", "6.13", "6.15", "6.18"};
  return *eras;
}

absl::StatusOr<TimekeeperProfile> ProfileForEra(std::string_view era) {
  TimekeeperProfile p;
  p.era = std::string(era);
  // Each step back in time undoes one change, newest first.
  if (era == "6.18") return p;
  p.aux_clocks = false;                    // 6.17
  p.adjtimex_time_after_setoffset = true;  // 6.17's do_adjtimex() rework
  if (era == "6.15") return p;
  p.coarse_nsec = false;  // 6.15
  if (era == "6.13") return p;
  p.negative_motion = NegativeMotion::kMsb;  // 6.13 (Dec 2024)
  p.set_error_restores_shadow = false;       // 6.13
  if (era == "6.10") return p;
  p.chunked_forward = false;  // 6.10
  if (era == "6.1") return p;
  // 5.3's update_vsyscall() shifted offs_boot; 5.4+ publishes BOOTTIME
  // from monotonic_to_boot.
  p.defects.vsyscall_boottime_shift_overflow = true;
  if (era == "5.3") return p;
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown kernel era \"%s\" (want one of %s)", era,
                      absl::StrJoin(KnownEras(), ", ")));
}

const std::vector<std::string>& KnownDefects() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const DefectName& d : DefectTable()) v->push_back(d.name);
    return v;
  }();
  return *names;
}

absl::Status EnableDefect(std::string_view name, TimekeeperProfile* profile) {
  for (const DefectName& d : DefectTable()) {
    if (name == d.name) {
      d.enable(profile);
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown defect \"%s\" (want one of %s)", name,
                      absl::StrJoin(KnownDefects(), ", ")));
}

const std::vector<std::string>& KnownBackports() {
  static const auto* names = new std::vector<std::string>{"max-raw-delta"};
  return *names;
}

absl::Status ApplyBackport(std::string_view name, TimekeeperProfile* profile) {
  if (name == "max-raw-delta") {
    profile->negative_motion = NegativeMotion::kMaxRawDelta;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown backport \"%s\" (want one of %s)", name,
                      absl::StrJoin(KnownBackports(), ", ")));
}

}  // namespace vdsolab::timekeeper
