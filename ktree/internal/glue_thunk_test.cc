// The glue's thunks (ktree/internal/glue.c), which rewritten rdtsc, rdtscp,
// rdtsc_ordered() and syscall sites of a kernel tree's object call: each
// must return what the instruction would (the simulation's counter, the
// fallback's answer) and leave every other general register and the
// arithmetic flags as they were, since the compiler of the kernel code
// does not know a call is there. Compiled with -mno-red-zone, as the
// kernel object is: the call pushes below the stack pointer.

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "variants/plugin/vdsolab_plugin.h"

extern "C" {
// The thunks (hidden in the plugin, visible in this static link).
void vdsolab_thunk_rdtsc_ordered(void);
void vdsolab_thunk_rdtscp(void);
void vdsolab_thunk_rdtsc(void);
void vdsolab_thunk_syscall(void);
}

namespace {

// CF PF AF ZF SF OF: the flags a compiler may keep live across a site.
constexpr uint64_t kArithmeticFlags = 0x8d5;
constexpr uint64_t kDirectionFlag = 0x400;
constexpr uint64_t kCounterBase = 0x8badf00d12345678ull;
constexpr int64_t kFallbackSec = 0x1122334455667788;

int last_kind = -1;
int last_fallback_clock = -1;

// What any C callee may do: overwrite every caller-saved register and the
// flags, so a register the thunk fails to restore shows.
void ClobberCallerSaved() {
  asm volatile(
      "movq $-1, %%rcx\n\tmovq $-1, %%rdx\n\tmovq $-1, %%rsi\n\t"
      "movq $-1, %%rdi\n\tmovq $-1, %%r8\n\tmovq $-1, %%r9\n\t"
      "movq $-1, %%r10\n\tmovq $-1, %%r11\n\txorl %%eax, %%eax\n\t"
      :
      :
      : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "cc");
}

uint64_t ReadCounter(void*, int kind) {
  ClobberCallerSaved();
  last_kind = kind;
  // Both halves non-zero, distinct per kind.
  return kCounterBase + static_cast<uint64_t>(kind);
}

int32_t GtodFallback(void*, vdsolab_timeval* tv, vdsolab_timezone* tz) {
  ClobberCallerSaved();
  tv->tv_sec = kFallbackSec;
  tv->tv_usec = 999999;
  tz->tz_minuteswest = -60;
  tz->tz_dsttime = 1;
  return 0;
}

int32_t GetresFallback(void*, int32_t clock, vdsolab_timespec* res) {
  ClobberCallerSaved();
  if (clock < 0) return -22;
  res->tv_sec = 0;
  res->tv_nsec = clock;
  return 0;
}

int32_t Fallback(void*, int32_t clock, vdsolab_timespec* ts) {
  ClobberCallerSaved();
  last_fallback_clock = clock;
  ts->tv_sec = kFallbackSec;
  ts->tv_nsec = 7;
  return 0;
}

// What one call of a thunk left in the registers.
struct Regs {
  uint64_t rax, rcx, rdx, rsi, rdi, r8, r9, r10, r11, flags;
};

constexpr Regs kIn = {0xa0a0a0a0a0a0a0a0, 0xc1c1c1c1c1c1c1c1,
                      0xd2d2d2d2d2d2d2d2, 0x5151515151515151,
                      0xd1d1d1d1d1d1d1d1, 0x0808080808080808,
                      0x0909090909090909, 0x1010101010101010,
                      0x1111111111111111, 0};

// Calls `thunk` with kIn's registers (RAX, RDI, RSI, RDX as given for the
// syscall thunk) and `flags` in RFLAGS; returns the registers after it.
#define VDSOLAB_CALL_THUNK(thunk, in, flags_in, out)                         \
  do {                                                                       \
    register uint64_t r8 asm("r8") = (in).r8;                                \
    register uint64_t r9 asm("r9") = (in).r9;                                \
    register uint64_t r10 asm("r10") = (in).r10;                             \
    register uint64_t r11 asm("r11") = (in).r11;                             \
    uint64_t rax = (in).rax, rcx = (in).rcx, rdx = (in).rdx, rsi = (in).rsi, \
             rdi = (in).rdi, fl = (flags_in);                                \
    asm volatile(                                                            \
        "pushq %[fl]\n\t"                                                    \
        "popfq\n\t"                                                          \
        "call " #thunk                                                       \
        "\n\t"                                                               \
        "pushfq\n\t"                                                         \
        "popq %[fl]\n\t"                                                     \
        "cld\n\t"                                                            \
        : "+a"(rax), "+c"(rcx), "+d"(rdx), "+S"(rsi), "+D"(rdi), "+r"(r8),   \
          "+r"(r9), "+r"(r10), "+r"(r11), [fl] "+b"(fl)                      \
        :                                                                    \
        : "memory", "cc");                                                   \
    (out) = Regs{rax, rcx, rdx, rsi, rdi, r8, r9, r10, r11, fl};             \
  } while (0)

// The flag patterns each thunk is called with: none, all, and each alone.
std::vector<uint64_t> FlagPatterns() {
  std::vector<uint64_t> p = {0x2, 0x2 | kArithmeticFlags};
  for (uint64_t bit = 1; bit <= 0x800; bit <<= 1) {
    if ((kArithmeticFlags & bit) != 0) p.push_back(0x2 | bit);
  }
  return p;
}

// Filled by the fake kernel entry below, which runs with the glue's call
// state current (as the tree's code does).
struct Observed {
  int kind = -1;
  uint64_t flags_in = 0;
  Regs out{};
};
std::vector<Observed> observed;
uint64_t kernel_ts = 0;  // The timespec the glue gave the kernel code.

void Observe(int kind, uint64_t flags, const Regs& out) {
  observed.push_back(Observed{kind, flags, out});
}

}  // namespace

