// The assembly rewriter on the shapes gcc and clang print for the x86
// vDSO's counter reads and syscall fallback: the ALTERNATIVE_2 block of
// rdtsc_ordered() (gcc keeps .pushsection/.popsection, clang flattens them
// into .section/.text), a bare rdtsc, `lfence; rdtsc`, rdtscp and syscall.
// The snippets are written for this test (they are not compiler output of
// any kernel file).

#include "ktree/internal/asm_rewrite.h"

#include <gtest/gtest.h>

#include <string>

#include "ktree/internal/text.h"

namespace vdsolab::ktree::internal {
namespace {

int Count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos;
       at = hay.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// gcc: an alternative with two replacements, each in its own
// .pushsection block.
constexpr char kGccOrdered[] = R"(	.text
f:
	movl	4(%rbx), %eax
#APP
# 12 "msr.h" 1
	# ALT: oldinstr
771:
	rdtsc
772:
.skip -(((775f-774f)-(772b-771b)) > 0) * ((775f-774f)-(772b-771b)),0x90
773:
.pushsection .altinstructions,"a"
 .long 771b - .
.popsection
.pushsection .altinstr_replacement, "ax"
774:
	lfence; rdtsc
775:
.popsection
.pushsection .altinstr_replacement, "ax"
774:
	rdtscp
775:
.popsection
# 0 "" 2
#NO_APP
	salq	$32, %rdx
)";

// clang: the same block flattened, the replacement on two lines.
constexpr char kClangOrdered[] = R"(	.text
g:
	#APP
.Ltmp0:
	rdtsc
.Ltmp1:
	.section	.altinstructions,"a",@progbits
	.long	.Ltmp0-.Ltmp7
	.text

	.section	.altinstr_replacement,"ax",@progbits
.Ltmp3:
	lfence
	rdtsc
.Ltmp2:
.Ltmp5:
	rdtscp
.Ltmp4:
	.text
	#NO_APP
	shlq	$32, %r14
)";

TEST(AsmRewrite, AlternativeBlockIsTheOrderedRead) {
  for (const char* text : {kGccOrdered, kClangOrdered}) {
    absl::StatusOr<AsmRewrite> r = RewriteCounterAndSyscallSites(text);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->ordered, 1) << r->text;
    EXPECT_EQ(r->plain, 0);
    EXPECT_EQ(r->rdtscp, 0);  // The replacement's rdtscp never runs.
    EXPECT_EQ(Count(r->text, "call vdsolab_thunk_rdtsc_ordered"), 1);
    // The replacements stay (the .skip and .altinstructions refer to their
    // labels) but in a section that is not executable.
    EXPECT_FALSE(Contains(r->text, ".altinstr_replacement,")) << r->text;
    EXPECT_GE(r->replacement_sections, 1);
    EXPECT_TRUE(Contains(r->text, ".vdsolab_unused_altinstr_replacement"));
  }
}

TEST(AsmRewrite, BareFencedRdtscpAndSyscallSites) {
  constexpr char kText[] = R"(	.text
h:
#APP
	rdtsc
#NO_APP
#APP
	lfence; rdtsc
#NO_APP
#APP
	mfence
	rdtsc
#NO_APP
	rdtsc
#APP
	rdtscp
#NO_APP
	movl	$228, %eax
#APP
	syscall
#NO_APP
	ret
	.section .text.unlikely,"ax",@progbits
	syscall
	.section .rodata
	.ascii "rdtsc; syscall"
)";
  absl::StatusOr<AsmRewrite> r = RewriteCounterAndSyscallSites(kText);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->plain, 2) << r->text;  // In an asm block and from a builtin.
  EXPECT_EQ(r->ordered, 2);           // lfence; rdtsc and mfence, rdtsc
  EXPECT_EQ(r->rdtscp, 1);
  EXPECT_EQ(r->syscalls, 2);  // .text and .text.unlikely
  EXPECT_TRUE(Contains(r->text, "lfence; call vdsolab_thunk_rdtsc_ordered"))
      << r->text;
  EXPECT_EQ(Count(r->text, "call vdsolab_thunk_syscall"), 2);
  EXPECT_EQ(Count(r->text, "call vdsolab_thunk_rdtscp"), 1);
  // Strings and comments are not instructions.
  EXPECT_TRUE(Contains(r->text, ".ascii \"rdtsc; syscall\""));
}

TEST(AsmRewrite, ALabelBetweenFenceAndRdtscMakesItBare) {
  constexpr char kText[] = "\t.text\n\tlfence\n1:\trdtsc\n";
  absl::StatusOr<AsmRewrite> r = RewriteCounterAndSyscallSites(kText);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->plain, 1) << r->text;
  EXPECT_TRUE(Contains(r->text, "1:\tcall vdsolab_thunk_rdtsc\n")) << r->text;
}

TEST(AsmRewrite, RefusesSystemCallsItCannotAnswer) {
  for (const char* insn : {"sysenter", "int $0x80"}) {
    const std::string text =
        std::string("\t.text\n\t.type k,@function\nk:\n\t") + insn + "\n";
    absl::StatusOr<AsmRewrite> r = RewriteCounterAndSyscallSites(text);
    ASSERT_FALSE(r.ok()) << insn;
    EXPECT_TRUE(Contains(std::string(r.status().message()), insn))
        << r.status();
    EXPECT_TRUE(Contains(std::string(r.status().message()), "in k"))
        << r.status();
  }
}

TEST(AsmRewrite, LeavesEverythingElseAlone) {
  constexpr char kText[] =
      "\t.text\nf:\n\tmovq\t%fs:40, %rax\n\tcall\t__tsan_read4@PLT\n\tret\n";
  absl::StatusOr<AsmRewrite> r = RewriteCounterAndSyscallSites(kText);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->text, kText);
  EXPECT_EQ(r->ordered + r->plain + r->rdtscp + r->syscalls, 0);
}

}  // namespace
}  // namespace vdsolab::ktree::internal
