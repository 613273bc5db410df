// File: sim/writer.h
//
// The kernel's side of a simulation: ticks at HZ (with jitter, skipped in
// NO_HZ idle, VM pauses and suspend), the scenario's events (adjtimex() in
// any mode, settime, ADJ_SETOFFSET, TAI, leap seconds, suspend/resume,
// clocksource changes, aux clocks), each run through the timekeeper model at
// the timekeeping CPU's counter, and each published update turned into
// stores with the true times at which they become visible. Generated lazily
// in time order; independent of the readers (readers cannot delay the
// writer), so any reader can be replayed against it. Files: writer.cc (the
// operation loop and publishing), writer_events.cc (what each event does).

#ifndef VDSOLAB_SIM_WRITER_H_
#define VDSOLAB_SIM_WRITER_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sim/counter_sources.h"
#include "sim/hypervisor.h"
#include "sim/machine.h"
#include "sim/scenario.h"
#include "timekeeper/readers.h"
#include "timekeeper/timekeeper.h"
#include "timekeeper/timekeeping.h"
#include "variants/variant.h"
#include "vdso/vvar_page.h"

namespace vdsolab::sim {

// A writer store with the true time it becomes visible to readers.
struct TimedStore {
  uint64_t visible_ns = 0;
  uint32_t update = 0;  // Which update (1-based) it belongs to.
  vdso::VvarStore store;
};

// How a trace names the update a store belongs to: "update 7" (an aux
// clock's by its raw id), "pvclock rewrite 4".
std::string UpdateLabel(uint32_t id);

// One published update: the timekeeper state it publishes (seq 2 * id).
struct UpdateRecord {
  uint32_t id = 0;
  uint64_t start_ns = 0;  // The writer read the counter here.
  uint64_t end_ns = 0;    // Its last store became visible here.
  std::string cause;      // "tick", "adjtimex_frequency", ...
  uint64_t counter = 0;   // What the timekeeper read.
  uint32_t clock_was_set_seq = 0;
  // MONOTONIC's rate against MONOTONIC_RAW, as a fraction: per interval of
  // cycle_interval counter cycles the timekeeper adds NTP's tick length
  // minus xtime_remainder, where RAW adds the nominal interval minus it
  // (both in shifted ns). And how many adjtimex()/settime operations came
  // before (a new rate starts with each).
  uint64_t mono_rate_num = 0;
  uint64_t mono_rate_den = 1;
  uint32_t ntp_generation = 0;
  // The 6.15+ anomaly (docs/findings.md): xtime_sec moved since the last
  // accumulation while coarse_nsec did not, so the published coarse time
  // is off by one second.
  bool coarse_off_by_second = false;
  // How many operations so far found the counter had run past
  // max_raw_delta since the last accumulation (whole wraps lost).
  uint32_t wrap_losses = 0;
  // The timekeeping CPU's unwrapped counter when it read the value now in
  // cycle_last (CounterSources::Ideal units): how far the counter has run
  // since, wraps included.
  __int128 cycle_last_ideal = 0;
  // The same unwrapped counter when the writer read it (start_ns): kept,
  // since kvm-clock's value at an old time needs a pvti state the
  // hypervisor may have forgotten by the time it is asked.
  __int128 start_ideal = 0;
  // The counter the timekeeper runs on (a clocksource change moves it).
  CounterSource source = CounterSource::kMachine;
  // Where MONOTONIC_RAW last started over (boot, a resume, a clocksource
  // change): RAW at counter c is exactly raw_epoch_sec s plus
  // ((c - raw_epoch_counter) * mult + raw_epoch_nsec) >> shift.
  uint64_t raw_epoch_counter = 0;
  uint64_t raw_epoch_sec = 0;
  uint64_t raw_epoch_nsec = 0;  // Shifted ns.
  // raw_epoch_counter unwrapped (cycle_last_ideal's units), and wrap_losses
  // when the epoch began: RAW's exact value needs no wraps lost since.
  __int128 raw_epoch_ideal = 0;
  uint32_t raw_epoch_wrap_losses = 0;
  timekeeper::Timekeeper tk;
};

// One publication of an aux clock's record (6.17+, upstream layout): the
// aux timekeeper it published, seq 2 * number on that record.
struct AuxRecord {
  int aux = 0;
  uint32_t number = 0;  // 1-based per aux clock; 0 = never published.
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  timekeeper::Timekeeper tk;
};

// What a syscall event returned (adjtimex() and the other events that
// return a value), and how it compared with the scenario's expectations.
struct EventOutcome {
  size_t event = 0;  // Index into Scenario::events.
  uint64_t at_ns = 0;
  std::string what;  // "adjtimex(modes 0x2) on REALTIME", ...
  int64_t ret = 0;
  std::optional<timekeeper::Timex> readback;
  std::vector<std::string> mismatches;  // Expectations not met.
};

// update_vsyscall() for the variant under test: each timekeeper update
// becomes the store list of the variant's writer (its page layout).
// An aux clock's update waits with its clock (-1 for the core).
struct BuiltUpdate {
  int aux = -1;
  vdso::VvarUpdate update;
  timekeeper::Timekeeper tk;  // An aux update's timekeeper.
};
class VariantPublisher : public timekeeper::VsyscallSink {
 public:
  VariantPublisher(const variants::Variant* variant,
                   variants::PublishContext ctx)
      : variant_(variant), ctx_(ctx) {}
  void UpdateVsyscall(const timekeeper::Timekeeper& tk) override;
  // vdso_time_update_aux(): only variants with aux records publish it.
  void UpdateAux(const timekeeper::Timekeeper& tk) override;
  std::deque<BuiltUpdate>& pending() { return pending_; }
  const variants::PublishContext& context() const { return ctx_; }

