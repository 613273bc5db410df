// File: vdso/access.h
//
// How a vDSO reader touches the outside world: page loads, the counter read,
// barriers, spinning, and the syscall fallback. Readers are templates over an
// access policy chosen at compile time (design rule 2):
//
// - NativeAccess: plain loads, the real TSC, the real syscall. No virtual
//   call and no hook: the reader compiles to what the kernel's does.
// - HookedAccess: calls an AccessHooks object before every page load and for
//   every counter read, so the simulation can apply pending vvar stores,
//   migrate the reader or advance time at exactly those points.

#ifndef VDSOLAB_VDSO_ACCESS_H_
#define VDSOLAB_VDSO_ACCESS_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/bytes.h"
#include "common/clock_result.h"
#include "common/clockid.h"

namespace vdsolab::vdso {

// How a reader reads the counter. The ordering differs (design rule 2):
// rdtscp waits for every earlier load on every CPU; rdtsc_ordered relies on
// a fence the CPU must honour (lfence/mfence, or rdtscp where available);
// a bare rdtsc may execute before the loads that precede it.
enum class CounterRead : uint8_t { kOrdered, kRdtscp, kPlain };

// Why code under test did not return from a call normally: it crashed (a
// signal such as SIGSEGV or SIGFPE), or it spun without returning past the
// wall-time bound. Only foreign code (plugins, compiled kernel code) runs
// contained (variants/plugin/call_guard.h); the hooks learn of it here.
struct CallFault {
  enum class Kind : uint8_t { kCrash, kSpin };
  Kind kind = Kind::kCrash;
  int signal = 0;  // kCrash: the signal.
  // kCrash: where, as a report can print it the same in every run (address
  // space layout randomisation moves everything else): the faulting
  // address when it is below kFixedAddresses (a pointer from NULL), or
  // its offset into the loaded object named `object` (or into the vvar
  // area and its guards, "vvar"). has_address false:
  // neither (the stack, the heap, or a signal that carries no address).
  bool has_address = false;
  uint64_t address = 0;
  const char* object = nullptr;  // File name, without its directory.
  // `address` is that far below `object`'s start ("vvar-0x1000": a load
  // before the vvar area, in its guard).
  bool address_below = false;
  double seconds = 0;  // kSpin: how long it ran before it was stopped...
  // ...or was asleep in the kernel (a sleep, a futex or I/O wait): a vDSO
  // call never blocks.
  bool blocked = false;
  // kSpin: the call returned, but after the watchdog saw it run for a
  // quarter of its bound (`seconds`: that threshold): a spin all the same,
  // whether or not this machine was fast enough to finish it under the bound
  // (variants/plugin/call_guard.h's RunContained()). kCrash with `called`:
  // the call returned, and `called` says what it left changed, not a call
  // it made ("returned with the direction flag set").
  bool returned = false;
  // kCrash without a signal: the code called exit(status) (or _exit(),
  // _Exit()), which would have ended vdsolab with that status.
  int exit_status = -1;
  // kCrash without a signal or exit status: what the code called that a
  // vDSO call cannot, "fork()" (call_guard.h ends the child at once) or
  // "pthread_exit()"; or how it returned (`returned`); else nullptr.
  const char* called = nullptr;
  // With `called`, when the call was not stopped there but blamed when it
  // returned: why (a report prints it); else nullptr.
  const char* why = nullptr;
};

// Addresses below this are never mapped (Linux's default mmap_min_addr):
// a fault there is a pointer from NULL, at the same address in every run.
inline constexpr uint64_t kFixedAddresses = 65536;

// "0x10", "libmine.so+0x1139", or "" (CallFault::has_address).
std::string FaultPlace(const CallFault& fault);

// "SIGSEGV", or "signal 40".
std::string SignalName(int signal);
// "SIGSEGV", or "exit(0)" for a call that tried to end the process.
std::string FaultCause(const CallFault& fault);
// "crashed (SIGSEGV at 0x10)", "called exit(0)", "spun for 1.0 s: stopped
// by the watchdog", "blocked for 1.0 s: stopped by the watchdog".
std::string DescribeFault(const CallFault& fault);

// What every access policy provides.
template <class A>
concept VdsoAccess = requires(A& a, const uint8_t* p, ClockId clock) {
  // READ_ONCE() of a u32/s32/u64 page field.
  { a.template Load<uint32_t>(p) } -> std::same_as<uint32_t>;
  { a.template Load<uint64_t>(p) } -> std::same_as<uint64_t>;
  // rdtsc_ordered(): the counter read the x86 vDSO makes.
  { a.ReadTsc() } -> std::same_as<uint64_t>;
  // rdtscp, and a bare rdtsc (user-space clocks, some patches).
  { a.ReadTscp() } -> std::same_as<uint64_t>;
  { a.ReadTscPlain() } -> std::same_as<uint64_t>;
  // smp_rmb(): a compiler barrier on x86.
  a.Rmb();
  // cpu_relax() in the seq spin loop.
  a.CpuRelax();
  // false: give up this call (the simulation's livelock budget ran out).
  { a.MayRetry() } -> std::same_as<bool>;
  // clock_gettime_fallback(): the system call.
  { a.Fallback(clock) } -> std::same_as<ClockResult>;
};

// Plain loads, the hardware counter, the real system call.
struct NativeAccess {
  template <class T>
  T Load(const uint8_t* p) const {
    // A relaxed atomic load is a plain mov on x86 (READ_ONCE); it keeps a
    // reader racing a writer thread free of C++ data-race UB.
    return __atomic_load_n(reinterpret_cast<const T*>(p), __ATOMIC_RELAXED);
  }
  // rdtsc_ordered() is "lfence; rdtsc" or rdtscp, patched in by CPU
  // feature at boot. This build always reads with "lfence; rdtsc", the
  // kernel's choice where RDTSCP is absent or hidden (as under some
  // hypervisors), so that native readers compare with a host vDSO patched
  // that way. Inline, so a reader's native build is one function, as the
  // kernel's is.
  uint64_t ReadTsc() const {
    __builtin_ia32_lfence();  // Orders the read after the earlier loads.
    return __builtin_ia32_rdtsc();
  }
  uint64_t ReadTscp() const {
    unsigned int aux;
    return __builtin_ia32_rdtscp(&aux);
  }
  uint64_t ReadTscPlain() const { return __builtin_ia32_rdtsc(); }
  // A preemption point before a load the reader makes itself (compiled
  // kernel code, plugin ABI v2's before_load): nothing natively.
  void BeforeLoad(const uint8_t* /*p*/, uint32_t /*size*/) const {}
  void Rmb() const { asm volatile("" ::: "memory"); }
  void CpuRelax() const { __builtin_ia32_pause(); }
  constexpr bool MayRetry() const { return true; }
  ClockResult Fallback(ClockId clock) const;
  void Fault(const CallFault& /*fault*/) const {}
};

// The simulation's side of HookedAccess.
class AccessHooks {
 public:
  virtual ~AccessHooks() = default;
  // Called before the reader loads `size` bytes at `page_offset`; the load
  // then sees the page as the hook left it.
  virtual void BeforeLoad(uint32_t page_offset, uint32_t size) = 0;
  // The counter value this read returns (the hook may first apply stores,
  // migrate the reader, or advance time, and decide by `kind` whether the
  // read may come from before the loads that precede it).
  virtual uint64_t ReadCounter(CounterRead kind) = 0;
  // Called once per loop iteration (spin or retry); false abandons the call.
  virtual bool MayRetry() = 0;
  // The syscall the reader falls back to.
  virtual ClockResult Fallback(ClockId clock) = 0;
  // The other syscalls a vDSO entry point falls back to: gettimeofday()'s
  // and clock_getres()'s (a kernel tree's __cvdso_gettimeofday_data() and
  // __cvdso_clock_getres_data(); sim/entry_points.h). -ENOSYS where no
  // such call is made.
  virtual GtodResult GettimeofdayFallback() { return GtodResult{-kEnosys}; }
  virtual ClockResult ClockGetresFallback(ClockId /*clock*/) {
    return ClockResult::Error(-kEnosys);
  }
  // The call did not return normally (after this, it answers nothing).
  virtual void OnFault(const CallFault& /*fault*/) {}

