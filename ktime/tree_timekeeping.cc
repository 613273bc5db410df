#include "ktime/tree_timekeeping.h"

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "ktime/conform.h"
#include "ktime/internal/compare.h"

namespace vdsolab::ktime {
namespace {

namespace tk = ::vdsolab::timekeeper;

class TreeTimekeeping final : public variants::ForeignTimekeeping {
 public:
  explicit TreeTimekeeping(const KernelTime* kt) : kt_(kt) {}

  std::string Boot(const variants::ClocksourceRegistration& cs, uint64_t now,
                   const Timespec64& wall, const Timespec64& boot,
                   const tk::Timekeeping& model) override {
    const vdsolab_kt_api& api = kt_->api();
    api.reset();
    vdsolab_kt_clock c{};
    c.mask = cs.mask;
    c.scale = cs.scale;
    c.freq = cs.freq;
    c.vdso_clock_mode = cs.vdso_clock_mode;
    c.rating = cs.rating;
    c.suspend_nonstop = cs.suspend_nonstop ? 1 : 0;
    vdsolab_kt_clock_fields f{};
    if (api.register_clock(&c, &f) != 0) {
      return "__clocksource_register_scale() failed in the tree";
    }
    api.init(now, wall.tv_sec, wall.tv_nsec, boot.tv_sec, boot.tv_nsec);
    const tk::Clocksource& m = model.clocksource();
    internal::Diff d;
    d.Field("clocksource.mult", m.mult, f.mult);
    d.Field("clocksource.shift", m.shift, f.shift);
    d.Field("clocksource.maxadj", m.maxadj, f.maxadj);
    d.Field("clocksource.max_cycles", m.max_cycles, f.max_cycles);
    d.Field("clocksource.max_idle_ns", m.max_idle_ns, f.max_idle_ns);
    if (!d.first().empty()) return d.first();
    return Compare(model);
  }

  void Tick(uint64_t now) override { kt_->api().tick(now); }

  std::string Adjtimex(const tk::Timex& request, uint64_t now, int model_ret,
                       const tk::Timex& model_readback) override {
    vdsolab_kt_timex t = internal::ToKernel(request);
    const int ret = kt_->api().adjtimex(&t, now);
    return internal::CompareTimex(model_ret, model_readback, ret, t);
  }

  std::string SetTimeOfDay(const Timespec64& ts, uint64_t now,
                           int model_ret) override {
    const int ret = kt_->api().settimeofday(ts.tv_sec, ts.tv_nsec, now);
    internal::Diff d;
    d.Field("settimeofday return", model_ret, ret);
    return d.first();
  }

  void Suspend(uint64_t now, const Timespec64& rtc) override {
    kt_->api().suspend(now, rtc.tv_sec, rtc.tv_nsec);
  }
  void Resume(uint64_t now, const Timespec64& rtc) override {
    kt_->api().resume(now, rtc.tv_sec, rtc.tv_nsec);
  }
  void InjectSleeptime(const Timespec64& delta, uint64_t now) override {
    kt_->api().inject_sleeptime(delta.tv_sec, delta.tv_nsec, now);
  }

  std::vector<vdso::VvarUpdate> TakeUpdates() override {
    unsigned n = 0, updates = 0, overflow = 0;
    const vdsolab_kt_store* s = kt_->api().take_stores(&n, &updates, &overflow);
    if (overflow != 0) lost_stores_ = true;
    std::vector<vdso::VvarUpdate> out(updates);
    for (unsigned i = 0; i < n; ++i) {
      // A store outside update_vsyscall() (update_vsyscall_tz()) lands
      // with the next update, or alone.
      const unsigned u = s[i].update == 0 ? 0 : s[i].update - 1;
      if (u >= out.size()) out.resize(u + 1);
      out[u].stores.push_back(
          vdso::VvarStore{internal::kVdsoDataOffset + s[i].offset,
                          static_cast<uint8_t>(s[i].size), s[i].value, false});
    }
    return out;
  }

  std::string Compare(const tk::Timekeeping& model) override {
    if (lost_stores_) {
      return "the tree's update_vsyscall() made more stores than the log "
             "holds (4096 per operation)";
    }
    return internal::CompareState(model, *kt_);
  }

 private:
  const KernelTime* kt_;
  bool lost_stores_ = false;
};

}  // namespace

absl::StatusOr<variants::ForeignTimekeepingSource> TreeTimekeepingSource(
    const BuildOptions& options, BuiltKernelTime* built) {
  absl::StatusOr<BuiltKernelTime> b = BuildKernelTime(options);
  if (!b.ok()) return b.status();
  absl::StatusOr<KernelTime> kt = KernelTime::Load(b->so_path);
  if (!kt.ok()) return kt.status();
  absl::StatusOr<TreeProfile> tree_profile =
      ProfileForKernelTime(*kt, b->version);
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
