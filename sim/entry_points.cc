#include "sim/entry_points.h"

#include <climits>
#include <optional>

#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "timekeeper/posix_clocks.h"
#include "vdso/access.h"

namespace vdsolab::sim {
namespace {

// A call on a page no writer is changing: the counter reads `counter`, a
// retry is refused (a settled page never needs one) and noted, and the
// system calls are the model's on the state the page holds, at the counter
// a syscall on the same CPU reads.
class SettledPageHooks final : public vdso::AccessHooks {
 public:
  SettledPageHooks(const timekeeper::Timekeeper& tk,
                   const timekeeper::SyscallContext& sc, uint64_t counter,
                   uint32_t hrtimer_res, int hz)
      : tk_(tk),
        sc_(sc),
        counter_(counter),
        hrtimer_res_(hrtimer_res),
        hz_(hz) {}

  void BeforeLoad(uint32_t /*offset*/, uint32_t /*size*/) override {}
  uint64_t ReadCounter(vdso::CounterRead /*kind*/) override { return counter_; }
  // docs/plugins.md: "call once per loop iteration". A reader that asks
  // before its first pass may have it; another pass on a page no store
  // changes is a retry, which the probe reports.
  bool MayRetry() override {
    if (!asked_) {
      asked_ = true;
      return true;
    }
    retried = true;
    return false;
  }
  ClockResult Fallback(ClockId clock) override {
    fell_back = true;
    return timekeeper::SysClockGettime(tk_, clock, sc_);
  }
  GtodResult GettimeofdayFallback() override {
    fell_back = true;
    return timekeeper::SysGettimeofday(tk_, sc_);
  }
  ClockResult ClockGetresFallback(ClockId clock) override {
    fell_back = true;
    return timekeeper::SysClockGetres(clock, sc_, hrtimer_res_, hz_);
  }
  void OnFault(const vdso::CallFault& f) override { fault = f; }

  bool retried = false;
  bool fell_back = false;
  std::optional<vdso::CallFault> fault;

