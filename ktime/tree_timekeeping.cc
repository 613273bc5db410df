#include "ktime/tree_timekeeping.h"

#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "ktime/conform.h"
#include "ktime/internal/compare.h"
#include "variants/plugin/call_guard.h"

namespace vdsolab::ktime {
namespace {

namespace tk = ::vdsolab::timekeeper;

class TreeTimekeeping final : public variants::ForeignTimekeeping {
 public:
  explicit TreeTimekeeping(const KernelTime* kt) : kt_(kt) {}

  std::string Boot(const variants::ClocksourceRegistration& cs, uint64_t now,
                   const Timespec64& wall, const Timespec64& boot,
                   const tk::Timekeeping& model) override {
    vdsolab_kt_clock c = internal::ToKernelClock(cs);
    vdsolab_kt_clock_fields f{};
    int registered = 0;
    Contained("timekeeping_init", [&](const vdsolab_kt_api& api) {
      api.reset();
      registered = api.register_clock(&c, &f);
      if (registered == 0) {
        api.init(now, wall.tv_sec, wall.tv_nsec, boot.tv_sec, boot.tv_nsec);
      }
    });
    if (!fault_.empty()) return fault_;
    if (registered != 0) {
      return "__clocksource_register_scale() failed in the tree";
    }
    if (std::string d = internal::CompareRegistration(model.clocksource(), f);
        !d.empty()) {
      return d;
    }
    return Compare(model);
  }

  void Tick(uint64_t now) override {
    Contained("update_wall_time",
              [&](const vdsolab_kt_api& api) { api.tick(now); });
  }

  std::string Adjtimex(const tk::Timex& request, uint64_t now, int model_ret,
                       const tk::Timex& model_readback) override {
    vdsolab_kt_timex t = internal::ToKernel(request);
    int ret = 0;
    Contained("do_adjtimex",
              [&](const vdsolab_kt_api& api) { ret = api.adjtimex(&t, now); });
    if (!fault_.empty()) return fault_;
    return internal::CompareTimex(model_ret, model_readback, ret, t);
  }

  std::string SetTimeOfDay(const Timespec64& ts, uint64_t now,
                           int model_ret) override {
    int ret = 0;
    Contained("do_settimeofday64", [&](const vdsolab_kt_api& api) {
      ret = api.settimeofday(ts.tv_sec, ts.tv_nsec, now);
    });
    if (!fault_.empty()) return fault_;
    internal::Diff d;
    d.Field("settimeofday return", model_ret, ret);
    return d.first();
  }

  void Suspend(uint64_t now, const Timespec64& rtc) override {
    Contained("timekeeping_suspend", [&](const vdsolab_kt_api& api) {
      api.suspend(now, rtc.tv_sec, rtc.tv_nsec);
    });
  }
  void Resume(uint64_t now, const Timespec64& rtc) override {
    Contained("timekeeping_resume", [&](const vdsolab_kt_api& api) {
      api.resume(now, rtc.tv_sec, rtc.tv_nsec);
    });
  }
  void InjectSleeptime(const Timespec64& delta, uint64_t now) override {
    Contained("timekeeping_inject_sleeptime64", [&](const vdsolab_kt_api& api) {
      api.inject_sleeptime(delta.tv_sec, delta.tv_nsec, now);
    });
  }

  std::vector<vdso::VvarUpdate> TakeUpdates() override {
    unsigned n = 0, updates = 0, overflow = 0;
    const vdsolab_kt_store* s = nullptr;
    Contained("take_stores", [&](const vdsolab_kt_api& api) {
      s = api.take_stores(&n, &updates, &overflow);
    });
    if (s == nullptr) return {};
    if (overflow != 0) lost_stores_ = true;
    // Each store carries whether a store barrier ran before it (the
    // tree's smp_wmb(), through KCSAN's instrumentation).
    std::vector<vdso::VvarUpdate> out(updates);
    for (unsigned i = 0; i < n; ++i) {
      // A store outside update_vsyscall() (update_vsyscall_tz()) lands
      // with the next update, or alone.
      const unsigned u = s[i].update == 0 ? 0 : s[i].update - 1;
      if (u >= out.size()) out.resize(u + 1);
      out[u].stores.push_back(
          vdso::VvarStore{internal::kVdsoDataOffset + s[i].offset,
                          static_cast<uint8_t>(s[i].size), s[i].value,
                          (s[i].flags & VDSOLAB_KT_WMB_BEFORE) != 0});
    }
    return out;
  }