 private:
  const variants::Variant* variant_;
  variants::PublishContext ctx_;
  uint32_t seq_ = 0;  // Every seq word's value between updates.
  uint32_t aux_seq_[kMaxAuxClocks] = {};
  std::deque<BuiltUpdate> pending_;
};

// What the writer publishes besides the timekeeper, from the scenario.
variants::PublishContext MakePublishContext(const Scenario& scenario,
                                            uint64_t boot_counter);

class Writer {
 public:
  // The initial update (timekeeping_init) is applied to `page` at time 0,
  // in the layout of `variant`'s writer.
  static absl::StatusOr<std::unique_ptr<Writer>> Create(
      const Scenario& scenario, const Machine* machine, vdso::VvarPage* page,
      const variants::Variant* variant);
  // Not copied: newest_ points into updates_.
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Runs every writer operation that starts at or before `t_ns`.
  void AdvanceTo(uint64_t t_ns);

  // Stores not yet committed to the page, in visibility order. Valid until
  // the next AdvanceTo() or PopPending().
  absl::Span<const TimedStore> pending() const {
    return absl::MakeConstSpan(pending_).subspan(pending_head_);
  }
  // AdvanceTo(t) does nothing for t before this.
  uint64_t next_operation_ns() const { return next_operation_ns_; }
  // Drops the first n pending stores (committed by the caller).
  void PopPending(size_t n);

  // The update with this id (1 = timekeeping_init), while retained.
  const UpdateRecord* Update(uint32_t id) const;
  uint32_t latest_update() const { return next_update_id_ - 1; }
  // The newest update started at or before t (what a syscall at t waits
  // for and then reads). Inline for the common case, the newest update
  // (every checked call asks, mostly about a time after it started).
  const UpdateRecord& LatestStartedAt(uint64_t t_ns) const {
    if (newest_->start_ns <= t_ns) return *newest_;
    return LatestStartedAtBefore(t_ns);
  }
  // Forgets updates that ended before t, keeping the last one of them.
  void Retire(uint64_t t_ns);
  // How many updates Retire() has forgotten: a pointer Update() returned
  // stays valid while this does not change.
  uint64_t retired() const { return retired_; }
  // The vDSO clock mode update `id` published (its clocksource's
  // vdso_clock_mode), retired or not: kept as the ids where it changed,
  // one per clocksource change.
  int32_t ClockModeOf(uint32_t id) const;
  // What the writer holds, in records (RunResult::retained): updates and
  // aux publications not yet retired, and pending stores (with the
  // committed ones PopPending() has not erased yet).
  size_t retained_updates() const { return updates_.size(); }
  size_t retained_aux_records() const;
  size_t retained_stores() const { return pending_.size(); }