  // Barriers the reader has executed (smp_rmb(), and cpu_relax(), a
  // compiler barrier on x86), counted inline by HookedAccess so that the
  // simulation learns of them at its next hook without a call per
  // barrier: a load may be reordered only among those no barrier
  // separates (sim/scenario.h's faults.reorder_ppm).
  void NoteBarrier() { ++barriers_; }
  uint64_t barriers() const { return barriers_; }

 private:
  uint64_t barriers_ = 0;
};

// The hooks' inline path for page loads (the random strategy's, in
// sim/engine.cc). At most loads nothing can happen but the passing of
// time: no store is due, nothing is injected, no trace is kept. There
// HookedAccess itself advances the call's true time by a load's cost and
// notes seq loads, without the virtual BeforeLoad; a load that may land
// at or after `limit` goes to the hooks, which keep the same fields. A run
// gives the same answers and reports either way: the lane only saves the
// call.
struct LoadLane {
  uint64_t now = 0;      // The call's true time.
  uint64_t limit = 0;    // A load landing at or after this takes the hooks.
  uint64_t load_ns = 0;  // What a load costs.
  // seq_start[offset] != 0 where a seq word starts (Layout::seq_starts()).
  const uint8_t* seq_start = nullptr;
  size_t seq_start_size = 0;
  // The last seq load: its value, page offset and true time; and the seq
  // the last data load's attempt began with (CallRecord::begin_seq).
  uint32_t last_seq = 0;
  uint32_t last_seq_offset = ~0u;
  uint64_t last_seq_ns = 0;
  uint32_t begin_seq = 0;

