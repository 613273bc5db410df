#include "variants/plugin/loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "variants/plugin/call_guard.h"
#include "variants/plugin/internal/abi_call.h"
#include "variants/plugin/internal/declared.h"
#include "variants/plugin/internal/utf8.h"
#include "variants/plugin/vdsolab_plugin.h"
#include "variants/registry.h"
#include "vdso/datapage.h"

namespace vdsolab::variants {
namespace {

// The C callbacks, bound to an access policy. Each forwards to the policy
// so the simulation's hooks see every load, counter read and retry.
// What the callbacks see: the access policy, and the page bounds (a load
// outside the vvar area is the plugin's bug; it reads 0 and the call
// answers -EFAULT rather than the host reading out of bounds).
template <vdso::VdsoAccess A>
struct Ctx {
  A* access;
  const uint8_t* page;
  bool out_of_bounds = false;
  // The first such load: its distance from `page`, and whether before it.
  uintptr_t outside_offset = 0;
  bool outside_below = false;
  // `page` is a time namespace's view (its page 1 is the time page).
  bool view = false;
  // read_counter() was given a kind not in enum vdsolab_counter_read.
  bool bad_counter_kind = false;
  // This thread's containment state (the simulation only), looked up once
  // per call rather than per callback.
  call_guard_internal::GuardState* guard = nullptr;
  // A quiet call's loads the plugin counts itself (QuietAccess only).
  vdsolab_quiet* quiet = nullptr;
};

constexpr int32_t kEfault = 14;

// The context of the call in progress on this thread (ops->ctx), or
// nullptr. A callback given another context comes from outside any call:
// from a thread the plugin started, or through a table kept from an
// earlier call, whose context is a dead stack frame. It must not touch
// that context (vdsolab would crash in its own code, or race the
// simulation): it answers 0 and is noted (g_stray), and the plugin's next
// call is its fault (CallPlugin()).
// One per access policy: a callback of one policy's table given the
// context of a call through another (a function pointer kept from a quiet
// call) would take that context for its own type.
template <vdso::VdsoAccess A>
constinit thread_local const void* t_call_ctx = nullptr;
// Plugins are few and live for the process: each gets a slot (its callbacks
// and reader are instantiated for it), so that a stray callback is blamed
// on its own plugin, not on whichever variant runs next (compare runs
// several in one process while a plugin's thread may go on calling).
constexpr int kMaxPlugins = 32;
// Slot I's stray callbacks ran since a call of it was last blamed.
std::array<std::atomic<bool>, kMaxPlugins> g_stray{};

// Whether a callback of slot I with context `ctx` runs outside its call
// (noted).
template <vdso::VdsoAccess A, int I>
inline bool Stray(void* ctx) {
  if (ctx == t_call_ctx<A> && ctx != nullptr) [[likely]] {
    return false;
  }
  g_stray[I].store(true, std::memory_order_relaxed);
  return true;
}

// The call's fault when it misused the callbacks (a counter kind no
// instruction has) or stray callbacks ran since the last blamed call: the
// first call the simulation can report them on. A quiet attempt only gives
// way (the hooked rerun blames it and clears the note). Out of line: rare.
template <class A, int I>
[[gnu::noinline, gnu::cold]] void Misbehaved(bool bad_counter_kind, A& access) {
  vdso::CallFault f;
  f.kind = vdso::CallFault::Kind::kCrash;
  if (bad_counter_kind) {
    f.called = "read_counter() with an unknown kind";
    f.why =
        "not VDSOLAB_RDTSC_ORDERED (0), VDSOLAB_RDTSCP (1) or VDSOLAB_RDTSC "
        "(2); vdsolab answered it with 0";
  } else {
    if constexpr (std::is_same_v<A, vdso::HookedAccess>) {
      g_stray[I].store(false, std::memory_order_relaxed);
    }
    f.called = "vdsolab's callbacks outside the call";
    f.why =
        "seen when it returned: from a thread it started, or through a table "
        "kept from an earlier call; vdsolab answered each with 0";
  }
  access.Fault(f);
}

// The fault of a call that loaded through the callbacks outside the vvar
// area (or from a page of it the kernel does not map): named by the first
// such load's offset, as a plain load there is ("died of SIGSEGV at
// address vvar+0x..."). The load was not made. Out of line: rare.
[[gnu::noinline, gnu::cold]] vdso::CallFault OutsideTheArea(uintptr_t offset,
                                                            bool below) {
  vdso::CallFault f;
  f.kind = vdso::CallFault::Kind::kCrash;
  f.called = "loaded outside the vvar area";
  f.returned = true;
  f.why =
      "a vDSO load there reads whatever is mapped, or faults; vdsolab did "
      "not make it and gave the call 0";
  f.has_address = true;
  f.object = "vvar";
  f.address = offset;
  f.address_below = below;
  return f;
}

// The fault of a call that threw a C++ exception. Out of line: rare.
[[gnu::noinline, gnu::cold]] vdso::CallFault Threw() {
  vdso::CallFault f;
  f.kind = vdso::CallFault::Kind::kCrash;
  f.called = "threw a C++ exception";
  f.why =
      "a vDSO call is C and cannot throw; vdsolab caught it at the call's "
      "boundary";
  return f;
}

// The loads a plugin counted in a quiet call reach QuietAccess before any
// other callback and at the call's end (SyncIn), and what a callback noted
// goes back to the plugin's counts (SyncOut): one sequence of steps and
// seq notes, as if each load had been announced. Nothing for other
// policies.
template <vdso::VdsoAccess A>
void SyncIn(Ctx<A>& c) {
  if constexpr (std::is_same_v<A, vdso::QuietAccess>) {
    if (c.quiet == nullptr) return;
    // The plugin stored the two 4-byte seq words one by one: separate
    // loads (relaxed atomics are not merged into one 8-byte load, which
    // could not be forwarded from those stores: a stall per callback).
    c.access->CountedLoads(c.quiet->loads,
                           std::atomic_ref<uint32_t>(c.quiet->last_seq)
                               .load(std::memory_order_relaxed),
                           std::atomic_ref<uint32_t>(c.quiet->begin_seq)
                               .load(std::memory_order_relaxed));
    c.quiet->loads = 0;
  }
}
template <vdso::VdsoAccess A>
void SyncOut(Ctx<A>& c) {
  if constexpr (std::is_same_v<A, vdso::QuietAccess>) {
    if (c.quiet == nullptr) return;
    c.quiet->last_seq = c.access->last_seq();
    c.quiet->begin_seq = c.access->begin_seq();
  }
}
template <vdso::VdsoAccess A>
struct Synced {
  explicit Synced(void* ctx) : c(*static_cast<Ctx<A>*>(ctx)) { SyncIn(c); }
  ~Synced() { SyncOut(c); }
  Ctx<A>& c;
};

// In the simulation, the callbacks are vdsolab's code running for foreign
// code: a fault in them is vdsolab's, and the watchdog waits for them.
template <vdso::VdsoAccess A>
struct HostScopeFor {
  explicit HostScopeFor(void* ctx) : scope(*static_cast<Ctx<A>*>(ctx)->guard) {}
  HostCallScope scope;
};
template <>
struct HostScopeFor<vdso::NativeAccess> {
  explicit HostScopeFor(void*) {}
};
// A quiet attempt's callbacks only count time and note seq words over
// bytes InPage() checked (readable pages of the area): nothing in them can
// fault or block.
template <>
struct HostScopeFor<vdso::QuietAccess> {
  explicit HostScopeFor(void*) {}
};

// A store through a pointer the plugin passed: a bad one faults here, and
// the fault is the plugin's finding (call_guard.h). Not instrumented: under
// --config=sanitize the sanitizers would end vdsolab at the store first.
[[gnu::noinline, gnu::no_sanitize("address", "undefined")]] void StoreForPlugin(
    vdsolab_timespec* ts, const Timespec64& value) {
  volatile int64_t* sec = &ts->tv_sec;
  volatile int64_t* nsec = &ts->tv_nsec;
  *sec = value.tv_sec;
  *nsec = value.tv_nsec;
}

// gettimeofday()'s answer through the plugin's pointers, either may be
// NULL (as the syscall allows); like StoreForPlugin().
[[gnu::noinline, gnu::no_sanitize("address", "undefined")]] void
StoreGtodForPlugin(vdsolab_timeval* tv, vdsolab_timezone* tz,
                   const GtodResult& r) {
  if (tv != nullptr) {
    *static_cast<volatile int64_t*>(&tv->tv_sec) = r.tv_sec;
    *static_cast<volatile int64_t*>(&tv->tv_usec) = r.tv_usec;
  }
  if (tz != nullptr) {
    *static_cast<volatile int32_t*>(&tz->tz_minuteswest) = r.tz_minuteswest;
    *static_cast<volatile int32_t*>(&tz->tz_dsttime) = r.tz_dsttime;
  }
}

template <vdso::VdsoAccess A, int I>
struct OpsFor {
  static Ctx<A>& C(void* ctx) { return *static_cast<Ctx<A>*>(ctx); }
  static A& Of(void* ctx) { return *C(ctx).access; }
  static bool InPage(void* ctx, const uint8_t* p, size_t n) {
    // As offsets: an address below the page wraps to a large one, and one
    // near 2^64 cannot wrap `p + n` past the end.
    constexpr uintptr_t kArea = vdso::VvarPage::kPages * 4096;
    const uintptr_t offset = reinterpret_cast<uintptr_t>(p) -
                             reinterpret_cast<uintptr_t>(C(ctx).page);
    if (n <= kArea && offset <= kArea - n) [[likely]] {
      // The pages the kernel does not map (vdso/datapage.h, the odd ones)
      // are outside too: vdsolab's hooks would read them on its own side
      // and die of the SIGSEGV their PROT_NONE gives.
      if (!vdso::VvarPageIsOdd(offset) && !vdso::VvarPageIsOdd(offset + n - 1))
          [[likely]] {
        return true;
      }
      if (!Unmapped(ctx, offset) && !Unmapped(ctx, offset + n - 1)) {
        return true;
      }
    }
    NoteOutside(ctx, p);
    return false;
  }
  [[gnu::cold]] static void NoteOutside(void* ctx, const uint8_t* p) {
    Ctx<A>& c = C(ctx);
    if (c.out_of_bounds) return;
    c.out_of_bounds = true;
    c.outside_below = p < c.page;
    c.outside_offset = c.outside_below
                           ? reinterpret_cast<uintptr_t>(c.page) -
                                 reinterpret_cast<uintptr_t>(p)
                           : reinterpret_cast<uintptr_t>(p) -
                                 reinterpret_cast<uintptr_t>(c.page);
  }
  // Whether the byte at `offset` is on a page the kernel does not map for
  // this call (a namespace view's page 1 is the time page).
  [[gnu::cold]] static bool Unmapped(void* ctx, uintptr_t offset) {
    if (C(ctx).view && offset / vdso::kPageSize == 1) return false;
    return vdso::VvarUnreadablePage(offset) != nullptr;
  }
  static uint32_t Load32(void* ctx, const uint8_t* p) {
    if (Stray<A, I>(ctx)) return 0;
    [[maybe_unused]] HostScopeFor<A> host(ctx);
    [[maybe_unused]] Synced<A> synced(ctx);
    return InPage(ctx, p, 4) ? Of(ctx).template Load<uint32_t>(p) : 0;
  }
  static uint64_t Load64(void* ctx, const uint8_t* p) {
    if (Stray<A, I>(ctx)) return 0;
    [[maybe_unused]] HostScopeFor<A> host(ctx);
    [[maybe_unused]] Synced<A> synced(ctx);
    return InPage(ctx, p, 8) ? Of(ctx).template Load<uint64_t>(p) : 0;
  }
  static uint64_t ReadCounter(void* ctx, int kind) {
    if (Stray<A, I>(ctx)) return 0;
    [[maybe_unused]] HostScopeFor<A> host(ctx);
    [[maybe_unused]] Synced<A> synced(ctx);
    // The common kind first (kernel trees' rdtsc_ordered()).
    if (kind == VDSOLAB_RDTSC_ORDERED) [[likely]] {
      return Of(ctx).ReadTsc();
    }
    switch (kind) {
      case VDSOLAB_RDTSCP:
        return Of(ctx).ReadTscp();
      case VDSOLAB_RDTSC:
        return Of(ctx).ReadTscPlain();
      default:
        // No counter instruction to model: the plugin's bug, its call's
        // fault (CallPlugin()). Natively, the ordered read.
        if constexpr (std::is_same_v<A, vdso::NativeAccess>) {
          return Of(ctx).ReadTsc();
        }
        C(ctx).bad_counter_kind = true;
        return 0;
    }
  }
  // v2: a preemption point before a load the plugin makes itself. Outside
  // the area it is the plugin's bug, like an out-of-page load32.
  static void BeforeLoad(void* ctx, const uint8_t* p, uint32_t size) {
    if (Stray<A, I>(ctx)) return;
    [[maybe_unused]] HostScopeFor<A> host(ctx);
    [[maybe_unused]] Synced<A> synced(ctx);
    if (!InPage(ctx, p, size)) return;
    Of(ctx).BeforeLoad(p, size);
  }
  static void Rmb(void* ctx) {
    if (!Stray<A, I>(ctx)) Of(ctx).Rmb();
  }
  static void CpuRelax(void* ctx) {
    if (!Stray<A, I>(ctx)) Of(ctx).CpuRelax();
  }
  static int MayRetry(void* ctx) {
    if (Stray<A, I>(ctx)) return 0;
    [[maybe_unused]] HostScopeFor<A> host(ctx);
    [[maybe_unused]] Synced<A> synced(ctx);
    return Of(ctx).MayRetry() ? 1 : 0;
  }
  static int32_t Fallback(void* ctx, int32_t clock, vdsolab_timespec* ts) {
    if (Stray<A, I>(ctx)) return -kEfault;
    ClockResult r;
    {
      [[maybe_unused]] HostScopeFor<A> host(ctx);
      [[maybe_unused]] Synced<A> synced(ctx);
      r = Of(ctx).Fallback(clock);
    }
    // The plugin's pointer, written outside the callback's host scope: a
    // NULL or read-only `ts` is the plugin's crash, not vdsolab's.
    if (r.ret == 0) StoreForPlugin(ts, r.ts);
    return r.ret;
  }
  // v3: the other entry points' system calls, answered in the
  // simulation's calls of them (HookedAccess); -ENOSYS elsewhere.
  static int32_t GettimeofdayFallback(void* ctx, vdsolab_timeval* tv,
                                      vdsolab_timezone* tz) {
    if (Stray<A, I>(ctx)) return -kEfault;
    GtodResult r{-kEnosys};
    if constexpr (std::is_same_v<A, vdso::HookedAccess>) {
      [[maybe_unused]] HostScopeFor<A> host(ctx);
      r = Of(ctx).GettimeofdayFallback();
    }
    if (r.ret == 0) StoreGtodForPlugin(tv, tz, r);
    return r.ret;
  }
  static int32_t ClockGetresFallback(void* ctx, int32_t clock,
                                     vdsolab_timespec* res) {
    if (Stray<A, I>(ctx)) return -kEfault;
    ClockResult r = ClockResult::Error(-kEnosys);
    if constexpr (std::is_same_v<A, vdso::HookedAccess>) {
      [[maybe_unused]] HostScopeFor<A> host(ctx);
      r = Of(ctx).ClockGetresFallback(clock);
    }
    if (r.ret == 0 && res != nullptr) StoreForPlugin(res, r.ts);
    return r.ret;
  }
  // What every call's table holds: copied whole, then the call's three
  // fields set (built field by field it was ~80 instructions of a kernel
  // tree's simulated call: the callbacks' addresses paired in vector
  // registers, spilled around ThisThread()).
  static constexpr vdsolab_ops kTable = {nullptr,
                                         Load32,
                                         Load64,
                                         ReadCounter,
                                         Rmb,
                                         CpuRelax,
                                         MayRetry,
                                         Fallback,
                                         BeforeLoad,
                                         vdso::VvarPage::kPages * 4096,
                                         vdso::kPvclockPageOffset,
                                         nullptr,
                                         0,
                                         GettimeofdayFallback,
                                         ClockGetresFallback};
  static vdsolab_ops Make(Ctx<A>* ctx, uint64_t time_page_offset) {
    // The table's address hidden from the optimiser: a copy from memory
    // (vector loads and stores), not the constants rebuilt in registers.
    const vdsolab_ops* table = &kTable;
    asm("" : "+r"(table));
    vdsolab_ops ops = *table;
    ops.ctx = ctx;
    ops.quiet = ctx->quiet;
    ops.time_page_offset = time_page_offset;
    return ops;
  }
};

// Loading a plugin runs contained with at least this bound of CPU time
// (RunContainedAtLeast()), whatever the per-call bound.
constexpr double kLoadSeconds = 2.0;

// The reader of a v1 or v2 record (the same signature in both).
using ClockGettimeFn = int32_t (*)(const vdsolab_ops*, const uint8_t*, int32_t,
                                   vdsolab_timespec*);

// Runs call(&ops) as a call of plugin slot I through `access`: the ops
// table, the call's context for the callbacks and, in the simulation, the
// guarded call. False when it gave no answer: it faulted or misused the
// callbacks (access.Fault() was told). *out_of_bounds: a callback was
// given an address outside the area.
template <int I, vdso::VdsoAccess A, class Call>
[[gnu::always_inline]] inline bool GuardedCall(A& access, const uint8_t* page,
                                               vdsolab_quiet* quiet,
                                               bool* out_of_bounds,
                                               Call&& call) {
  Ctx<A> ctx{&access, page};
  ctx.quiet = quiet;
  // A reader in a time namespace gets the namespace's view, whose page 1
  // is the time page (HookedAccess: only the simulation has namespaces).
  uint64_t time_page_offset = 0;
  if constexpr (std::is_same_v<A, vdso::HookedAccess>) {
    if (page != nullptr && page == access.timens_view()) {
      time_page_offset = vdso::kPageSize;
      ctx.view = true;
    }
  }
  const vdsolab_ops ops = OpsFor<A, I>::Make(&ctx, time_page_offset);
  // No call nests in another (a plugin cannot reach CallPlugin()).
  t_call_ctx<A> = &ctx;
  if constexpr (std::is_same_v<A, vdso::NativeAccess>) {
    call(&ops);
    t_call_ctx<A> = nullptr;
  } else {
    // In the simulation a crash or a spin is a finding, not vdsolab's end.
    ctx.guard = &call_guard_internal::ThisThread();
    // A C++ exception out of the plugin (through the thunk, whose unwind
    // information lets it pass) is caught here: left to reach the top it
    // called std::terminate() and abort(), contained as SIGABRT, but every
    // later call then printed "terminate called recursively".
    bool threw = false;
    const std::optional<vdso::CallFault> fault = RunContained(*ctx.guard, [&] {
      try {
        call(&ops);
      } catch (...) {
        threw = true;
      }
    });
    t_call_ctx<A> = nullptr;
    SyncIn(ctx);  // The loads since the last callback.
    if (fault) {
      access.Fault(*fault);
      return false;
    }
    if (threw) [[unlikely]] {
      access.Fault(Threw());
      return false;
    }
    // The thunk put vdsolab's registers and frame back (Invoke()).
    if (const uint64_t changed = abi_internal::TakeChanged()) [[unlikely]] {
      access.Fault(abi_internal::AbiFault(changed));
      return false;
    }
    if (ctx.bad_counter_kind || g_stray[I].load(std::memory_order_relaxed))
        [[unlikely]] {
      Misbehaved<A, I>(ctx.bad_counter_kind, access);
      return false;
    }
    if (ctx.out_of_bounds) [[unlikely]] {
      access.Fault(OutsideTheArea(ctx.outside_offset, ctx.outside_below));
      return false;
    }
  }
  // Natively (no faults to report) the call answers -EFAULT.
  *out_of_bounds = ctx.out_of_bounds;
  return true;
}

// fn(args...), a plugin's entry point: in the simulation through the
// thunk that checks the ABI's callee-saved registers and frame on its
// return (abi_internal::Call(); GuardedCall() reports what changed);
// natively, for the benchmarks, a plain call.
template <vdso::VdsoAccess A, class R, class... Params, class... Args>
[[gnu::always_inline]] inline R Invoke(R (*fn)(Params...), Args... args) {
  if constexpr (std::is_same_v<A, vdso::NativeAccess>) {
    return fn(args...);
  } else {
    return abi_internal::Call(fn, args...);
  }
}

// What CallPlugin() hands the plugin for its answer, with guard words
// after it: a store past the timespec changed vdsolab's own locals
// unseen (16 bytes past it passed every check).
struct GuardedTimespec {
  vdsolab_timespec ts;
  uint64_t guard[2];
};
constexpr uint64_t kGuardWord = 0x5a3cc35a5a3cc35aull;
// The finding for a store past it. Out of line: rare.
[[gnu::noinline]] vdso::CallFault PastTheAnswer() {
  vdso::CallFault f;
  f.kind = vdso::CallFault::Kind::kCrash;
  f.called = "returned after writing past the end of the timespec it was given";
  f.returned = true;
  f.why =
      "the 16 bytes after it were vdsolab's; a real caller's stack would "
      "have been corrupted";
  return f;
}

// What the answer's words hold before the call: no timespec has it (a
// tv_sec of -6.5e18 s), so a success that left a word unwritten is told
// from a wrong time (it read as 0.000000000, "the reader's arithmetic").
constexpr int64_t kUnwritten = static_cast<int64_t>(0xa5c3a5c3a5c3a5c3ull);
// The finding for that. Out of line: rare.
[[gnu::noinline]] vdso::CallFault Unwritten(bool sec, bool nsec) {
  vdso::CallFault f;
  f.kind = vdso::CallFault::Kind::kCrash;
  f.called = sec && nsec
                 ? "returned 0 without writing the timespec it was given"
             : sec ? "returned 0 without writing the tv_sec of the "
                     "timespec it was given"
                   : "returned 0 without writing the tv_nsec of the "
                     "timespec it was given";
  f.returned = true;
  f.why =
      "clock_gettime() answers 0 only with the time stored; the caller "
      "would have read whatever its timespec held";
  return f;
}

template <int I, vdso::VdsoAccess A>
std::optional<ClockResult> CallPlugin(ClockGettimeFn clock_gettime, A& access,
                                      const uint8_t* page, ClockId clock,
                                      bool counts_quiet_loads = false) {
  vdsolab_quiet quiet{};
  vdsolab_quiet* counted = nullptr;
  if constexpr (std::is_same_v<A, vdso::QuietAccess>) {
    if (counts_quiet_loads) {
      quiet = vdsolab_quiet{access.seq_start(), access.seq_start_size(), 0,
                            access.last_seq(), access.begin_seq()};
      counted = &quiet;
    }
  }
  GuardedTimespec answer{{kUnwritten, kUnwritten}, {kGuardWord, kGuardWord}};
  vdsolab_timespec& ts = answer.ts;
  int32_t ret = 0;
  bool out_of_bounds = false;
  if (!GuardedCall<I>(access, page, counted, &out_of_bounds,
                      [&](const vdsolab_ops* ops) {
                        ret = Invoke<A>(clock_gettime, ops, page,
                                        static_cast<int32_t>(clock), &ts);
                      })) {
    return std::nullopt;
  }
  if constexpr (!std::is_same_v<A, vdso::NativeAccess>) {
    if (answer.guard[0] != kGuardWord || answer.guard[1] != kGuardWord)
        [[unlikely]] {
      access.Fault(PastTheAnswer());
      return std::nullopt;
    }
  }
  if (out_of_bounds) return ClockResult::Error(-kEfault);
  if (ret == VDSOLAB_ABANDONED) return std::nullopt;
  if (ret != 0) return ClockResult::Error(ret);
  // Two 8-byte loads: the plugin stored the words one by one, and the one
  // 16-byte load the compiler would merge these into cannot be forwarded
  // from those stores (a stall of ~10 ns on every call). Relaxed atomic
  // loads are not merged.
  const Timespec64 t{
      std::atomic_ref<int64_t>(ts.tv_sec).load(std::memory_order_relaxed),
      std::atomic_ref<int64_t>(ts.tv_nsec).load(std::memory_order_relaxed)};
  if constexpr (!std::is_same_v<A, vdso::NativeAccess>) {
    if (t.tv_sec == kUnwritten || t.tv_nsec == kUnwritten) [[unlikely]] {
      access.Fault(Unwritten(t.tv_sec == kUnwritten, t.tv_nsec == kUnwritten));
      return std::nullopt;
    }
  }
  return ClockResult::Ok(t);
}

// A v3 plugin's other entry points (nullptr where it has none).
using GettimeofdayFn = int32_t (*)(const vdsolab_ops*, const uint8_t*,
                                   vdsolab_timeval*, vdsolab_timezone*);
using TimeFn = int64_t (*)(const vdsolab_ops*, const uint8_t*, int64_t*);
using ClockGetresFn = int32_t (*)(const vdsolab_ops*, const uint8_t*, int32_t,
                                  vdsolab_timespec*);
struct OtherEntryPoints {
  GettimeofdayFn gettimeofday = nullptr;
  TimeFn time = nullptr;
  ClockGetresFn clock_getres = nullptr;
  uint32_t config_hz = 0;
};

// What the other entry points' result buffers hold before the call: a
// value no answer has, so that a store the code leaves out (a tv_sec never
// set) is not hidden by a zero that happened to be right.
constexpr int64_t kPoison64 = static_cast<int64_t>(0xa5a5a5a5a5a5a5a5ull);
constexpr int32_t kPoison32 = static_cast<int32_t>(0xa5a5a5a5u);

template <int I>
class PluginSimReader final : public SimReader {
 public:
  PluginSimReader(ClockGettimeFn fn, bool rerunnable,
                  const OtherEntryPoints& other)
      : fn_(fn), rerunnable_(rerunnable), other_(other) {}
  std::optional<ClockResult> Call(vdso::HookedAccess& access,
                                  const uint8_t* page, ClockId clock) override {
    return CallPlugin<I>(fn_, access, page, clock);
  }
  // A plugin the loader was told keeps no state between calls
  // (PluginOptions::rerunnable) is tried quietly too.
  bool has_quiet_build() const override { return rerunnable_; }
  std::optional<ClockResult> QuietCall(vdso::QuietAccess& access,
                                       const uint8_t* page,
                                       ClockId clock) override {
    if (!rerunnable_) return SimReader::QuietCall(access, page, clock);
    return CallPlugin<I>(fn_, access, page, clock,
                         /*counts_quiet_loads=*/true);
  }
  // The answers as the plugin left them; an address outside the area is
  // -EFAULT, an abandoned call none (as for clock_gettime()).
  bool has_entry_point(EntryPoint e) const override {
    switch (e) {
      case EntryPoint::kGettimeofday:
        return other_.gettimeofday != nullptr;
      case EntryPoint::kTime:
        return other_.time != nullptr;
      case EntryPoint::kClockGetres:
        return other_.clock_getres != nullptr;
    }
    return false;
  }
  int config_hz() const override { return static_cast<int>(other_.config_hz); }
  std::optional<GtodResult> Gettimeofday(vdso::HookedAccess& access,
                                         const uint8_t* page,
                                         GtodArgs args) override {
    if (other_.gettimeofday == nullptr) return std::nullopt;
    // Poisoned, as a caller's stack is: a store left out shows.
    vdsolab_timeval tv{kPoison64, kPoison64};
    vdsolab_timezone tz{kPoison32, kPoison32};
    const bool with_tv = args != GtodArgs::kTzOnly;
    const bool with_tz = args != GtodArgs::kTvOnly;
    int32_t ret = 0;
    bool out_of_bounds = false;
    if (!GuardedCall<I>(
            access, page, nullptr, &out_of_bounds, [&](const vdsolab_ops* ops) {
              ret = Invoke<vdso::HookedAccess>(other_.gettimeofday, ops, page,
                                               with_tv ? &tv : nullptr,
                                               with_tz ? &tz : nullptr);
            })) {
      return std::nullopt;
    }
    if (out_of_bounds) return GtodResult{-kEfault};
    if (ret == VDSOLAB_ABANDONED) return std::nullopt;
    if (ret != 0) return GtodResult{ret};
    return GtodResult{0, with_tv ? tv.tv_sec : 0, with_tv ? tv.tv_usec : 0,
                      with_tz ? tz.tz_minuteswest : 0,
                      with_tz ? tz.tz_dsttime : 0};
  }
  std::optional<TimeResult> Time(vdso::HookedAccess& access,
                                 const uint8_t* page, bool null_arg) override {
    if (other_.time == nullptr) return std::nullopt;
    int64_t stored = kPoison64;
    int64_t ret = 0;
    bool out_of_bounds = false;
    if (!GuardedCall<I>(access, page, nullptr, &out_of_bounds,
                        [&](const vdsolab_ops* ops) {
                          ret = Invoke<vdso::HookedAccess>(
                              other_.time, ops, page,
                              null_arg ? nullptr : &stored);
                        }) ||
        out_of_bounds || ret == VDSOLAB_ABANDONED) {
      return std::nullopt;
    }
    return TimeResult{ret, null_arg ? 0 : stored};
  }
  std::optional<ClockResult> ClockGetres(vdso::HookedAccess& access,
                                         const uint8_t* page, ClockId clock,
                                         bool null_arg) override {
    if (other_.clock_getres == nullptr) return std::nullopt;
    vdsolab_timespec res{kPoison64, kPoison64};
    int32_t ret = 0;
    bool out_of_bounds = false;
    if (!GuardedCall<I>(
            access, page, nullptr, &out_of_bounds, [&](const vdsolab_ops* ops) {
              ret = Invoke<vdso::HookedAccess>(other_.clock_getres, ops, page,
                                               static_cast<int32_t>(clock),
                                               null_arg ? nullptr : &res);
            })) {
      return std::nullopt;
    }
    if (out_of_bounds) return ClockResult::Error(-kEfault);
    if (ret == VDSOLAB_ABANDONED) return std::nullopt;
    if (ret != 0) return ClockResult::Error(ret);
    if (null_arg) return ClockResult::Ok(Timespec64{0, 0});
    return ClockResult::Ok(Timespec64{res.tv_sec, res.tv_nsec});
  }

