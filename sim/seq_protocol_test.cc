#include "sim/seq_protocol.h"

#include <map>

#include "gtest/gtest.h"

namespace vdsolab::sim {
namespace {

using variants::Field;
using variants::FieldKind;

const variants::Layout& TwoRecords() {
  static const variants::Layout* layout = new variants::Layout(
      "test", "two records",
      {Field{"a.seq", 0, 4, FieldKind::kSeq}, Field{"a.x", 8, 8},
       Field{"b.seq", 64, 4, FieldKind::kSeq}, Field{"b.x", 72, 8}});
  return *layout;
}

vdso::VvarUpdate Update(std::initializer_list<vdso::VvarStore> stores) {
  return vdso::VvarUpdate{std::vector<vdso::VvarStore>(stores)};
}

TEST(SeqProtocol, KernelUpdatesKeepIt) {
  std::map<uint32_t, uint32_t> words;
  for (uint32_t seq = 0; seq < 10; seq += 2) {
    EXPECT_EQ(SeqProtocolMismatch(Update({{0, 4, seq + 1},
                                          {64, 4, seq + 1},
                                          {8, 8, 42},
                                          {72, 8, 43},
                                          {0, 4, seq + 2},
                                          {64, 4, seq + 2}}),
                                  TwoRecords(), &words),
              "");
  }
  EXPECT_EQ(words[0], 10u);
  // An update of one record only (an aux clock's) leaves the other alone.
  EXPECT_EQ(SeqProtocolMismatch(Update({{64, 4, 11}, {72, 8, 1}, {64, 4, 12}}),
                                TwoRecords(), &words),
            "");
  EXPECT_EQ(words[0], 10u);
  EXPECT_EQ(words[64], 12u);
}

TEST(SeqProtocol, WrapsAt32Bits) {
  std::map<uint32_t, uint32_t> words{{0, 0xfffffffeu}};
  EXPECT_EQ(SeqProtocolMismatch(Update({{0, 4, 0xffffffffu}, {0, 4, 0}}),
                                TwoRecords(), &words),
            "");
}

TEST(SeqProtocol, FindsOtherBumps) {
  struct Case {
    const char* what;
    vdso::VvarUpdate update;
  };
  const Case cases[] = {
      {"begin one below", Update({{0, 4, 0xffffffffu}, {0, 4, 2}})},
      {"end one above", Update({{0, 4, 1}, {0, 4, 3}})},
      {"no begin", Update({{8, 8, 5}, {0, 4, 2}})},
      {"no end", Update({{0, 4, 1}, {8, 8, 5}})},
      {"begin twice", Update({{0, 4, 1}, {0, 4, 1}, {0, 4, 2}})},
      {"even begin", Update({{0, 4, 2}, {0, 4, 4}})},
  };
  for (const Case& c : cases) {
    std::map<uint32_t, uint32_t> words;
    const std::string finding =
        SeqProtocolMismatch(c.update, TwoRecords(), &words);
    EXPECT_NE(finding.find("a.seq"), std::string::npos)
        << c.what << ": " << finding;
  }
}

}  // namespace
}  // namespace vdsolab::sim