 private:
  const timekeeper::Timekeeper& tk_;
  const timekeeper::SyscallContext& sc_;
  uint64_t counter_;
  uint32_t hrtimer_res_;
  int hz_;
  bool asked_ = false;  // MayRetry() was called once.
};

// The verdict on a call that answered nothing: it crashed or spun (the
// hooks saw the fault) or asked to retry.
EntryPointVerdict NoAnswer(const std::string& call,
                           const SettledPageHooks& hooks,
                           const std::string& where) {
  EntryPointVerdict v;
  v.ok = false;
  v.detail = where;
  if (hooks.fault) {
    v.watchdog_stopped = hooks.fault->kind == vdso::CallFault::Kind::kSpin;
    v.property = v.watchdog_stopped ? Property::kLivelock : Property::kCrash;
    v.why = absl::StrFormat("the vDSO's %s %s", call,
                            vdso::DescribeFault(*hooks.fault));
  } else if (hooks.retried) {
    v.property = Property::kLivelock;
    // A kernel tree's glue asks may_retry() after a retry check that failed
    // and for every load past its budget, so a loop that waits on the wrong
    // condition (`seq & 2`) lands here too, though it never retried.
    v.why = absl::StrFormat(
        "the vDSO's %s did not finish on a page no writer was changing: "
        "it asked to retry, or kept loading the page, with nothing "
        "changing it (a loop that would not end)",
        call);
  } else {
    v.why = absl::StrFormat(
        "the vDSO's %s answered VDSOLAB_ABANDONED, though no retry was "
        "refused, or loaded outside the vvar area",
        call);
  }
  return v;
}

// `against`: what the answer should equal ("the model's system call").
EntryPointVerdict Compare(bool equal, const std::string& call,
                          const std::string& against, const std::string& got,
                          const std::string& want, const std::string& where) {
  EntryPointVerdict v;
  if (equal) return v;
  v.ok = false;
  v.why = absl::StrFormat("the vDSO's %s differs from %s on a settled page",
                          call, against);
  v.detail = absl::StrFormat("%s answered %s, expected %s; %s", call, got, want,
                             where);
  return v;
}

std::string ClockIdText(ClockId id) {
  if (id >= 0 && id < kMaxClocks) {
    return absl::StrFormat("%d (%s)", id, ClockShortName(id));
  }
  return absl::StrFormat("%d", id);
}

}  // namespace

variants::CounterFacts CounterFactsOf(const MachineSpec& machine) {
  return variants::CounterFacts{
      machine.clocksource == "tsc" || machine.clocksource == "kvm-clock",
      machine.width_bits == 64};
}

EntryPointProbe::EntryPointProbe(const Scenario& scenario,
                                 const variants::Variant& variant,
                                 variants::SimReader* reader,
                                 const Machine* machine, const Writer* writer)
    : scenario_(scenario),
      variant_(variant),
      reader_(reader),
      machine_(machine),
      writer_(writer),
      offsets_{scenario.kernel.timens_monotonic,
               scenario.kernel.timens_boottime},
      facts_(CounterFactsOf(scenario.machine)),
      oracle_(variant, writer->publish_context(), facts_),
      hz_(reader->config_hz() != 0 ? reader->config_hz() : scenario.kernel.hz) {
  using variants::EntryPoint;
  for (EntryPoint e : {EntryPoint::kGettimeofday, EntryPoint::kTime,
                       EntryPoint::kClockGetres}) {
    probing_[static_cast<size_t>(e)] = reader->has_entry_point(e);
  }
  // kvm-clock: the entry points' pvclock arithmetic is clock_gettime()'s.
  enabled_ =
      reader->has_other_entry_points() && writer->hypervisor() == nullptr;
  // Every id a vDSO answers itself, the ids around them and the extremes,
  // which it passes to the syscall.
  getres_ids_ = {INT_MIN, INT_MAX, -29, -9, 24, 31, 32, 64};
  for (ClockId id = -8; id <= kClockAuxLast; ++id) getres_ids_.push_back(id);
  // Not a variant's own clock (a plugin's may be 32 or 64): the oracle
  // check samples those, each as what it is declared (sim/oracle_run.cc).
  std::erase_if(getres_ids_, [&variant](ClockId id) {
    return variants::FindOwnClock(variant, id) != nullptr;
  });
}

bool EntryPointProbe::NewerUpdateLanded(uint64_t t_ns) const {
  const UpdateRecord& u = writer_->LatestStartedAt(t_ns);
  // Stores still pending at t belong to updates not yet ended then.
  return u.id != probed_update_ && u.end_ns <= t_ns;
}

void EntryPointProbe::Add(variants::EntryPoint e, bool timens,
                          EntryPointVerdict v,
                          std::vector<EntryPointVerdict>* out) {
  if (v.property == Property::kExact && !scenario_.checks.exact) return;
  if (!v.ok) {
    // The first wrong answer of each entry point in each view is kept
    // with its detail; the rest are counted (a broken entry point would
    // otherwise fill the run's list of violations at every update).
    bool& reported = reported_[static_cast<size_t>(e)][timens ? 1 : 0];
    v.keep = !reported;
    reported = true;
    // An entry point that crashed or spun is not probed again: each spin
    // costs the watchdog's bound.
    if (v.property != Property::kExact)
      probing_[static_cast<size_t>(e)] = false;
  }
  out->push_back(std::move(v));
}

std::vector<EntryPointVerdict> EntryPointProbe::Run(const uint8_t* page,
                                                    const uint8_t* timens_view,
                                                    size_t view_bytes, int cpu,
                                                    uint64_t t_ns) {
  using variants::EntryPoint;
  const UpdateRecord& u = writer_->LatestStartedAt(t_ns);
  probed_update_ = u.id;
  const timekeeper::Timekeeper& tk = u.tk;
  const uint64_t counter = machine_->Counter(cpu, t_ns);
  const bool timens = timens_view != nullptr;
  timekeeper::SyscallContext sc;
  sc.cycles = writer_->SyscallCounter(u, cpu, t_ns);
  sc.timens = timens ? &offsets_ : nullptr;
  sc.coarse_pre615 = !variant_.semantics.coarse_from_coarse_nsec;
  sc.aux_timekeepers = writer_->AuxStatesAt(t_ns);
  sc.has_rtc = scenario_.kernel.has_rtc;
  const uint32_t hrtimer_res = writer_->publish_context().hrtimer_res;
  const std::string where =
      absl::StrFormat("update %d's page, counter %#x on CPU %d at %.9f s%s",
                      u.id, counter, cpu, static_cast<double>(t_ns) / 1e9,
                      timens ? ", in the time namespace's view" : "");
  const uint8_t* view = timens ? timens_view : page;
  auto hooked = [&](SettledPageHooks* hooks) {
    return timens ? vdso::HookedAccess(page, hooks, timens_view, view_bytes)
                  : vdso::HookedAccess(page, hooks);
  };
  auto probing = [&](EntryPoint e) { return probing_[static_cast<size_t>(e)]; };
  std::vector<EntryPointVerdict> out;

  if (probing(EntryPoint::kGettimeofday)) {  // gettimeofday(tv, tz)
    constexpr EntryPoint e = EntryPoint::kGettimeofday;
    SettledPageHooks hooks(tk, sc, counter, hrtimer_res, hz_);
    vdso::HookedAccess access = hooked(&hooks);
    const std::optional<GtodResult> got =
        reader_->Gettimeofday(access, view, variants::GtodArgs::kBoth);
    if (!got) {
      Add(e, timens, NoAnswer("gettimeofday()", hooks, where), &out);
    } else {
      // What a correct reader of the era answers for CLOCK_REALTIME at this
      // counter, in microseconds ((u32)tv_nsec / NSEC_PER_USEC, as
      // __cvdso_gettimeofday_data()); where the era's arithmetic differs
      // by design (the pre-6.10 multiply wrap), its value is right too.
      // Where the reader fell back, the model's system call.
      const ClockResult rt = oracle_.Expected(tk, kClockRealtime, counter);
      GtodResult want = !hooks.fell_back && rt.ret == 0
                            ? GtodFromRealtime(rt.ts)
                            : timekeeper::SysGettimeofday(tk, sc);
      if (!hooks.fell_back && !(*got == want)) {
        const std::optional<ClockResult> era =
            oracle_.EraValue(tk, kClockRealtime, counter);
        if (era && era->ret == 0 && *got == GtodFromRealtime(era->ts)) {
          want = *got;
        }
      }
      // A counter the x86 vDSO's arithmetic does not assume (narrower than
      // 64 bits, or not the TSC): the run's calls excuse what it does to
      // CLOCK_REALTIME as a broken precondition, which a probe cannot
      // tell; there the reader's own clock_gettime(CLOCK_REALTIME) on the
      // same page and counter is the reference.
      if (!hooks.fell_back && !(*got == want) && !(facts_.tsc && facts_.wide)) {
        SettledPageHooks ref_hooks(tk, sc, counter, hrtimer_res, hz_);
        vdso::HookedAccess ref_access = hooked(&ref_hooks);
        const std::optional<ClockResult> own =
            reader_->Call(ref_access, view, kClockRealtime);
        if (own && own->ret == 0 && *got == GtodFromRealtime(own->ts)) {
          want = *got;
        }
      }
      Add(e, timens,
          Compare(*got == want, "gettimeofday()",
                  hooks.fell_back
                      ? "the model's system call"
                      : "the model's CLOCK_REALTIME in microseconds",
                  FormatGtodResult(*got), FormatGtodResult(want),
                  where + (hooks.fell_back ? " (it called the syscall)" : "")),
          &out);
      // gettimeofday(&tv, NULL), the common call, and gettimeofday(NULL,
      // &tz), for the timezone alone: the same answer through the pointer
      // given, and no store through the NULL (a patch that drops either
      // NULL test crashes there).
      for (const variants::GtodArgs form :
           {variants::GtodArgs::kTvOnly, variants::GtodArgs::kTzOnly}) {
        if (!probing(e)) break;  // It crashed or spun.
        const bool tv = form == variants::GtodArgs::kTvOnly;
        const char* call =
            tv ? "gettimeofday(tv, NULL)" : "gettimeofday(NULL, tz)";
        SettledPageHooks form_hooks(tk, sc, counter, hrtimer_res, hz_);
        vdso::HookedAccess form_access = hooked(&form_hooks);
        const std::optional<GtodResult> got_form =
            reader_->Gettimeofday(form_access, view, form);
        GtodResult want_form = want;
        if (tv) {
          want_form.tz_minuteswest = want_form.tz_dsttime = 0;
        } else {
          want_form.tv_sec = want_form.tv_usec = 0;
        }
        if (!got_form) {
          Add(e, timens, NoAnswer(call, form_hooks, where), &out);
        } else {
          Add(e, timens,
              Compare(*got_form == want_form, call, "gettimeofday(tv, tz)",
                      FormatGtodResult(*got_form), FormatGtodResult(want_form),
                      where),
              &out);
        }
      }
    }
  }
  if (probing(EntryPoint::kTime)) {  // time(&t)
    constexpr EntryPoint e = EntryPoint::kTime;
    SettledPageHooks hooks(tk, sc, counter, hrtimer_res, hz_);
    vdso::HookedAccess access = hooked(&hooks);
    const std::optional<variants::SimReader::TimeResult> got =
        reader_->Time(access, view, /*null_arg=*/false);
    const int64_t want = timekeeper::SysTime(tk);
    if (!got) {
      Add(e, timens, NoAnswer("time()", hooks, where), &out);
    } else {
      Add(e, timens,
          Compare(got->ret == want && got->stored == want, "time()",
                  "the model's system call",
                  absl::StrFormat("%d (stored %d)", got->ret, got->stored),
                  absl::StrFormat("%d", want), where),
          &out);
    }
    // time(NULL), the common call: the same answer, no store.
    if (probing(e)) {
      SettledPageHooks null_hooks(tk, sc, counter, hrtimer_res, hz_);
      vdso::HookedAccess null_access = hooked(&null_hooks);
      const std::optional<variants::SimReader::TimeResult> got_null =
          reader_->Time(null_access, view, /*null_arg=*/true);
      if (!got_null) {
        Add(e, timens, NoAnswer("time(NULL)", null_hooks, where), &out);
      } else {
        Add(e, timens,
            Compare(got_null->ret == want, "time(NULL)",
                    "the model's system call",
                    absl::StrFormat("%d", got_null->ret),
                    absl::StrFormat("%d", want), where),
            &out);
      }
    }
  }
  if (probing(EntryPoint::kClockGetres)) {
    // clock_getres(id): every id on a view's first probe; later, one in
    // turn (its answer depends on no state an update changes).
    std::vector<ClockId> ids;
    bool& all_done = getres_all_done_[timens ? 1 : 0];
    if (!all_done) {
      ids = getres_ids_;
      all_done = true;
    } else {
      ids = {getres_ids_[getres_next_]};
      getres_next_ = (getres_next_ + 1) % getres_ids_.size();
    }
    // Each id with a result pointer, then with NULL (POSIX allows it; the
    // answer is the return value alone).
    for (ClockId id : ids) {
      const ClockResult want =
          timekeeper::SysClockGetres(id, sc, hrtimer_res, hz_);
      for (const bool null_arg : {false, true}) {
        // It crashed or spun.
        if (!probing(EntryPoint::kClockGetres)) break;
        SettledPageHooks hooks(tk, sc, counter, hrtimer_res, hz_);
        vdso::HookedAccess access = hooked(&hooks);
        const std::string call = absl::StrFormat(
            "clock_getres(%s%s)", ClockIdText(id), null_arg ? ", NULL" : "");
        const std::optional<ClockResult> got =
            reader_->ClockGetres(access, view, id, null_arg);
        if (!got) {
          Add(EntryPoint::kClockGetres, timens, NoAnswer(call, hooks, where),
              &out);
          continue;
        }
        const ClockResult want_here = null_arg && want.ret == 0
                                          ? ClockResult::Ok(Timespec64{0, 0})
                                          : want;
        Add(EntryPoint::kClockGetres, timens,
            Compare(*got == want_here, call, "the model's system call",
                    null_arg ? absl::StrFormat("%d", got->ret)
                             : FormatClockResult(*got),
                    null_arg ? absl::StrFormat("%d", want_here.ret)
                             : FormatClockResult(want_here),
                    where),
            &out);
      }
    }
  }
  return out;
}

}  // namespace vdsolab::sim