  bool IsSeq(uint32_t offset) const {
    return offset < seq_start_size && seq_start[offset] != 0;
  }
  // Notes a load of `size` bytes at `p`, `offset` into the page, at `now`.
  void Note(const uint8_t* p, uint32_t offset, uint32_t size) {
    if (IsSeq(offset)) {
      last_seq = static_cast<uint32_t>(LoadSized(p, size));
      last_seq_ns = now;
      last_seq_offset = offset;
    } else {
      begin_seq = last_seq;
    }
  }
};

class HookedAccess {
 public:
  HookedAccess(const uint8_t* page, AccessHooks* hooks)
      : page_(page), hooks_(hooks) {}
  // With the inline path for loads (LoadLane), which the hooks share.
  HookedAccess(const uint8_t* page, AccessHooks* hooks, LoadLane* lane)
      : page_(page), hooks_(hooks), lane_(lane) {}
  // A reader in a time namespace, which starts at `timens_view`
  // (VvarPage::timens_data(), `view_bytes` long): loads on the view's time
  // page (its page 1) and beyond reach the hooks at the offsets of the same
  // bytes in `page`. Loads of the namespace page itself (page 0) reach no
  // hook: it is written once before the namespace's first task runs
  // (timens_set_vvar_page()), so no store can land between them and they
  // are not preemption points (a deviation in timing only).
  HookedAccess(const uint8_t* page, AccessHooks* hooks,
               const uint8_t* timens_view, size_t view_bytes)
      : page_(page),
        hooks_(hooks),
        timens_view_(timens_view),
        view_bytes_(view_bytes) {}