  bool Faulted() const override { return !fault_.empty(); }

  std::string Compare(const tk::Timekeeping& model) override {
    if (!fault_.empty()) return fault_;
    if (lost_stores_) {
      return "the tree's update_vsyscall() made more stores than the log "
             "holds (4096 per operation)";
    }
    std::string d;
    Contained("read_state", [&](const vdsolab_kt_api&) {
      d = internal::CompareState(model, *kt_);
    });
    if (!fault_.empty()) return fault_;
    if (!d.empty() || model.suspended()) return d;
    // The syscall clocks (ktime_get_real_ts64(), ...) at cycle_last and
    // far past it (the readers WARN_ON(timekeeping_suspended)).
    const tk::TkReadBase& tkr = model.timekeeper().tkr_mono;
    for (const uint64_t counter :
         internal::ReaderCounters(model.timekeeper(), tkr.cycle_last,
                                  tkr.cycle_last ^ tkr.xtime_nsec)) {
      d = internal::CompareClocks(model, counter,
                                  [&](const char* what, auto&& fn) {
                                    Contained(what, fn);
                                    return fault_;
                                  });
      if (!d.empty()) return d;
    }
    return "";
  }

 private:
  // Runs a call into the tree's code contained (a crash, a WARN's ud2 or a
  // spin is a finding of the run, not the end of vdsolab); after a fault
  // the tree is not called again until the next Boot() resets it.
  template <class Fn>
  void Contained(const char* what, Fn&& fn) {
    if (!fault_.empty()) return;
    const vdsolab_kt_api& api = kt_->api();
    if (std::optional<vdso::CallFault> f = variants::RunContained(
            variants::call_guard_internal::ThisThread(), [&] { fn(api); })) {
      fault_ = kt_->DescribeFault(what, *f);
    }
  }

  const KernelTime* kt_;
  bool lost_stores_ = false;
  std::string fault_;
};

}  // namespace

absl::StatusOr<variants::ForeignTimekeepingSource> TreeTimekeepingSource(
    const BuildOptions& options, BuiltKernelTime* built) {
  absl::StatusOr<BuiltKernelTime> b = BuildKernelTime(options);
  if (!b.ok()) return b.status();
  absl::StatusOr<KernelTime> kt = KernelTime::Load(b->so_path);
  if (!kt.ok()) return kt.status();
  std::string profile_note;
  absl::StatusOr<TreeProfile> tree_profile =
      ProfileForBuild(options, *kt, b->version, &profile_note);
  if (!tree_profile.ok()) return tree_profile.status();
  const tk::TimekeeperProfile* profile = &tree_profile->profile;
  if (profile->era != "5.3" && profile->era != "6.1" &&
      profile->era != "6.10") {
    // 6.13 moved the data page; 6.15 made it struct vdso_time_data.
    return absl::InvalidArgumentError(absl::StrFormat(
        "Linux %s: the tree writer maps x86's _vdso_data at vvar+128 "
        "(before 6.13) only (docs/ktime.md)",
        b->version));
  }
  // The objects built so far, by CONFIG_HZ; loaded for the process's life
  // (a variant keeps pointing at them).
  struct Builds {
    BuildOptions options;
    std::map<int, std::unique_ptr<KernelTime>> by_hz;
  };
  auto builds = std::make_shared<Builds>();
  builds->options = options;
  builds->by_hz[options.hz] = std::make_unique<KernelTime>(*kt);
  variants::ForeignTimekeepingSource source;
  source.name = b->name;
  source.era = profile->era;
  source.backports = tree_profile->backports;
  source.note = profile_note;
  source.layout_variant = internal::WriterEra(*profile);
  source.make = [builds](int hz)
      -> absl::StatusOr<std::unique_ptr<variants::ForeignTimekeeping>> {
    auto it = builds->by_hz.find(hz);
    if (it == builds->by_hz.end()) {
      BuildOptions o = builds->options;
      o.hz = hz;
      absl::StatusOr<BuiltKernelTime> other = BuildKernelTime(o);
      if (!other.ok()) return other.status();
      absl::StatusOr<KernelTime> loaded = KernelTime::Load(other->so_path);
      if (!loaded.ok()) return loaded.status();
      it = builds->by_hz.emplace(hz, std::make_unique<KernelTime>(*loaded))
               .first;
    }
    return std::make_unique<TreeTimekeeping>(it->second.get());
  };
  *built = *b;
  return source;
}

}  // namespace vdsolab::ktime
