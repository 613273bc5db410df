// The x86-64 decoder and the site finder: instruction lengths of encodings
// compiled vDSO code uses (from objdump of the 6.1, 6.12 and 6.18 images),
// the running kernel's image decoded instruction for instruction as
// objdump decodes it, and its counter reads, system call and data
// references found where the kernel's code has them.

#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "host/vdso_image.h"
#include "host/vdso_sites.h"
#include "host/x86_decode.h"

namespace vdsolab::host {
namespace {

std::vector<uint8_t> Hex(const std::string& s) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < s.size();) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    out.push_back(
        static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
    i += 2;
  }
  return out;
}

struct Case {
  const char* bytes;
  int length;
  const char* what;
};

TEST(X86Decode, LengthsOfTheEncodingsVdsoCodeUses) {
  const Case cases[] = {
      {"55", 1, "push %rbp"},
      {"48 89 e5", 3, "mov %rsp,%rbp"},
      {"41 56", 2, "push %r14"},
      {"48 83 e4 f0", 4, "and $-16,%rsp"},
      {"83 ff 17", 3, "cmp $0x17,%edi"},
      {"0f 87 d2 00 00 00", 6, "ja rel32"},
      {"b8 01 00 00 00", 5, "mov $1,%eax"},
      {"4c 8d 15 ea 94 ff ff", 7, "lea rip,%r10"},
      {"d3 e0", 2, "shl %cl,%eax"},
      {"81 e2 83 08 00 00", 6, "and $0x883,%edx"},
      {"45 8b 1a", 3, "mov (%r10),%r11d"},
      {"41 8b 42 04", 4, "mov 4(%r10),%eax"},
      {"0f 01 f9", 3, "rdtscp"},
      {"66 90", 2, "xchg %ax,%ax"},
      {"48 0f ba f2 3f", 5, "btr $63,%rdx"},
      {"4c 63 c7", 3, "movslq %edi,%r8"},
      {"49 2b 52 08", 4, "sub 8(%r10),%rdx"},
      {"49 39 52 10", 4, "cmp %rdx,16(%r10)"},
      {"48 0f af c2", 4, "imul %rdx,%rax"},
      {"48 3d ff c9 9a 3b", 6, "cmp $imm32,%rax"},
      {"0f 05", 2, "syscall"},
      {"41 81 7a 04 ff ff ff 7f", 8, "cmpl $0x7fffffff,4(%r10)"},
      {"f3 90", 2, "pause"},
      {"e9 13 ff ff ff", 5, "jmp rel32"},
      {"48 0f ad d0", 4, "shrd %cl,%rdx,%rax"},
      {"48 0f 45 c2", 4, "cmovne"},
      {"e8 12 fb ff ff", 5, "call rel32"},
      {"66 2e 0f 1f 84 00 00 00 00 00", 10, "cs nopw"},
      {"66 66 2e 0f 1f 84 00 00 00 00 00", 11, "data16 cs nopw"},
      {"0f 1f 44 00 00", 5, "nopl 0(%rax,%rax)"},
      {"48 b8 90 00 00 00 03 00 00 00", 10, "movabs"},
      {"0f 28 2d 99 f2 ff ff", 7, "movaps rip,%xmm5"},
      {"66 0f 70 d2 39", 5, "pshufd"},
      {"66 0f 72 f0 10", 5, "pslld $16"},
      {"66 45 0f d4 c1", 5, "paddq"},
      {"f3 0f c7 f8", 4, "rdpid"},
      {"f6 05 d4 c7 ff ff 01", 7, "testb $1,rip"},
      {"f7 05 d4 c7 ff ff 01 00 00 00", 10, "testl $1,rip"},
      {"f3 48 ab", 3, "rep stos"},
      {"0f be 15 bb c7 ff ff", 7, "movsbl rip,%edx"},
      {"48 83 3c 19 00", 5, "cmpq $0,(%rcx,%rbx)"},
      {"c7 46 fc 00 00 00 00", 7, "movl $0,-4(%rsi)"},
      {"0f ae e8", 3, "lfence"},
      {"0f 31", 2, "rdtsc"},
      {"c5 f9 6f c1", 4, "vmovdqa (VEX2)"},
      {"c4 e3 79 0f c1 08", 6, "vpalignr (VEX3, map 3, imm8)"},
      {"62 f1 7d 48 6f 44 24 01", 8, "vmovdqa32 (EVEX, disp8)"},
      {"c8 10 00 00", 4, "enter"},
      {"a1 00 00 00 00 00 00 00 00", 9, "mov moffs64,%eax"},
  };
  for (const Case& c : cases) {
    const std::vector<uint8_t> b = Hex(c.bytes);
    std::optional<X86Insn> d = DecodeX86(b.data(), b.size());
    ASSERT_TRUE(d.has_value()) << c.what;
    EXPECT_EQ(d->length, c.length) << c.what;
  }
  // Truncated and invalid bytes are refused, never read past.
  const std::vector<uint8_t> cut = Hex("41 81 7a 04 ff ff ff");
  EXPECT_FALSE(DecodeX86(cut.data(), cut.size()).has_value());
  const std::vector<uint8_t> bad = Hex("06");
  EXPECT_FALSE(DecodeX86(bad.data(), bad.size()).has_value());
}