  template <class T>
  T Load(const uint8_t* p) {
    BeforeLoad(p, sizeof(T));
    T value;
    std::memcpy(&value, p, sizeof(T));
    return value;
  }
  // The hook of Load() without the load: the reader loads `size` bytes at
  // `p` itself afterwards and sees the page as the hook left it.
  void BeforeLoad(const uint8_t* p, uint32_t size) {
    if (lane_ != nullptr) {  // Never with a namespace view (constructors).
      const uint64_t t = lane_->now + lane_->load_ns;
      if (t < lane_->limit) {
        lane_->now = t;
        lane_->Note(p, static_cast<uint32_t>(p - page_), size);
        return;
      }
    }
    if (timens_view_ != nullptr && p >= timens_view_ &&
        p < timens_view_ + view_bytes_) {
      const size_t rel = static_cast<size_t>(p - timens_view_);
      if (rel < kTimensPageBytes) return;  // The namespace page.
      // The view's page 1 is the time page (page 0 of `page`); the pages
      // after it are where they are in `page`.
      hooks_->BeforeLoad(static_cast<uint32_t>(rel < 2 * kTimensPageBytes
                                                   ? rel - kTimensPageBytes
                                                   : rel),
                         size);
      return;
    }
    hooks_->BeforeLoad(static_cast<uint32_t>(p - page_), size);
  }
  uint64_t ReadTsc() { return hooks_->ReadCounter(CounterRead::kOrdered); }
  uint64_t ReadTscp() { return hooks_->ReadCounter(CounterRead::kRdtscp); }
  uint64_t ReadTscPlain() { return hooks_->ReadCounter(CounterRead::kPlain); }
  // The namespace's view this access was made for, or nullptr.
  const uint8_t* timens_view() const { return timens_view_; }
  void Rmb() { hooks_->NoteBarrier(); }
  void CpuRelax() { hooks_->NoteBarrier(); }
  bool MayRetry() { return hooks_->MayRetry(); }
  ClockResult Fallback(ClockId clock) { return hooks_->Fallback(clock); }
  GtodResult GettimeofdayFallback() { return hooks_->GettimeofdayFallback(); }
  ClockResult ClockGetresFallback(ClockId clock) {
    return hooks_->ClockGetresFallback(clock);
  }
  void Fault(const CallFault& fault) { hooks_->OnFault(fault); }

 private:
  static constexpr size_t kTimensPageBytes = 4096;  // vdso/datapage.h
  const uint8_t* page_;
  AccessHooks* hooks_;
  LoadLane* lane_ = nullptr;
  const uint8_t* timens_view_ = nullptr;
  size_t view_bytes_ = 0;
};

// The policy of an attempt at a call in which the simulation expects
// nothing to happen but the passing of time (sim/engine.cc: no store due
// before `limit`, nothing injected, nothing traced): plain loads, each
// `load_ns` of true time, seq loads noted as LoadLane notes them, and the
// counter read at its true time through `counter`. No virtual call, so the
// reader compiles to nearly its native code. Anything else the call does
// (the syscall, a retry or spin, a counter read that may execute early, a
// fault) or its time reaching `limit` ends the attempt: aborted() is set,
// the rest of the call answers so that the reader returns at once, and the
// simulation runs the call again through HookedAccess. Only a reader that
// keeps no state between calls is run this way (one with a quiet build:
// variants::SimReader::has_quiet_build()): its answer is a function of
// what it loaded and read, so a completed attempt is exactly the call the
// hooks would have run (//tests:quiet_calls_property_test).
class QuietAccess {
 public:
  // What every attempt of a run shares.
  struct Setup {
    const uint8_t* page = nullptr;
    // seq_start[offset] != 0 where a seq word starts (LoadLane's).
    const uint8_t* seq_start = nullptr;
    size_t seq_start_size = 0;
    uint64_t load_ns = 0;
    uint64_t counter_read_ns = 0;
    // Bit k: a counter read of CounterRead kind k may execute early (it
    // draws from the hooks' generator): it ends the attempt.
    uint8_t early_kinds = 0;
    // The counter at true time t (of the call's CPU, from the simulated
    // machine: `counter_ctx` below).
    uint64_t (*counter)(const void* ctx, uint64_t t_ns) = nullptr;
  };
  // An attempt that starts at true time `start_ns`; a step at or after
  // `limit` ends it.
  QuietAccess(const Setup& s, uint64_t start_ns, uint64_t limit,
              const void* counter_ctx)
      : page_(s.page),
        seq_start_(s.seq_start),
        seq_start_size_(s.seq_start_size),
        now_(start_ns),
        limit_(limit),
        load_ns_(s.load_ns),
        counter_read_ns_(s.counter_read_ns),
        early_kinds_(s.early_kinds),
        counter_(s.counter),
        counter_ctx_(counter_ctx) {}

