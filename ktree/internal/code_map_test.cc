#include "ktree/internal/code_map.h"

#include <string>

#include "gtest/gtest.h"

namespace vdsolab::ktree::internal {
namespace {

// GCC's shape: an entry point calling a helper, which has a cold part; a
// second exported function nothing of vdsolab's calls; a function reached
// only through a table of pointers; a string constant.
std::string Assembly(const std::string& unreached_body,
                     const std::string& helper_body) {
  return "\t.file\t\"wrapper.c\"\n"
         "\t.text\n"
         "\t.type\thelper, @function\n"
         "helper:\n"
         ".LFB1:\n" +
         helper_body +
         "\tjmp\t.L7\n"
         "\t.section\t.text.unlikely\n"
         "\t.type\thelper.cold, @function\n"
         "helper.cold:\n"
         ".L7:\n"
         "\tud2\n"
         "\t.size\thelper.cold, .-helper.cold\n"
         "\t.text\n"
         "\t.size\thelper, .-helper\n"
         "\t.globl\t__vdso_gettimeofday\n"
         "\t.type\t__vdso_gettimeofday, @function\n"
         "__vdso_gettimeofday:\n"
         ".LFB2:\n"
         "\tleaq\t.LC0(%rip), %rax\n" +
         unreached_body +
         "\tret\n"
         "\t.size\t__vdso_gettimeofday, .-__vdso_gettimeofday\n"
         "\t.weak\tgettimeofday\n"
         "\t.set\tgettimeofday,__vdso_gettimeofday\n"
         "\t.type\tby_pointer, @function\n"
         "by_pointer:\n"
         "\tret\n"
         "\t.size\tby_pointer, .-by_pointer\n"
         "\t.section\t.data.rel.ro\n"
         "table:\n"
         "\t.quad\tby_pointer\n"
         "\t.section\t.rodata.str1.1\n"
         ".LC0:\n"
         "\t.string\t\"x\"\n"
         "\t.globl\tentry\n"
         "\t.type\tentry, @function\n"
         "entry:\n"
         "\tcall\thelper\n"
         "\tret\n"
         "\t.size\tentry, .-entry\n"
         "\t.ident\t\"GCC: (Debian 12.2.0-14) 12.2.0\"\n";
}

TEST(CodeMapTest, FindsFunctionsAndWhatTheEntryReaches) {
  const CodeMap map = MapCode(Assembly("\tmovl\t$1000, %ecx\n", ""), "entry");
  for (const char* f : {"entry", "helper", "helper.cold", "by_pointer",
                        "__vdso_gettimeofday", kOutsideFunctions}) {
    EXPECT_EQ(map.functions.count(f), 1u) << f;
  }
  EXPECT_EQ(map.functions.size(), 6u);
  // helper by its call, its cold part with it, by_pointer through data;
  // not the exported function its alias (.set) names.
  EXPECT_EQ(map.reached,
            (std::set<std::string>{"entry", "helper", "helper.cold",
                                   "by_pointer", kOutsideFunctions}));
}

TEST(CodeMapTest, AChangeIsAttributedToItsFunctionAlone) {
  const CodeMap base = MapCode(Assembly("\tmovl\t$1000, %ecx\n", ""), "entry");
  // The unreached function changes, and gains a local label: the labels
  // after it are renumbered by the compiler, which must not make the
  // other functions look changed.
  std::string patched_text =
      Assembly("\tmovl\t$1024, %ecx\n.L3:\n\tjne\t.L3\n", "");
  const CodeMap patched = MapCode(patched_text, "entry");
  EXPECT_EQ(ChangedFunctions(base, patched),
            std::vector<std::string>{"__vdso_gettimeofday"});
  const CodeMap helper_changed =
      MapCode(Assembly("\tmovl\t$1000, %ecx\n", "\tnop\n"), "entry");
  EXPECT_EQ(ChangedFunctions(base, helper_changed),
            std::vector<std::string>{"helper"});
  // Comment and .file/.ident lines are not code.
  std::string commented = Assembly("\tmovl\t$1000, %ecx\n# 12 \"x.c\"\n", "");
  EXPECT_TRUE(ChangedFunctions(base, MapCode(commented, "entry")).empty());
}

TEST(CodeMapTest, RenumberedLocalLabelsHashAlike) {
  const std::string a = Assembly("", "\tjne\t.L12\n.L12:\n");
  const std::string b = Assembly("", "\tjne\t.L40\n.L40:\n");
  const std::string c = Assembly("", "\tjne\t.L40\n.L41:\n");
  EXPECT_TRUE(
      ChangedFunctions(MapCode(a, "entry"), MapCode(b, "entry")).empty());
  EXPECT_EQ(ChangedFunctions(MapCode(a, "entry"), MapCode(c, "entry")),
            std::vector<std::string>{"helper"});
}

TEST(CodeMapTest, RemovedFunctionsCountAsChanged) {
  const CodeMap base = MapCode(Assembly("", ""), "entry");
  CodeMap fewer = base;
  fewer.functions.erase("by_pointer");
  EXPECT_EQ(ChangedFunctions(base, fewer),
            std::vector<std::string>{"by_pointer"});
}

// Clang's shape: "NAME:  # @NAME" labels, .Lfunc_end sizes, .LBB labels.
TEST(CodeMapTest, ReadsClangsAssemblyToo) {
  const std::string text =
      "\t.text\n"
      "\t.type\thelper,@function\n"
      "helper:                                 # @helper\n"
      "\tmovl\t$1000, %ecx\n"
      ".LBB0_1:\n"
      "\tjne\t.LBB0_1\n"
      "\tretq\n"
      ".Lfunc_end0:\n"
      "\t.size\thelper, .Lfunc_end0-helper\n"
      "\t.globl\t__vdso_time\n"
      "\t.type\t__vdso_time,@function\n"
      "__vdso_time:                            # @__vdso_time\n"
      "\tretq\n"
      ".Lfunc_end1:\n"
      "\t.size\t__vdso_time, .Lfunc_end1-__vdso_time\n"
      "\t.globl\tentry\n"
      "\t.type\tentry,@function\n"
      "entry:                                  # @entry\n"
      "\tjmp\thelper                          # TAILCALL\n"
      ".Lfunc_end2:\n"
      "\t.size\tentry, .Lfunc_end2-entry\n";
  const CodeMap map = MapCode(text, "entry");
  EXPECT_EQ(map.functions.count("helper"), 1u);
  EXPECT_EQ(map.functions.count("__vdso_time"), 1u);
  EXPECT_EQ(map.reached,
            (std::set<std::string>{"entry", "helper", kOutsideFunctions}));
  std::string changed = text;
  const std::string body = "# @__vdso_time\n\t";
  const size_t at = changed.find(body);
  ASSERT_NE(at, std::string::npos);
  changed.insert(at + body.size(), "nop\n\t");
  EXPECT_EQ(ChangedFunctions(map, MapCode(changed, "entry")),
            std::vector<std::string>{"__vdso_time"});
}

TEST(CodeMapTest, RoundTripsThroughTheMetaFile) {
  const CodeMap map = MapCode(Assembly("", ""), "entry");
  EXPECT_EQ(ParseCodeMap(FormatFunctions(map), FormatReached(map)), map);
  EXPECT_TRUE(ParseCodeMap("", "").functions.empty());
}

}  // namespace
}  // namespace vdsolab::ktree::internal