// The kernel object's other entry points: their fallbacks as the vDSO
// makes them (gettimeofday: RAX 96, RDI tv, RSI tz; clock_getres: RAX 229,
// RDI clock, RSI res), which the syscall thunk must route to the ops.
static uint64_t syscall_rax = 0;
extern "C" int vdsolab_tree_gettimeofday(const void*, vdsolab_timeval* tv,
                                         vdsolab_timezone* tz) {
  Regs in = kIn;
  in.rax = 96;
  in.rdi = reinterpret_cast<uint64_t>(tv);
  in.rsi = reinterpret_cast<uint64_t>(tz);
  Regs out{};
  VDSOLAB_CALL_THUNK(vdsolab_thunk_syscall, in, 0x2, out);
  syscall_rax = out.rax;
  return static_cast<int>(out.rax);
}
extern "C" int64_t vdsolab_tree_time(const void*, int64_t* t) {
  if (t != nullptr) *t = 1234;
  return 1234;
}
extern "C" int vdsolab_tree_clock_getres(const void*, int clock,
                                         vdsolab_timespec* res) {
  Regs in = kIn;
  in.rax = 229;
  in.rdi = static_cast<uint64_t>(clock);
  in.rsi = reinterpret_cast<uint64_t>(res);
  Regs out{};
  VDSOLAB_CALL_THUNK(vdsolab_thunk_syscall, in, 0x2, out);
  syscall_rax = out.rax;
  return static_cast<int>(out.rax);
}

// The kernel object's entry point, which the glue's reader calls: here,
// every counter thunk with every flag pattern, and the syscall thunk.
extern "C" int vdsolab_tree_clock_gettime(const void*, int clock,
                                          vdsolab_timespec* ts) {
  for (uint64_t flags : FlagPatterns()) {
    Regs out{};
    VDSOLAB_CALL_THUNK(vdsolab_thunk_rdtsc_ordered, kIn, flags, out);
    Observe(VDSOLAB_RDTSC_ORDERED, flags, out);
    VDSOLAB_CALL_THUNK(vdsolab_thunk_rdtscp, kIn, flags, out);
    Observe(VDSOLAB_RDTSCP, flags, out);
    VDSOLAB_CALL_THUNK(vdsolab_thunk_rdtsc, kIn, flags, out);
    Observe(VDSOLAB_RDTSC, flags, out);
    // clock_gettime(clock, ts) as the vDSO's fallback makes it.
    Regs in = kIn;
    in.rax = 228;
    in.rdi = static_cast<uint64_t>(clock);
    in.rsi = kernel_ts = reinterpret_cast<uint64_t>(ts);
    VDSOLAB_CALL_THUNK(vdsolab_thunk_syscall, in, flags, out);
    Observe(-1, flags, out);
  }
  return 0;
}

