// A plugin record's strings are accepted exactly when they are UTF-8
// (variants/plugin/internal/utf8.h), judged against RFC 3629's grammar of
// byte ranges, written here independently of the loader's decoder: every
// code point U+0000..U+10FFFF but the surrogates, encoded by the test, is
// accepted, and any byte string (valid text with bytes changed, cut short
// or inserted) is accepted exactly when the grammar accepts it. (A
// continuation-byte check that refused all multibyte text passed every
// test: the only non-ASCII record string was refused at its lead byte.)

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "variants/plugin/internal/utf8.h"

namespace vdsolab {
namespace {

using variants::plugin_internal::IsUtf8;

std::string Encode(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xf0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

// RFC 3629, section 4: each sequence as ranges of its bytes.
bool Rfc3629(const std::string& text) {
  struct Form {
    int n;
    uint8_t lo[4], hi[4];
  };
  static constexpr Form kForms[] = {
      {1, {0x00}, {0x7f}},
      {2, {0xc2, 0x80}, {0xdf, 0xbf}},
      {3, {0xe0, 0xa0, 0x80}, {0xe0, 0xbf, 0xbf}},
      {3, {0xe1, 0x80, 0x80}, {0xec, 0xbf, 0xbf}},
      {3, {0xed, 0x80, 0x80}, {0xed, 0x9f, 0xbf}},
      {3, {0xee, 0x80, 0x80}, {0xef, 0xbf, 0xbf}},
      {4, {0xf0, 0x90, 0x80, 0x80}, {0xf0, 0xbf, 0xbf, 0xbf}},
      {4, {0xf1, 0x80, 0x80, 0x80}, {0xf3, 0xbf, 0xbf, 0xbf}},
      {4, {0xf4, 0x80, 0x80, 0x80}, {0xf4, 0x8f, 0xbf, 0xbf}},
  };
  size_t i = 0;
  while (i < text.size()) {
    bool matched = false;
    for (const Form& f : kForms) {
      if (i + static_cast<size_t>(f.n) > text.size()) continue;
      bool all = true;
      for (int k = 0; k < f.n && all; ++k) {
        const auto b = static_cast<uint8_t>(text[i + static_cast<size_t>(k)]);
        all = b >= f.lo[k] && b <= f.hi[k];
      }
      if (all) {
        i += static_cast<size_t>(f.n);
        matched = true;
        break;
      }
    }
    if (!matched) return false;
  }
  return true;
}

rc::Gen<uint32_t> CodePoint() {
  return rc::gen::suchThat(
      rc::gen::oneOf(
          rc::gen::inRange<uint32_t>(0x80, 0x800),
          rc::gen::inRange<uint32_t>(0x800, 0x10000),
          rc::gen::inRange<uint32_t>(0x10000, 0x110000),
          rc::gen::element<uint32_t>(0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000,
                                     0xffff, 0x10000, 0x10ffff)),
      [](uint32_t cp) { return cp < 0xd800 || cp > 0xdfff; });
}

RC_GTEST_PROP(PluginUtf8, EveryCodePointButTheSurrogatesIsAccepted, ()) {
  const std::vector<uint32_t> cps = *rc::gen::container<std::vector<uint32_t>>(
      rc::gen::oneOf(CodePoint(), rc::gen::inRange<uint32_t>(0x20, 0x7f)));
  std::string text;
  for (uint32_t cp : cps) text += Encode(cp);
  RC_CLASSIFY(text.size() > cps.size(), "multibyte");
  if (!IsUtf8(text)) RC_FAIL("refused: " + absl::CHexEscape(text));
}

RC_GTEST_PROP(PluginUtf8, AcceptedExactlyWhenTheGrammarAccepts, ()) {
  // Valid text, then bytes changed, cut or inserted where the generator
  // says: mostly near-misses (a continuation byte wrong, a surrogate, an
  // overlong form, a sequence cut short), some noise.
  std::string text;
  for (uint32_t cp : *rc::gen::container<std::vector<uint32_t>>(CodePoint())) {
    text += Encode(cp);
  }
  const int edits = *rc::gen::inRange(0, 4);
  for (int e = 0; e < edits; ++e) {
    const auto byte = static_cast<char>(*rc::gen::oneOf(
        rc::gen::inRange<int>(0x80, 0xc0), rc::gen::inRange<int>(0xc0, 0x100),
        rc::gen::element<int>(0xc0, 0xc1, 0xe0, 0xed, 0xf0, 0xf4, 0xf5, 0xff,
                              0x9f, 0xa0, 0x8f, 0x90),
        rc::gen::inRange<int>(0, 0x80)));
    const size_t at = *rc::gen::inRange<size_t>(0, text.size() + 1);
    switch (*rc::gen::inRange(0, 3)) {
      case 0:
        text.insert(at, 1, byte);
        break;
      case 1:
        if (at < text.size()) text[at] = byte;
        break;
      default:
        text.resize(at);
        break;
    }
  }
  const bool want = Rfc3629(text);
  RC_CLASSIFY(want, "UTF-8");
  RC_CLASSIFY(!want, "not UTF-8");
  if (IsUtf8(text) != want) {
    RC_FAIL(absl::StrCat(want ? "refused: " : "accepted: ",
                         absl::CHexEscape(text)));
  }
}

}  // namespace
}  // namespace vdsolab
