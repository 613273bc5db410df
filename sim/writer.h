// File: sim/writer.h
//
// The kernel's side of a simulation: ticks at HZ (with jitter, skipped in
// NO_HZ idle and VM pauses), the scenario's adjtimex()/settime events, each
// run through the timekeeper model at the timekeeping CPU's counter, and
// each published update turned into stores with the true times at which
// they become visible. Generated lazily in time order; independent of the
// readers (readers cannot delay the writer), so any reader can be replayed
// against it.

#ifndef VDSOLAB_SIM_WRITER_H_
#define VDSOLAB_SIM_WRITER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sim/machine.h"
#include "sim/scenario.h"
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
  // cycle_last (Machine::IdealCounter units): how far the counter has run
  // since, wraps included.
  __int128 cycle_last_ideal = 0;
  timekeeper::Timekeeper tk;
};

// update_vsyscall() for the variant under test: each timekeeper update
// becomes the store list of the variant's writer (its page layout).
class VariantPublisher : public timekeeper::VsyscallSink {
 public:
  VariantPublisher(const variants::Variant* variant,
                   variants::PublishContext ctx)
      : variant_(variant), ctx_(ctx) {}
  void UpdateVsyscall(const timekeeper::Timekeeper& tk) override;
  std::deque<vdso::VvarUpdate>& pending() { return pending_; }
  const variants::PublishContext& context() const { return ctx_; }

 private:
  const variants::Variant* variant_;
  variants::PublishContext ctx_;
  uint32_t seq_ = 0;  // Every seq word's value between updates.
  std::deque<vdso::VvarUpdate> pending_;
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
  // for and then reads).
  const UpdateRecord& LatestStartedAt(uint64_t t_ns) const;
  // Forgets updates that ended before t, keeping the last one of them.
  void Retire(uint64_t t_ns);

  const timekeeper::Clocksource& clocksource() const {
    return tk_->clocksource();
  }
  const timekeeper::Timekeeping& timekeeping() const { return *tk_; }
  const variants::PublishContext& publish_context() const {
    return publisher_->context();
  }
  // True while a pause or idle window covers t (no ticks).
  bool InNoTickWindow(uint64_t t_ns) const;
  bool InPause(uint64_t t_ns) const;
  // The first pause window ending after t, if t is inside one.
  uint64_t PauseEnd(uint64_t t_ns) const;

 private:
  Writer(const Scenario& scenario, const Machine* machine);
  void RunOperation(const std::string& cause, uint64_t t_ns,
                    const EventSpec* event);
  UpdateRecord MakeRecord(const std::string& cause, uint64_t start,
                          uint64_t counter);
  uint64_t NextTickTime() const;

  const Scenario& scenario_;
  const Machine* machine_;
  std::unique_ptr<VariantPublisher> publisher_;
  std::unique_ptr<timekeeper::Timekeeping> tk_;
  // pending() is pending_[pending_head_..]: the front is dropped by moving
  // the head (a vector indexes in one step; every reader load looks).
  std::vector<TimedStore> pending_;
  size_t pending_head_ = 0;
  std::deque<UpdateRecord> updates_;
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