TEST(X86Decode, MemoryOperandsAndPlainLoads) {
  struct Load {
    const char* bytes;
    uint32_t size;
    bool plain;
    int reg;
  };
  const Load loads[] = {
      {"45 8b 1a", 4, true, 11},     // mov (%r10),%r11d
      {"49 8b 58 30", 8, true, 3},   // mov 0x30(%r8),%rbx
      {"49 2b 52 08", 8, false, 2},  // sub 8(%r10),%rdx
      {"49 39 52 10", 8, false, 2},  // cmp %rdx,16(%r10)
      {"41 81 7a 04 ff ff ff 7f", 4, false, 7},
      {"0f be 15 bb c7 ff ff", 1, true, 2},  // movsbl rip,%edx
      {"0f b7 06", 2, true, 0},              // movzwl (%rsi),%eax
      {"48 63 06", 4, true, 0},              // movslq (%rsi),%rax
      {"f6 05 d4 c7 ff ff 01", 1, false, 0},
  };
  for (const Load& l : loads) {
    const std::vector<uint8_t> b = Hex(l.bytes);
    std::optional<X86Insn> d = DecodeX86(b.data(), b.size());
    ASSERT_TRUE(d.has_value()) << l.bytes;
    EXPECT_TRUE(d->addresses_memory()) << l.bytes;
    EXPECT_EQ(MemoryOperandSize(*d), l.size) << l.bytes;
    std::optional<PlainLoad> p = AsPlainLoad(*d);
    EXPECT_EQ(p.has_value(), l.plain) << l.bytes;
    if (p) {
      EXPECT_EQ(p->reg, l.reg) << l.bytes;
      EXPECT_EQ(p->src_size, l.size) << l.bytes;
    }
  }
  const std::vector<uint8_t> lea = Hex("4c 8d 15 ea 94 ff ff");
  std::optional<X86Insn> d = DecodeX86(lea.data(), lea.size());
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->addresses_memory());
  EXPECT_TRUE(d->rip_relative);
  EXPECT_EQ(d->disp, -0x6b16);
}

// Whether this machine should have a usable vDSO (x86-64 Linux).
bool ShouldHaveVdso() {
  struct utsname u;
  return uname(&u) == 0 && std::string(u.machine) == "x86_64";
}

