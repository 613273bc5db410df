#include "sim/scenario_fields.h"

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clockid.h"
#include "common/escape.h"
#include "sim/toml_values.h"
#include "timekeeper/timex_names.h"

namespace vdsolab::sim {
namespace {

using toml_table::BigUnsigned;
using toml_table::Bool;
using toml_table::Duration;
using toml_table::Enum;
using toml_table::Fields;
using toml_table::InlineTables;
using toml_table::Int;
using toml_table::IntList;
using toml_table::OptionalSection;
using toml_table::Ppm;
using toml_table::Section;
using toml_table::String;
using toml_table::Tables;
using toml_table::Time;
using toml_table::Where;

absl::StatusOr<ClockId> ParseClockName(const std::string& name) {
  for (ClockId id = 0; id <= kClockAuxLast; ++id) {
    if (id >= kVdsoBases && id < kClockAux) continue;
    if (ClockShortName(id) == name || ClockName(id) == name) return id;
  }
  int64_t v;
  if (absl::SimpleAtoi(name, &v) && v >= INT32_MIN && v <= INT32_MAX) {
    return static_cast<ClockId>(v);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown clock \"%s\" (want e.g. \"MONOTONIC\", \"REALTIME_COARSE\", "
      "or a number)",
      name));
}

// A clock by name ("MONOTONIC", "AUX+0", "-1") or by number (1, -1): a
// clock id is a 32-bit integer.
absl::StatusOr<ClockId> ClockOf(const toml::node& item, const Where& where) {
  if (const std::optional<int64_t> v = toml_hardened::IntegerValue(item)) {
    if (*v < INT32_MIN || *v > INT32_MAX) {
      return where.Bad(
          item, absl::StrFormat("clock id %d is not a 32-bit integer", *v));
    }
    absl::StatusOr<ClockId> id = ParseClockName(std::to_string(*v));
    if (!id.ok()) return where.Bad(item, id.status().message());
    return *id;
  }
  if (!item.is_string()) {
    return where.Bad(item, "want clock names (\"MONOTONIC\") or ids (1)");
  }
  absl::StatusOr<ClockId> id = ParseClockName(*item.value<std::string>());
  if (!id.ok()) return where.Bad(item, id.status().message());
  return *id;
}

// Clock ids by name ("MONOTONIC", "CLOCK_TAI", a number) or number, or
// "all": the clocks the vDSO serves.
template <class S>
toml_table::Field<S> Clocks(const std::string& key,
                            std::vector<ClockId> S::*member) {
  const std::string want =
      "want \"all\" or a non-empty list of clock names or ids";
  return toml_table::Value(
      key, member, want,
      [want](const toml::node& node, const Where& where,
             std::vector<ClockId>& out) -> absl::Status {
        if (node.is_string() && *node.value<std::string>() == "all") {
          out.assign(std::begin(kVdsoServedClocks),
                     std::end(kVdsoServedClocks));
          return absl::OkStatus();
        }
        const toml::array* array = node.as_array();
        if (array == nullptr || array->empty()) return where.Bad(node, want);
        out.clear();
        for (const toml::node& item : *array) {
          absl::StatusOr<ClockId> id = ClockOf(item, where);
          if (!id.ok()) return id.status();
          out.push_back(*id);
        }
        return absl::OkStatus();
      },
      [](const std::vector<ClockId>& clocks) {
        std::vector<std::string> names;
        for (ClockId c : clocks) names.push_back(TomlQuote(ClockShortName(c)));
        return absl::StrCat("[", absl::StrJoin(names, ", "), "]");
      });
}

// One clock by name, as in Clocks().
template <class S>
toml_table::Field<S> OneClock(const std::string& key, ClockId S::*member) {
  const std::string want = "want a clock name (\"REALTIME\", \"AUX+0\")";
  return toml_table::Value(
      key, member, want,
      [want](const toml::node& node, const Where& where,
             ClockId& out) -> absl::Status {
        if (!node.is_string() && !toml_hardened::IntegerValue(node)) {
          return where.Bad(node, want);
        }
        absl::StatusOr<ClockId> id = ClockOf(node, where);
        if (!id.ok()) return id.status();
        out = *id;
        return absl::OkStatus();
      },
      [](const ClockId& c) { return TomlQuote(ClockShortName(c)); });
}

// Bits given as a list of names from `table`, or as an integer; written
// as names when every bit has one.
template <class S, class T>
toml_table::Field<S> Flags(
    const std::string& key, T S::*member,
    const std::vector<std::pair<std::string, uint32_t>>& table) {
  std::vector<std::string> quoted_names;
  for (const auto& [n, bits] : table) quoted_names.push_back(TomlQuote(n));
  const std::string want = absl::StrCat(
      "want a list of ", absl::StrJoin(quoted_names, ", "), ", or an integer");
  return toml_table::Value(
      key, member, want,
      [want, &table](const toml::node& node, const Where& where,
                     T& out) -> absl::Status {
        if (const std::optional<int64_t> v =
                toml_hardened::IntegerValue(node)) {
          if (*v < INT32_MIN || *v > UINT32_MAX) {
            return where.Bad(node, "does not fit 32 bits");
          }
          out = static_cast<T>(*v);
          return absl::OkStatus();
        }
        const toml::array* array = node.as_array();
        if (array == nullptr) return where.Bad(node, want);
        std::vector<std::string> items;
        for (const toml::node& item : *array) {
          if (!item.is_string()) return where.Bad(item, want);
          items.push_back(*item.value<std::string>());
        }
        std::string unknown;
        const std::optional<uint32_t> bits =
            timekeeper::FlagsFromNames(table, items, &unknown);
        if (!bits) {
          return where.Bad(
              node, absl::StrFormat("unknown name \"%s\": %s", unknown, want));
        }
        out = static_cast<T>(*bits);
        return absl::OkStatus();
      },
      [&table](const T& v) {
        const std::optional<std::vector<std::string>> names =
            timekeeper::NamesOfFlags(table, static_cast<uint32_t>(v));
        if (!names || static_cast<int64_t>(v) < 0) {
          return absl::StrFormat("%d", v);
        }
        std::vector<std::string> quoted;
        for (const std::string& n : *names) quoted.push_back(TomlQuote(n));
        return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
      });
}

// A signed offset: "[-]SECONDS[.FRACTION]", normalised to tv_nsec in
// [0, 1e9) ("-2.75" is {-3, 250000000}), or an integer of seconds.
template <class S>
toml_table::Field<S> SignedTime(const std::string& key, Timespec64 S::*member) {
  const std::string want = "want \"[-]SECONDS[.FRACTION]\"";
  return toml_table::Value(
      key, member, want,
      [want](const toml::node& node, const Where& where,
             Timespec64& out) -> absl::Status {
        if (const std::optional<int64_t> v =
                toml_hardened::IntegerValue(node)) {
          out = Timespec64{*v, 0};
          return absl::OkStatus();
        }
        if (!node.is_string()) return where.Bad(node, want);
        std::string text = *node.value<std::string>();
        const bool negative = !text.empty() && text[0] == '-';
        if (negative) text = text.substr(1);
        absl::StatusOr<Timespec64> ts = ParseSecondsFraction(text);
        if (!ts.ok()) return where.Bad(node, ts.status().message());
        out =
            negative ? SetNormalizedTimespec64(-ts->tv_sec, -ts->tv_nsec) : *ts;
        return absl::OkStatus();
      },
      [](const Timespec64& ts) {
        // Written as the normalised sum, so that it reads back the same.
        if (ts.tv_sec >= 0) {
          return absl::StrFormat("\"%d.%09d\"", ts.tv_sec, ts.tv_nsec);
        }
        const Timespec64 mag = SetNormalizedTimespec64(-ts.tv_sec, -ts.tv_nsec);
        return absl::StrFormat("\"-%d.%09d\"", mag.tv_sec, mag.tv_nsec);
      });
}

// An event parameter belongs to these kinds only.
template <EventKind... kKinds>
bool KindIs(const EventSpec& e) {
  return ((e.kind == kKinds) || ...);
}

constexpr int64_t kPpmMax = 1000000;  // Probabilities: 1000000 = always.

const Fields<CounterStep>& StepFields() {
  static const auto* fields = new Fields<CounterStep>{
      Duration("at", &CounterStep::at_ns).Required(),
      Int("cycles", &CounterStep::cycles, -(1ll << 62), 1ll << 62).Required(),
  };
  return *fields;
}

const Fields<CpuCounterSpec>& CpuFields() {
  using C = CpuCounterSpec;
  static const auto* fields = new Fields<C>{
      Int("offset_cycles", &C::offset_cycles, INT64_MIN / 2, INT64_MAX / 2),
      Int("drift_ppb", &C::drift_ppb, -100000000, 100000000),
      Int("wobble_cycles", &C::wobble_cycles, 0, 1ll << 40),
      Duration("wobble_period", &C::wobble_period_ns),
      Int("jitter_cycles", &C::jitter_cycles, 0, 1ll << 40),
      InlineTables("steps", &C::steps, StepFields(),
                   "{ at = \"1s\", cycles = -1000 }"),
  };
  return *fields;
}

const Fields<MachineSpec>& MachineFields() {
  using M = MachineSpec;
  static const auto* fields = new Fields<M>{
      String("clocksource", &M::clocksource),
      Int("counter_hz", &M::counter_hz, 1000, 10000000000),
      Int("calibrated_hz", &M::calibrated_hz, 0, INT64_MAX),
      Int("width_bits", &M::width_bits, 16, 64),
      Bool("rdtscp", &M::rdtscp),
      BigUnsigned("counter_start", &M::counter_start),
      Duration("pvclock_period", &M::pvclock_period_ns).OmitDefault(),
      Duration("kvmclock_start", &M::kvmclock_start_ns).OmitDefault(),
      Tables("cpu", &M::cpus, CpuFields()),
  };
  return *fields;
}

const Fields<KernelSpec>& KernelFields() {
  using K = KernelSpec;
  static const auto* fields = new Fields<K>{
      Int("hz", &K::hz, 10, 10000),
      Time("boot_realtime", &K::boot_realtime),
      Time("boot_offset", &K::boot_offset),
      Int("hrtimer_res_ns", &K::hrtimer_res_ns, 0, 1000000000),
      Int("timekeeping_cpu", &K::timekeeping_cpu, 0, 63),
      Bool("has_rtc", &K::has_rtc),
      String("era", &K::era).OmitDefault(),
      toml_table::StringList("defects", &K::defects).OmitDefault(),
      toml_table::StringList("backports", &K::backports).OmitDefault(),
      Bool("aux_clocks", &K::aux_clocks).OmitDefault(),
      Bool("tsc_nonstop", &K::tsc_nonstop).OmitDefault(),
      Bool("persistent_clock", &K::persistent_clock).OmitDefault(),
      SignedTime("timens_monotonic", &K::timens_monotonic).OmitDefault(),
      SignedTime("timens_boottime", &K::timens_boottime).OmitDefault(),
  };
  return *fields;
}

const Fields<TimingSpec>& TimingFields() {
  using T = TimingSpec;
  static const auto* fields = new Fields<T>{
      Duration("tick_jitter", &T::tick_jitter_ns),
      Duration("load", &T::load_ns),
      Duration("counter_read", &T::counter_read_ns),
      Duration("syscall", &T::syscall_ns),
      Duration("writer_start", &T::writer_start_ns),
      Duration("store", &T::store_ns),
      Int("writer_stall_ppm", &T::writer_stall_ppm, 0, kPpmMax),
      Duration("writer_stall_max", &T::writer_stall_max_ns),
      Int("preempt_ppm", &T::preempt_ppm, 0, kPpmMax),
      Duration("preempt_max", &T::preempt_max_ns),
  };
  return *fields;
}

const Fields<EventSpec>& EventFields() {
  using E = EventSpec;
  using K = EventKind;
  static const auto* fields = new Fields<E>{
      Enum("kind", &E::kind,
           {K::kAdjtimexFrequency, K::kAdjtimexTick, K::kSetTime, K::kIdle,
            K::kPause, K::kAdjtimex, K::kSetTai, K::kSetOffset, K::kLeap,
            K::kSuspend, K::kClocksource, K::kAuxEnable, K::kAuxDisable,
            K::kAuxSettime, K::kPvclockUpdate},
           EventKindName)
          .Required()
          .Decides(),
      Duration("at", &E::at_ns),
      Ppm("freq_ppm", &E::freq_scaled_ppm, 500)
          .When(KindIs<K::kAdjtimexFrequency>),
      Int("tick", &E::tick_usec, INT64_MIN, INT64_MAX)
          .When(KindIs<K::kAdjtimexTick, K::kAdjtimex>),
      Time("realtime", &E::realtime).When(KindIs<K::kSetTime, K::kAuxSettime>),
      Duration("duration", &E::duration_ns)
          .When(KindIs<K::kIdle, K::kPause, K::kSuspend>),
      Flags("modes", &E::modes, timekeeper::AdjModeNames())
          .When(KindIs<K::kAdjtimex>),
      Int("offset", &E::offset, INT64_MIN, INT64_MAX)
          .When(KindIs<K::kAdjtimex>),
      Int("freq", &E::freq, INT64_MIN, INT64_MAX).When(KindIs<K::kAdjtimex>),
      Int("maxerror", &E::maxerror, INT64_MIN, INT64_MAX)
          .When(KindIs<K::kAdjtimex>),
      Int("esterror", &E::esterror, INT64_MIN, INT64_MAX)
          .When(KindIs<K::kAdjtimex>),
      Flags("status", &E::status, timekeeper::StaNames())
          .When(KindIs<K::kAdjtimex>),
      Int("constant", &E::constant, INT64_MIN, INT64_MAX)
          .When(KindIs<K::kAdjtimex>),
      Int("time_sec", &E::time_sec, INT64_MIN, INT64_MAX)
          .When(KindIs<K::kAdjtimex>),
      Int("time_usec", &E::time_usec, INT64_MIN, INT64_MAX)
          .When(KindIs<K::kAdjtimex>),
      OneClock("clock", &E::clock).When(KindIs<K::kAdjtimex>),
      Int("tai", &E::tai, INT32_MIN, INT32_MAX).When(KindIs<K::kSetTai>),
      SignedTime("offset_time", &E::offset_time).When(KindIs<K::kSetOffset>),
      String("leap", &E::leap).When(KindIs<K::kLeap>),
      String("clocksource", &E::clocksource).When(KindIs<K::kClocksource>),
      Int("aux", &E::aux, INT32_MIN, INT32_MAX)
          .When(KindIs<K::kAuxEnable, K::kAuxDisable, K::kAuxSettime>),
      Bool("master", &E::pvclock_master).When(KindIs<K::kPvclockUpdate>),
      Bool("stable", &E::pvclock_stable).When(KindIs<K::kPvclockUpdate>),
      Int("tsc_khz", &E::tsc_khz, 0, INT64_MAX).When(KindIs<K::kPvclockUpdate>),
      Int("expect_ret", &E::expect_ret, -4095, 5)
          .OmitDefault()
          .When(KindIs<K::kAdjtimex, K::kSetTai, K::kSetOffset, K::kLeap,
                       K::kSetTime, K::kAuxSettime>),
      toml_table::StringList("expect_readback", &E::expect_readback)
          .OmitDefault()
          .When(KindIs<K::kAdjtimex>),
  };
  return *fields;
}

const Fields<ReaderSpec>& ReaderFields() {
  using R = ReaderSpec;
  static const auto* fields = new Fields<R>{
      Int("id", &R::id, -1, 1000000),
      Int("cpu", &R::cpu, 0, 63),
      Clocks("clocks", &R::clocks),
      Duration("period", &R::period_ns),
      Duration("period_jitter", &R::period_jitter_ns),
      Int("migrate_ppm", &R::migrate_ppm, 0, kPpmMax),
      Int("migrate_midcall_ppm", &R::migrate_midcall_ppm, 0, kPpmMax),
      Bool("timens", &R::timens).OmitDefault(),
      Bool("own_clocks", &R::own_clocks).OmitDefault(),
  };
  return *fields;
}

const Fields<FaultSpec>& FaultFields() {
  using F = FaultSpec;
  static const auto* fields = new Fields<F>{
      Bool("unordered_counter_read", &F::unordered_counter_read),
      Duration("speculation", &F::speculation_ns),
      Int("reorder_ppm", &F::reorder_ppm, 0, kPpmMax).OmitDefault(),
  };
  return *fields;
}

const Fields<CheckSpec>& CheckFields() {
  using C = CheckSpec;
  static const auto* fields = new Fields<C>{
      Bool("exact", &C::exact),
      Bool("monotonic", &C::monotonic),
      Bool("causal", &C::causal),
      Bool("sane", &C::sane),
      Bool("raw_rate", &C::raw_rate),
      Bool("cross_clock", &C::cross_clock),
      Bool("torn", &C::torn),
      Int("livelock_budget", &C::livelock_budget, 2, 1000000000),
  };
  return *fields;
}

const Fields<RunSpec>& RunFields() {
  using R = RunSpec;
  static const auto* fields = new Fields<R>{
      Duration("duration", &R::duration_ns),
      Int("seed", &R::seed, 0, INT64_MAX),
      Enum("strategy", &R::strategy, {Strategy::kRandom, Strategy::kExhaustive},
           StrategyName),
      String("reader", &R::reader),
      String("origin", &R::origin).OmitDefault(),
      String("origin_sha256", &R::origin_sha256).OmitDefault(),
      Duration("exhaustive_at", &R::exhaustive_at_ns),
      Int("exhaustive_updates", &R::exhaustive_updates, 1, 4),
      // Omitted at their defaults, so the files and replays of one-call
      // runs read as before.
      Enum("exhaustive_shape", &R::exhaustive_shape,
           {ExhaustiveShape::kOneCall, ExhaustiveShape::kTwoCalls,
            ExhaustiveShape::kTwoReaders},
           ExhaustiveShapeName)
          .OmitDefault(),
      Enum("exhaustive_reduction", &R::exhaustive_reduction,
           {Reduction::kNone, Reduction::kPor}, ReductionName)
          .OmitDefault(),
      Bool("exhaustive_rollover", &R::exhaustive_rollover).OmitDefault(),
  };
  return *fields;
}

const Fields<ReplaySpec>& ReplayFields() {
  using R = ReplaySpec;
  static const auto* fields = new Fields<R>{
      Int("reader", &R::reader, 0, 1000000),
      Int("call", &R::call, 0, INT64_MAX),
      String("property", &R::property).Required(),
      // A choice at each choice point: 0 or more.
      IntList("decisions", &R::decisions, 0, INT32_MAX).OmitDefault(),
      Bool("accept_known", &R::accept_known).OmitDefault(),
  };
  return *fields;
}

const Fields<VariantSource>& VariantSourceFields() {
  using V = VariantSource;
  static const auto* fields = new Fields<V>{
      String("plugin", &V::plugin).OmitDefault(),
      String("plugin_sha256", &V::plugin_sha256).OmitDefault(),
      String("kernel_tree", &V::kernel_tree).OmitDefault(),
      toml_table::StringList("patches", &V::patches).OmitDefault(),
      String("tree_code_sha256", &V::tree_code_sha256).OmitDefault(),
      String("vdso_image", &V::vdso_image).OmitDefault(),
      String("vdso_image_sha256", &V::vdso_image_sha256).OmitDefault(),
      String("origin", &V::origin).OmitDefault(),
      String("kernel_time", &V::kernel_time).OmitDefault(),
      toml_table::StringList("kernel_time_patches", &V::kernel_time_patches)
          .OmitDefault(),
      Duration("call_timeout", &V::call_timeout_ns).OmitDefault(),
  };
  return *fields;
}

}  // namespace

const Fields<Scenario>& ScenarioFields() {
  using S = Scenario;
  static const auto* fields = new Fields<S>{
      String("name", &S::name),
      String("description", &S::description).OmitDefault(),
      Section("machine", &S::machine, MachineFields()),
      Section("kernel", &S::kernel, KernelFields()),
      Section("timing", &S::timing, TimingFields()),
      Tables("event", &S::events, EventFields()),
      Tables("reader", &S::readers, ReaderFields()),
      Section("faults", &S::faults, FaultFields()),
      Section("checks", &S::checks, CheckFields()),
      Section("run", &S::run, RunFields()),
      OptionalSection("replay", &S::replay, &ReplaySpec::present,
                      ReplayFields()),
      OptionalSection("variant", &S::variant, &VariantSource::present,
                      VariantSourceFields()),
  };
  return *fields;
}

}  // namespace vdsolab::sim