  // The clocksource timekeeping runs on now.
  const timekeeper::Clocksource& clocksource() const {
    return tk_->clocksource();
  }
  const CounterSources& sources() const { return sources_; }
  // A kvm-clock machine's hypervisor, else nullptr.
  const Hypervisor* hypervisor() const { return hv_.get(); }
  // What a syscall reads as the clocksource counter on `cpu` at `t_ns`
  // while the timekeeper is in state `update`.
  uint64_t SyscallCounter(const UpdateRecord& update, int cpu,
                          uint64_t t_ns) const {
    return sources_.Read(update.source, cpu, t_ns);
  }
  // The aux clocks' timekeepers as a syscall at `t_ns` reads them (every
  // aux clock's newest publication started by then), or nullptr without
  // kernel.aux_clocks. Valid until the next call.
  const timekeeper::Timekeeper* AuxStatesAt(uint64_t t_ns) const;
  // Aux clock `aux`'s publication `number`, while retained.
  const AuxRecord* AuxUpdate(int aux, uint32_t number) const;
  // The publications of aux clock `aux` retained, oldest first.
  const std::deque<AuxRecord>& AuxUpdates(int aux) const {
    return aux_records_[static_cast<size_t>(aux)];
  }
  // The syscall events run so far, in order.
  const std::vector<EventOutcome>& outcomes() const { return outcomes_; }
  const timekeeper::Timekeeping& timekeeping() const { return *tk_; }
  const variants::PublishContext& publish_context() const {
    return publisher_->context();
  }
  // With a variant whose own timekeeper publishes (Variant::timekeeping):
  // the first way it differed from the model ("" if none), and how many
  // operations both ran.
  const std::string& tree_difference() const { return tree_difference_; }
  // The tree's code crashed or spun in an operation (tree_difference()
  // says where): the run stops there (sim/engine.cc).
  bool tree_faulted() const { return tree_ != nullptr && tree_->Faulted(); }
  // The tree faulted or differs from the model: the readers' answers past
  // this are not judged (sim/engine.cc stops the run). One null test for a
  // run without a tree.
  bool tree_stops_run() const {
    return tree_ != nullptr && (tree_->Faulted() || !tree_difference_.empty());
  }
  uint64_t tree_operations() const { return tree_operations_; }
  // The timekeeper model's state against independent computations after
  // each operation (sim/timekeeper_consistency.h): the first few findings,
  // each with its operation ("tick at 1.004 s: ..."). Any fails the run.
  const std::vector<std::string>& timekeeper_findings() const {
    return timekeeper_findings_;
  }
  // True while a pause, idle or suspend window covers t (no ticks).
  bool InNoTickWindow(uint64_t t_ns) const;
  // True if such a window overlaps [from_ns, to_ns].
  bool NoTickWindowBetween(uint64_t from_ns, uint64_t to_ns) const;
  // True while readers cannot run: a pause, or from 1 ms before a suspend
  // (tasks are frozen first) to 1 ms after its resume.
  bool InPause(uint64_t t_ns) const;
  // The first pause window ending after t, if t is inside one.
  uint64_t PauseEnd(uint64_t t_ns) const;

 private:
  Writer(const Scenario& scenario, const Machine* machine);
  // LatestStartedAt() for a time before the newest update started.
  const UpdateRecord& LatestStartedAtBefore(uint64_t t_ns) const;
  void RunOperation(const std::string& cause, uint64_t t_ns,
                    const EventSpec* event);
  // The hypervisor rewrites vCPU 0's pvclock page (a kvm-clock machine's
  // periodic master clock update, or a pvclock_update event). Serialised
  // with the timekeeper's updates in the store stream: KVM writes vCPU 0's
  // pvti while that vCPU is out of guest mode (docs/scenarios.md).
  void RunPvclockRewrite(uint64_t t_ns, const EventSpec* event);
  // writer_events.cc: the event's effect on the timekeeper at `counter`.
  void RunEvent(const EventSpec& event, uint64_t start, uint64_t counter);
  void RecordOutcome(const EventSpec& event, uint64_t start, std::string what,
                     int64_t ret, const timekeeper::Timex* readback);
  UpdateRecord MakeRecord(const std::string& cause, uint64_t start,
                          uint64_t counter);
  void Publish(const std::string& cause, uint64_t start, uint64_t counter);
  uint64_t NextTickTime() const;
  // The timekeeper operations: on the model and, with a foreign
  // timekeeper, on it too (writer_events.cc).
  void Tick(uint64_t counter);
  int Adjtimex(timekeeper::Timex* txc, uint64_t counter);
  int SetTimeOfDay(const Timespec64& ts, uint64_t counter);
  void Suspend(uint64_t counter, const Timespec64& rtc);
  Timespec64 Resume(uint64_t counter, const Timespec64& rtc);
  void InjectSleeptime(const Timespec64& delta, uint64_t counter);
  // The time of the clock ADJ_SETOFFSET steps (REALTIME, or aux clock
  // `aux` >= 0) at `counter`, in ns; nullopt for an aux clock not enabled.
  std::optional<__int128> SteppedClockNs(int aux, uint64_t counter) const;
  // After an accepted ADJ_SETOFFSET: the clock moved by exactly the offset,
  // else a mismatch in the event's outcome.
  void CheckStep(uint32_t modes, const Timespec64& offset, int aux,
                 const std::optional<__int128>& before, int ret,
                 uint64_t counter);
  // Starts Variant::timekeeping beside the model (refused: what it cannot
  // run).
  absl::Status BootTree(const variants::ForeignTimekeepingSource& source,
                        uint64_t c0);
  // Checks the timekeeper after an operation; `before_tick` is the
  // published timekeeper before it when the operation was a tick.
  void CheckTimekeeper(const std::string& cause, uint64_t start,
                       uint64_t counter,
                       const timekeeper::Timekeeper* before_tick);
  static constexpr size_t kMaxTimekeeperFindings = 5;
  // The update's seq words against the write protocol (sim/seq_protocol.h).
  void CheckSeqProtocol(const std::string& cause, uint64_t start,
                        const vdso::VvarUpdate& update);
  // Keeps a finding of the writer's checks, the first few only.
  void NoteFinding(const std::string& cause, uint64_t start,
                   const std::string& finding);
  // Keeps the first difference from the model, with where it arose.
  void NoteTreeDifference(const std::string& difference);
  // The foreign timekeeper's updates replace the model's stores.
  void TakeTreeUpdates();
  // The persistent clock (RTC): whole seconds of true time since boot.
  Timespec64 PersistentClock(uint64_t t_ns) const;