TEST(VdsoCode, RunningImageDecodesAsObjdumpDecodesIt) {
  absl::StatusOr<VdsoImage> img = ReadRunningVdsoImage();
  if (!img.ok()) {
    if (ShouldHaveVdso())
      FAIL() << "x86-64 Linux without a vDSO: " << img.status();
    GTEST_SKIP() << "not x86-64: " << img.status();
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/running-vdso.so";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(img->file.data()),
              static_cast<std::streamsize>(img->file.size()));
  }
  // objdump (binutils, which bazelw installs) is the reference decoder.
  const std::string cmd = "objdump -d -j .text --no-show-raw-insn " + path;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::set<uint64_t> objdump_starts;
  char line[512];
  while (fgets(line, sizeof line, p) != nullptr) {
    unsigned long long addr = 0;
    char colon = 0;
    if (std::sscanf(line, " %llx%c", &addr, &colon) == 2 && colon == ':' &&
        line[0] == ' ') {
      objdump_starts.insert(addr);
    }
  }
  ASSERT_EQ(pclose(p), 0) << "objdump failed (bazelw installs binutils)";
  const ElfSection* text = img->Section(".text");
  ASSERT_NE(text, nullptr);
  std::set<uint64_t> ours;
  for (uint64_t pc = text->addr; pc < text->addr + text->size;) {
    std::optional<X86Insn> d =
        DecodeX86(img->loaded.data() + pc, text->addr + text->size - pc);
    ASSERT_TRUE(d.has_value()) << "at " << std::hex << pc;
    ours.insert(pc);
    pc += d->length;
  }
  EXPECT_EQ(ours, objdump_starts);
  std::printf("running vDSO (Linux %s): %zu instructions, as objdump\n",
              img->Version().c_str(), ours.size());
}

TEST(VdsoCode, RunningImageHasOrderedCounterReadsASyscallAndDataBelow) {
  absl::StatusOr<VdsoImage> img = ReadRunningVdsoImage();
  if (!img.ok()) {
    if (ShouldHaveVdso())
      FAIL() << "x86-64 Linux without a vDSO: " << img.status();
    GTEST_SKIP() << "not x86-64: " << img.status();
  }
  ASSERT_TRUE(img->linux_version_code.has_value());
  absl::StatusOr<CodeScan> scan = ScanVdsoCode(*img);
  ASSERT_TRUE(scan.ok()) << scan.status();
  int counters = 0, syscalls = 0;
  for (const Site& s : scan->sites) {
    std::printf("  site %#llx (%d bytes): %s\n",
                static_cast<unsigned long long>(s.addr), s.length,
                s.text.c_str());
    if (s.counter) {
      ++counters;
      // The kernel reads the counter with rdtsc_ordered(): alternatives.
      EXPECT_TRUE(s.alternative) << s.text;
      EXPECT_EQ(*s.counter, vdso::CounterRead::kOrdered);
    } else {
      ++syscalls;
      EXPECT_EQ(s.text, "syscall");
    }
  }
  EXPECT_GE(counters, 1);
  EXPECT_GE(syscalls, 1);
  int below = 0;
  for (const RipReference& r : scan->references) below += r.target < 0;
  EXPECT_GE(below, 1) << "the code reaches its data pages below the image";
  // Patching leaves ud2 at every site.
  std::vector<uint8_t> copy = img->loaded;
  PatchSites(scan->sites, copy.data(), copy.size());
  for (const Site& s : scan->sites) {
    EXPECT_EQ(copy[s.addr], 0x0f);
    EXPECT_EQ(copy[s.addr + 1], 0x0b);
  }
}

TEST(VdsoImage, RefusesWhatIsNotAnX8664Vdso) {
  EXPECT_FALSE(ParseVdsoImage({}, "empty").ok());
  EXPECT_FALSE(ParseVdsoImage(std::vector<uint8_t>(64, 0x7f), "junk").ok());
  absl::StatusOr<VdsoImage> img = ReadRunningVdsoImage();
  if (!img.ok()) GTEST_SKIP() << img.status();
  // Truncated anywhere: an error, never a read past the end.
  for (size_t n : {size_t{16}, size_t{100}, img->file.size() / 2}) {
    std::vector<uint8_t> cut(img->file.begin(), img->file.begin() + n);
    EXPECT_FALSE(ParseVdsoImage(cut, "cut").ok()) << n;
  }
}

}  // namespace
}  // namespace vdsolab::host