 private:
  ClockGettimeFn fn_;
  bool rerunnable_;
  OtherEntryPoints other_;
};

// Variant records hold plain function pointers: each plugin's slot
// (kMaxPlugins) has its own.
ClockGettimeFn g_plugins[kMaxPlugins];
OtherEntryPoints g_other[kMaxPlugins];
bool g_rerunnable[kMaxPlugins];
PluginInfo g_info[kMaxPlugins];
const Variant* g_variants[kMaxPlugins];
int g_loaded = 0;
std::atomic<bool> g_poisoned{false};
// A plugin was loaded: its destructors and atexit() handlers would run in
// exit(), after the report, and could change vdsolab's exit status.
std::atomic<bool> g_foreign{false};

template <int I>
std::unique_ptr<SimReader> MakeReader() {
  return std::make_unique<PluginSimReader<I>>(g_plugins[I], g_rerunnable[I],
                                              g_other[I]);
}
template <int I>
uint64_t Native(const uint8_t* page, ClockId clock, uint64_t iterations) {
  return RunNativeLoop(iterations, [page, clock](vdso::NativeAccess& access) {
    return CallPlugin<I>(g_plugins[I], access, page, clock);
  });
}

template <int... I>
constexpr auto MakeTable(std::integer_sequence<int, I...>) {
  struct Slot {
    std::unique_ptr<SimReader> (*make)();
    NativeLoopFn native;
  };
  return std::array<Slot, sizeof...(I)>{Slot{MakeReader<I>, Native<I>}...};
}
const auto kSlots = MakeTable(std::make_integer_sequence<int, kMaxPlugins>{});

// A refused plugin is unloaded again.
absl::Status Refuse(void* handle, absl::Status why) {
  dlclose(handle);
  return why;
}

absl::Status Bad(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--variant-so=%s: %s", path, what));
}

// Why a plugin's name cannot be a variant's ("" when it can): --variant,
// reports, replay files and compare's file names carry it, so letters,
// digits and . _ + @ - only, not starting with '-' or '.', at most 128
// bytes.
std::string BadName(const std::string& name) {
  constexpr size_t kMaxName = 128;
  if (name.size() > kMaxName) {
    return absl::StrFormat("longer than %d bytes", kMaxName);
  }
  if (name.front() == '-' || name.front() == '.') {
    return absl::StrFormat("starts with '%c'", name.front());
  }
  for (char c : name) {
    if (!plugin_internal::IsNameChar(c)) {
      return absl::StrFormat(
          "has the character %s (a name is letters, digits and . _ + @ -)",
          c == '\n' ? std::string("'\\n'")
          : static_cast<unsigned char>(c) < 0x20 ||
                  static_cast<unsigned char>(c) >= 0x7f
              ? absl::StrFormat("0x%02x", static_cast<unsigned char>(c))
              : absl::StrFormat("'%c'", c));
    }
  }
  return "";
}

// What a version-1 or version-2 record says, copied out of the plugin's
// memory while the read is contained: a wild pointer in the record faults
// there, as the plugin's crash, never later in vdsolab. Version 1
// declares no semantics (the variant borrows its layout's).
struct Record {
  uint32_t abi = 0;
  std::optional<std::string> name;  // nullopt: a NULL pointer.
  std::optional<std::string> provenance;
  std::optional<std::string> summary;
  std::optional<std::string> layout;
  std::vector<int32_t> clocks;
  bool clocks_missing = false;  // n_vdso_clocks > 0 with NULL vdso_clocks.
  ClockGettimeFn clock_gettime = nullptr;
  bool declares_semantics = false;  // v2
  uint32_t counter_semantics = 0;
  uint32_t semantics_flags = 0;
  uint32_t counter_read = 0;
  std::optional<std::string> era;
  std::optional<std::string> origin;
  OtherEntryPoints other;                          // v3
  std::vector<plugin_internal::OwnClockDecl> own;  // v4
};

// The loaded plugins' records, for the process's life: their variants'
// names are views of these strings.
const Record* g_records[kMaxPlugins];

// Bounds on what a record may point at: a string with no NUL in reach, or
// a clock count read from garbage, is refused, not copied for gigabytes.
constexpr size_t kMaxRecordString = 4096;
constexpr uint32_t kMaxRecordClocks = 64;

absl::Status CopyString(const char* from, const char* field,
                        const std::string& path,
                        std::optional<std::string>& to) {
  if (from == nullptr) return absl::OkStatus();
  const size_t n = strnlen(from, kMaxRecordString + 1);
  if (n > kMaxRecordString) {
    return Bad(path, absl::StrFormat("%s: no NUL in its first %d bytes", field,
                                     kMaxRecordString));
  }
  to.emplace(from, n);
  if (!plugin_internal::IsUtf8(*to))
    return Bad(path, absl::StrFormat("%s: not UTF-8", field));
  // Printed as they are by `variants`, reports and replay files: a control
  // character (an escape sequence, a carriage return, a newline) would
  // reach the user's terminal or break a report's layout.
  for (size_t i = 0; i < to->size(); ++i) {
    const auto c = static_cast<unsigned char>((*to)[i]);
    if (c < 0x20 || c == 0x7f) {
      return Bad(path, absl::StrFormat("%s: control character %#04x at byte %d",
                                       field, c, i));
    }
  }
  return absl::OkStatus();
}

template <class R>
absl::Status CopyCommon(const R& p, const std::string& path, Record& r) {
  r.abi = p.abi_version;
  r.clock_gettime = p.clock_gettime;
  for (absl::Status s :
       {CopyString(p.name, "name", path, r.name),
        CopyString(p.provenance, "provenance", path, r.provenance),
        CopyString(p.summary, "summary", path, r.summary),
        CopyString(p.layout, "layout", path, r.layout)}) {
    if (!s.ok()) return s;
  }
  if (p.n_vdso_clocks > kMaxRecordClocks) {
    return Bad(path, absl::StrFormat("n_vdso_clocks %u: more than %d clocks",
                                     p.n_vdso_clocks, kMaxRecordClocks));
  }
  if (p.n_vdso_clocks != 0 && p.vdso_clocks == nullptr) {
    r.clocks_missing = true;
  } else if (p.n_vdso_clocks != 0) {
    r.clocks.assign(p.vdso_clocks, p.vdso_clocks + p.n_vdso_clocks);
  }
  // The clocks it answers from the page are ones a vvar page holds: an
  // hres, coarse or raw clock, or an aux clock (reports list them so).
  for (size_t i = 0; i < r.clocks.size(); ++i) {
    const int32_t c = r.clocks[i];
    const bool page_clock =
        (c >= 0 && c < kMaxClocks &&
         ((1u << c) & (kVdsoHres | kVdsoCoarse | kVdsoRaw)) != 0) ||
        (c >= kClockAux && c <= kClockAuxLast);
    if (!page_clock) {
      return Bad(
          path, absl::StrFormat("vdso_clocks[%d] = %d: not a clock a vDSO page "
                                "holds (0, 1, 4, 5, 6, 7, 11, or aux %d .. %d)",
                                i, c, kClockAux, kClockAuxLast));
    }
  }
  return absl::OkStatus();
}

// Why the symbol `name` at `addr` (dlsym()'s) cannot be the entry point:
// a data object of that name would be called as code (a crash named after
// nothing the plugin did). "" when it is a function, or cannot be told.
std::string NotAFunction(void* addr, const char* name) {
  Dl_info info;
  void* entry = nullptr;  // dladdr1() stores a const ElfW(Sym)* here.
  if (dladdr1(addr, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) {
    return "";
  }
  const auto* sym = static_cast<const ElfW(Sym)*>(entry);
  const unsigned type = ELF64_ST_TYPE(sym->st_info);
  if (type == STT_FUNC || type == STT_GNU_IFUNC) return "";
  return absl::StrFormat(
      "%s is not a function (ELF symbol type %s): the entry point is a "
      "function returning the record, `const struct ... *%s(void)` "
      "(variants/plugin/vdsolab_plugin.h)",
      name, type == STT_OBJECT ? "OBJECT" : absl::StrCat(type), name);
}

// A version-4 record's own clocks, copied (their names bounded as the
// record's strings are).
absl::Status CopyOwnClocks(const struct vdsolab_plugin4& p4,
                           const std::string& path, Record& r) {
  if (p4.n_own_clocks > plugin_internal::kMaxOwnClocks) {
    return Bad(
        path, absl::StrFormat("n_own_clocks %u: more than %d clocks",
                              p4.n_own_clocks, plugin_internal::kMaxOwnClocks));
  }
  if (p4.n_own_clocks != 0 && p4.own_clocks == nullptr) {
    return Bad(path, "n_own_clocks without own_clocks");
  }
  for (uint32_t i = 0; i < p4.n_own_clocks; ++i) {
    const vdsolab_own_clock& c = p4.own_clocks[i];
    std::optional<std::string> name;
    if (absl::Status s = CopyString(
            c.name, absl::StrFormat("own_clocks[%d].name", i).c_str(), path,
            name);
        !s.ok()) {
      return s;
    }
    if (!name) {
      return Bad(path, absl::StrFormat("own_clocks[%d].name: NULL", i));
    }
    r.own.push_back(plugin_internal::OwnClockDecl{c.id, *std::move(name),
                                                  c.kind, c.same_as, c.flags});
  }
  return absl::OkStatus();
}

// vdsolab_plugin_v4 first, then v3, v2 and v1; the record's version
// must be the entry point's.
absl::StatusOr<Record> ReadRecord(void* handle, const std::string& path) {
  for (const char* name : {"vdsolab_plugin_v4", "vdsolab_plugin_v3",
                           "vdsolab_plugin_v2", "vdsolab_plugin_v1"}) {
    if (void* addr = dlsym(handle, name)) {
      if (const std::string why = NotAFunction(addr, name); !why.empty()) {
        return Bad(path, why);
      }
    }
  }
  Record r;
  using EntryV4 = const struct vdsolab_plugin4* (*)();
  using EntryV3 = const struct vdsolab_plugin3* (*)();
  using EntryV2 = const struct vdsolab_plugin2* (*)();
  using EntryV1 = const vdsolab_plugin* (*)();
  const struct vdsolab_plugin2* p = nullptr;
  uint32_t abi = VDSOLAB_PLUGIN_ABI_V2;
  const struct vdsolab_plugin3* p3 = nullptr;
  const struct vdsolab_plugin4* p4 = nullptr;
  if (auto v4 = reinterpret_cast<EntryV4>(dlsym(handle, "vdsolab_plugin_v4"))) {
    p4 = v4();
    if (p4 == nullptr) return Bad(path, "vdsolab_plugin_v4() returned NULL");
    p3 = &p4->v3;
    abi = VDSOLAB_PLUGIN_ABI_V4;
  } else if (auto v3 = reinterpret_cast<EntryV3>(
                 dlsym(handle, "vdsolab_plugin_v3"))) {
    p3 = v3();
    if (p3 == nullptr) return Bad(path, "vdsolab_plugin_v3() returned NULL");
    abi = VDSOLAB_PLUGIN_ABI_V3;
  }
  if (p3 != nullptr) {
    p = &p3->v2;
    r.other = OtherEntryPoints{p3->gettimeofday, p3->time, p3->clock_getres,
                               p3->config_hz};
  } else if (auto v2 = reinterpret_cast<EntryV2>(
                 dlsym(handle, "vdsolab_plugin_v2"))) {
    p = v2();
    if (p == nullptr) return Bad(path, "vdsolab_plugin_v2() returned NULL");
  }
  if (p != nullptr) {
    if (p->abi_version != abi) {
      return Bad(path, absl::StrFormat(
                           "vdsolab_plugin_v%d() record: abi_version %d; a "
                           "version-%d record must say %d",
                           abi, p->abi_version, abi, abi));
    }
    // After the version: a smaller record under the v4 symbol has no own
    // clocks to read past its end.
    if (p4 != nullptr) {
      if (absl::Status s = CopyOwnClocks(*p4, path, r); !s.ok()) return s;
    }
    if (absl::Status s = CopyCommon(*p, path, r); !s.ok()) return s;
    r.declares_semantics = true;
    r.counter_semantics = p->counter_semantics;
    r.semantics_flags = p->semantics_flags;
    r.counter_read = p->counter_read;
    for (absl::Status s : {CopyString(p->era, "era", path, r.era),
                           CopyString(p->origin, "origin", path, r.origin)}) {
      if (!s.ok()) return s;
    }
    return r;
  }
  auto v1 = reinterpret_cast<EntryV1>(dlsym(handle, "vdsolab_plugin_v1"));
  if (v1 == nullptr) {
    return Bad(path,
               "no vdsolab_plugin_v4, vdsolab_plugin_v3, vdsolab_plugin_v2 or "
               "vdsolab_plugin_v1 symbol: not a "
               "vdsolab plugin (see docs/plugins.md)");
  }
  const vdsolab_plugin* p1 = v1();
  if (p1 == nullptr) return Bad(path, "vdsolab_plugin_v1() returned NULL");
  if (p1->abi_version != VDSOLAB_PLUGIN_ABI_VERSION) {
    return Bad(path,
               absl::StrFormat("plugin ABI version %d in the record of "
                               "vdsolab_plugin_v1(), which must say %d "
                               "(a version-%d record is vdsolab_plugin_v2's)",
                               p1->abi_version, VDSOLAB_PLUGIN_ABI_VERSION,
                               VDSOLAB_PLUGIN_ABI_V2));
  }
  if (absl::Status s = CopyCommon(*p1, path, r); !s.ok()) return s;
  return r;
}

plugin_internal::DeclaredEra Declared(const Record& r) {
  return plugin_internal::DeclaredEra{r.counter_semantics, r.semantics_flags,
                                      r.counter_read, r.clocks.data(),
                                      static_cast<uint32_t>(r.clocks.size())};
}

const char* CStr(const std::optional<std::string>& s) {
  return s ? s->c_str() : nullptr;
}

}  // namespace

bool LoaderPoisoned() { return g_poisoned.load(); }
bool ForeignCodeLoaded() { return g_foreign.load(); }

absl::StatusOr<const Variant*> LoadPluginVariant(const std::string& path,
                                                 const PluginOptions& options) {
  if (g_loaded == kMaxPlugins) {
    return Bad(path, absl::StrFormat("at most %d plugins", kMaxPlugins));
  }
  // A name without a slash would make dlopen() search the library path: the
  // user means the file here.
  const std::string file =
      path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_NOW: an unresolved symbol fails here, not mid-run. dlopen() runs
  // the plugin's constructors: foreign code, contained like its calls.
  void* handle = nullptr;
  if (const std::optional<vdso::CallFault> fault = RunContainedAtLeast(
          kLoadSeconds,
          [&] { handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL); })) {
    if (fault->returned || handle != nullptr) {
      // dlopen() returned (the control state changed, it ran long, a
      // constructor forked or asked for a change vdsolab refused): nothing
      // was left half done, and the state is vdsolab's again.
      const bool fp = fault->called != nullptr &&
                      absl::StrContains(fault->called, "floating-point");
      return Bad(path,
                 absl::StrFormat("the plugin %s while loading (in a "
                                 "constructor of it or of a library it "
                                 "needs)%s%s",
                                 vdso::DescribeFault(*fault),
                                 fp ? ": a plugin linked with -ffast-math or "
                                      "-Ofast sets FTZ/DAZ at load; build it "
                                      "without"
                                    : "",
                                 fault->why != nullptr && !fp
                                     ? absl::StrCat(": ", fault->why)
                                     : ""));
    }
    // The jump left the dynamic loader's lock held: no dlopen(), and no
    // exit() (whose handlers take it), may follow (LoaderPoisoned()).
    g_poisoned.store(true);
    return Bad(path, absl::StrFormat(
                         "the plugin %s while loading (in a constructor of "
                         "it or of a library it needs)",
                         vdso::DescribeFault(*fault)));
  }
  if (handle != nullptr) g_foreign.store(true);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Bad(path, why != nullptr ? why : "dlopen failed");
  }
  // The entry point and the record are the plugin's too: a crash reading
  // them (a NULL or wild name pointer) is the plugin's, not vdsolab's.
  absl::StatusOr<Record> rec = absl::InternalError("unread");
  if (const std::optional<vdso::CallFault> fault = RunContainedAtLeast(
          kLoadSeconds, [&] { rec = ReadRecord(handle, path); })) {
    return Refuse(handle,
                  Bad(path, absl::StrFormat("the plugin %s in its entry point "
                                            "or reading its record (is the "
                                            "entry point declared as in "
                                            "vdsolab_plugin.h, returning a "
                                            "pointer to a record that lives "
                                            "as long as the process?)",
                                            vdso::DescribeFault(*fault))));
  }
  if (!rec.ok()) return Refuse(handle, rec.status());
  // The variant's names are views of these strings: they live as long as
  // the process once the plugin is registered (g_records).
  auto kept = std::make_unique<Record>(*std::move(rec));
  const Record& p = *kept;
  if (!p.name || p.name->empty()) return Refuse(handle, Bad(path, "no name"));
  if (const std::string why = BadName(*p.name); !why.empty()) {
    return Refuse(handle,
                  Bad(path, absl::StrFormat("name \"%s\": %s",
                                            absl::CEscape(*p.name), why)));
  }
  if (p.clock_gettime == nullptr)
    return Refuse(handle, Bad(path, "no clock_gettime"));
  if (!p.layout) return Refuse(handle, Bad(path, "no layout"));
  if (p.clocks_missing) {
    return Refuse(handle, Bad(path, "n_vdso_clocks without vdso_clocks"));
  }
  if (p.other.config_hz != 0 &&
      (p.other.config_hz < 10 || p.other.config_hz > 10000)) {
    return Refuse(
        handle, Bad(path, absl::StrFormat("config_hz %u: want 0 or 10 .. 10000",
                                          p.other.config_hz)));
  }
  if (p.declares_semantics) {
    if (absl::Status s = plugin_internal::CheckDeclared(Declared(p), path);
        !s.ok()) {
      return Refuse(handle, s);
    }
  }
  absl::StatusOr<const Variant*> base = FindVariant(*p.layout);
  if (!base.ok()) {
    return Refuse(handle, Bad(path, absl::StrFormat("layout: %s",
                                                    base.status().message())));
  }
  if ((*base)->own_clocks_only) {
    return Refuse(
        handle,
        Bad(path, absl::StrFormat("layout \"%s\" is a user-space clock's, "
                                  "not a vDSO page",
                                  *p.layout)));
  }
  // Lives as long as the process.
  if (absl::Status s = plugin_internal::CheckOwnClocks(p.own, path); !s.ok()) {
    return Refuse(handle, s);
  }
  auto* v = new Variant(plugin_internal::PluginVariantFrom(
      **base, plugin_internal::DeclaredRecord{
                  CStr(p.name), CStr(p.provenance), CStr(p.summary),
                  p.declares_semantics, Declared(p)}));
  // Version 4: its own clocks, answered from the page (the names are views
  // of the record's strings, kept below).
  v->own_clocks = plugin_internal::OwnClockDefs(p.own);
  for (const ClockDef& c : v->own_clocks) v->vdso_clocks.push_back(c.id);
  g_plugins[g_loaded] = p.clock_gettime;
  g_other[g_loaded] = p.other;
  g_rerunnable[g_loaded] = options.rerunnable;
  v->make_sim_reader = kSlots[static_cast<size_t>(g_loaded)].make;
  v->native_loop = kSlots[static_cast<size_t>(g_loaded)].native;
  if (absl::Status s = RegisterVariant(v); !s.ok()) {
    delete v;
    return Refuse(handle, Bad(path, std::string(s.message())));
  }
  PluginInfo& info = g_info[g_loaded];
  info.path = path;
  info.abi_version = static_cast<int>(p.abi);
  info.era = p.era.value_or("");
  info.origin = p.origin.value_or("");
  g_variants[g_loaded] = v;
  g_records[g_loaded] = kept.release();
  ++g_loaded;
  return v;
}

const PluginInfo* FindPluginInfo(const Variant* variant) {
  for (int i = 0; i < g_loaded; ++i) {
    if (g_variants[i] == variant) return &g_info[i];
  }
  return nullptr;
}

}  // namespace vdsolab::variants