  template <class T>
  T Load(const uint8_t* p) {
    now_ += load_ns_;
    T value;
    std::memcpy(&value, p, sizeof(T));
    Note(p, static_cast<uint64_t>(value));
    return value;
  }
  // A load the reader makes itself (plugin ABI v2, compiled kernel code):
  // the same step and notes (the page does not change during a quiet
  // attempt, so the value is the one the load then sees).
  void BeforeLoad(const uint8_t* p, uint32_t size) {
    now_ += load_ns_;
    Note(p, LoadSized(p, size));
  }
  uint64_t ReadTsc() { return Counter(CounterRead::kOrdered); }
  uint64_t ReadTscp() { return Counter(CounterRead::kRdtscp); }
  uint64_t ReadTscPlain() { return Counter(CounterRead::kPlain); }
  void Rmb() {}
  void CpuRelax() {}
  bool MayRetry() {
    aborted_ = true;
    return false;
  }
  ClockResult Fallback(ClockId /*clock*/) {
    aborted_ = true;
    return ClockResult::Error(-22);
  }
  void Fault(const CallFault& /*fault*/) { aborted_ = true; }

  // `n` loads a plugin counted itself instead of announcing each with
  // BeforeLoad() (plugin ABI v2's struct vdsolab_quiet): the same steps,
  // and the seq notes they left.
  void CountedLoads(uint64_t n, uint32_t last_seq, uint32_t begin_seq) {
    now_ += n * load_ns_;
    last_seq_ = last_seq;
    begin_seq_ = begin_seq;
  }
  const uint8_t* seq_start() const { return seq_start_; }
  size_t seq_start_size() const { return seq_start_size_; }
  uint32_t last_seq() const { return last_seq_; }

  // The attempt ran to its end with every step before `limit`: its answer
  // and the records below are the call's.
  bool completed() const { return !aborted_ && now_ < limit_; }
  uint64_t now() const { return now_; }
  uint32_t begin_seq() const { return begin_seq_; }
  bool read_counter() const { return read_counter_; }
  uint64_t counter() const { return counter_value_; }
  uint64_t counter_ns() const { return counter_ns_; }

 private:
  uint64_t Counter(CounterRead kind) {
    now_ += counter_read_ns_;
    if (((early_kinds_ >> static_cast<int>(kind)) & 1) != 0) aborted_ = true;
    counter_value_ = counter_(counter_ctx_, now_);
    counter_ns_ = now_;
    read_counter_ = true;
    return counter_value_;
  }

  // LoadLane::Note()'s rule: a seq load's value is the last seq; a data
  // load's attempt began with the last seq.
  void Note(const uint8_t* p, uint64_t value) {
    const auto offset = static_cast<size_t>(p - page_);
    if (offset < seq_start_size_ && seq_start_[offset] != 0) {
      last_seq_ = static_cast<uint32_t>(value);
    } else {
      begin_seq_ = last_seq_;
    }
  }

  const uint8_t* page_;
  const uint8_t* seq_start_;
  size_t seq_start_size_;
  uint64_t now_;
  uint64_t limit_;
  uint64_t load_ns_;
  uint64_t counter_read_ns_;
  uint8_t early_kinds_;
  uint64_t (*counter_)(const void*, uint64_t);
  const void* counter_ctx_;
  uint32_t last_seq_ = 0;
  uint32_t begin_seq_ = 0;
  bool aborted_ = false;
  bool read_counter_ = false;
  uint64_t counter_value_ = 0;
  uint64_t counter_ns_ = 0;
};

static_assert(VdsoAccess<NativeAccess>);
static_assert(VdsoAccess<HookedAccess>);
static_assert(VdsoAccess<QuietAccess>);

}  // namespace vdsolab::vdso

#endif  // VDSOLAB_VDSO_ACCESS_H_