  const Scenario& scenario_;
  const Machine* machine_;
  CounterSources sources_;
  uint64_t retired_ = 0;
  std::unique_ptr<VariantPublisher> publisher_;
  const variants::Layout* layout_ = nullptr;  // The writer's layout.
  std::map<uint32_t, uint32_t> seq_words_;    // By offset, between updates.
  std::unique_ptr<timekeeper::Timekeeping> tk_;
  std::unique_ptr<variants::ForeignTimekeeping> tree_;  // May be null.
  std::string tree_difference_;
  // With a tree: the page the model's stores would have left, and the
  // page the tree's left (TakeTreeUpdates() compares them).
  std::vector<uint8_t> model_page_;
  std::vector<uint8_t> tree_page_;
  std::vector<std::string> timekeeper_findings_;
  // The hrtimer base's cached offsets, kept across operations.
  timekeeper::HrtimerOffsets hrtimer_;
  uint64_t tree_operations_ = 0;
  std::string operation_;  // The operation running: "tick at 1.004 s".
  CounterSource source_ = CounterSource::kMachine;
  std::array<timekeeper::Clocksource, kCounterSources> clocksources_;
  std::unique_ptr<Hypervisor> hv_;  // kvm-clock machines only.
  uint64_t raw_epoch_counter_ = 0;
  uint64_t raw_epoch_sec_ = 0;
  uint64_t raw_epoch_nsec_ = 0;
  __int128 raw_epoch_ideal_ = 0;
  uint32_t raw_epoch_wrap_losses_ = 0;
  bool raw_epoch_moved_ = false;  // Set by an event; resolved after it.
  uint64_t last_tick_length_ = 0;
  std::array<std::deque<AuxRecord>, kMaxAuxClocks> aux_records_;
  std::array<uint32_t, kMaxAuxClocks> aux_published_{};
  mutable std::array<timekeeper::Timekeeper, kMaxAuxClocks> aux_scratch_;
  std::vector<EventOutcome> outcomes_;
  // events_[i] came from scenario_.events[event_index_[i]].
  std::vector<size_t> event_index_;
  size_t current_event_ = 0;
  // pending() is pending_[pending_head_..]: the front is dropped by moving
  // the head (a vector indexes in one step; every reader load looks).
  std::vector<TimedStore> pending_;
  size_t pending_head_ = 0;
  std::deque<UpdateRecord> updates_;
  // (first update id, clock mode) where the published clock mode changed.
  std::vector<std::pair<uint32_t, int32_t>> mode_changes_;
  void NoteClockMode(const UpdateRecord& r);
  // updates_.back(): a deque's push_back() and pop_front() leave the other
  // elements where they are, and Retire() keeps the newest.
  const UpdateRecord* newest_ = nullptr;
  // Retire() has nothing to do at or before this time (~0: nothing ever
  // until a new record).
  uint64_t retire_from_ns_ = 0;
  uint32_t next_update_id_ = 1;
  uint64_t busy_until_ns_ = 0;     // The writer's last store's time.
  uint64_t coarse_sec_ = 0;        // xtime_sec at the last accumulation.
  __int128 cycle_last_ideal_ = 0;  // See UpdateRecord::cycle_last_ideal.
  uint32_t wrap_losses_ = 0;
  uint32_t ntp_generation_ = 0;
  uint64_t next_tick_index_ = 1;
  uint64_t next_operation_ns_ = 0;  // Nothing to run before this time.
  size_t next_event_ = 0;
  std::vector<EventSpec> events_;  // Sorted by time.
  uint64_t tick_ns_;
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_WRITER_H_