namespace {

TEST(GlueThunks, ReturnTheInstructionsResultAndPreserveTheRest) {
  uint8_t page[4096] = {};
  vdsolab_ops ops{};
  ops.read_counter = ReadCounter;
  ops.fallback = Fallback;
  ops.area_bytes = sizeof(page);
  const vdsolab_plugin3* v3 = vdsolab_plugin_v3();
  ASSERT_NE(v3, nullptr);
  const vdsolab_plugin2* plugin = &v3->v2;
  vdsolab_timespec ts{0, 0};
  observed.clear();
  ASSERT_EQ(plugin->clock_gettime(&ops, page, 3, &ts), 0);
  ASSERT_EQ(observed.size(), 4 * FlagPatterns().size());
  EXPECT_EQ(last_fallback_clock, 3);
  for (const Observed& o : observed) {
    SCOPED_TRACE(testing::Message() << "kind " << o.kind << ", flags 0x"
                                    << std::hex << o.flags_in);
    const Regs& r = o.out;
    EXPECT_EQ(r.flags & kArithmeticFlags, o.flags_in & kArithmeticFlags);
    EXPECT_EQ(r.flags & kDirectionFlag, 0u);
    EXPECT_EQ(r.rsi, o.kind == -1 ? kernel_ts : kIn.rsi);
    EXPECT_EQ(r.r8, kIn.r8);
    EXPECT_EQ(r.r9, kIn.r9);
    EXPECT_EQ(r.r10, kIn.r10);
    if (o.kind == -1) {
      // The syscall: RAX the answer; RCX and R11 are the instruction's.
      EXPECT_EQ(r.rax, 0u);
      EXPECT_EQ(r.rdi, 3u);
      EXPECT_EQ(r.rdx, kIn.rdx);
      continue;
    }
    // EDX:EAX the counter, upper halves clear; RDTSCP also sets ECX.
    const uint64_t want = kCounterBase + static_cast<uint64_t>(o.kind);
    EXPECT_EQ(r.rax, want & 0xffffffffu);
    EXPECT_EQ(r.rdx, want >> 32);
    EXPECT_EQ(r.rcx, o.kind == VDSOLAB_RDTSCP ? 0u : kIn.rcx);
    EXPECT_EQ(r.rdi, kIn.rdi);
    EXPECT_EQ(r.r11, kIn.r11);
  }
  EXPECT_EQ(ts.tv_sec, kFallbackSec);
  EXPECT_EQ(ts.tv_nsec, 7);
}

// The other entry points' fallbacks reach their ops through the syscall
// thunk, and their answers reach the caller's pointers (NULL ones left
// alone); time() answers what the kernel code returns.
TEST(GlueThunks, OtherEntryPointsRouteTheirSyscalls) {
  uint8_t page[4096] = {};
  vdsolab_ops ops{};
  ops.area_bytes = sizeof(page);
  ops.gettimeofday_fallback = GtodFallback;
  ops.clock_getres_fallback = GetresFallback;
  const vdsolab_plugin3* v3 = vdsolab_plugin_v3();
  ASSERT_NE(v3, nullptr);
  EXPECT_EQ(v3->config_hz, 250u);
  vdsolab_timeval tv{0, 0};
  vdsolab_timezone tz{0, 0};
  ASSERT_EQ(v3->gettimeofday(&ops, page, &tv, &tz), 0);
  EXPECT_EQ(tv.tv_sec, kFallbackSec);
  EXPECT_EQ(tv.tv_usec, 999999);
  EXPECT_EQ(tz.tz_minuteswest, -60);
  EXPECT_EQ(tz.tz_dsttime, 1);
  vdsolab_timespec res{0, 0};
  ASSERT_EQ(v3->clock_getres(&ops, page, 5, &res), 0);
  EXPECT_EQ(res.tv_nsec, 5);
  EXPECT_EQ(v3->clock_getres(&ops, page, -1, &res), -22);
  EXPECT_EQ(syscall_rax, static_cast<uint64_t>(-22));
  int64_t t = 0;
  EXPECT_EQ(v3->time(&ops, page, &t), 1234);
  EXPECT_EQ(t, 1234);
  EXPECT_EQ(v3->time(&ops, page, nullptr), 1234);
}

}  // namespace
