#include "host/vdso_sites.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "host/x86_decode.h"

namespace vdsolab::host {
namespace {

struct AltEntry {
  uint64_t instr = 0;
  uint64_t repl = 0;
  uint8_t instrlen = 0;
  uint8_t repllen = 0;
};

// struct alt_instr changed over the years; every era keeps the two s32
// offsets first and the two lengths last:
//   14 bytes (6.3+):   s32 instr, s32 repl, u32 ft_flags, u8 instrlen, u8
//   repllen 12 bytes (5.x-6.2): s32 instr, s32 repl, u16 cpuid, u8 instrlen, u8
//   repllen 13 bytes (4.x):    s32 instr, s32 repl, u16 cpuid, u8 instrlen,
//                      u8 repllen, u8 padlen
// The format is the one whose every entry points into .text and
// .altinstr_replacement.
struct AltFormat {
  uint32_t size;
  uint32_t instrlen_at;
};
constexpr AltFormat kAltFormats[] = {{14, 12}, {12, 10}, {13, 10}};

absl::StatusOr<std::vector<AltEntry>> ReadAlternatives(const VdsoImage& image,
                                                       const ElfSection& text) {
  std::vector<AltEntry> entries;
  const ElfSection* alt = image.Section(".altinstructions");
  if (alt == nullptr || alt->size == 0) return entries;
  const ElfSection* repl = image.Section(".altinstr_replacement");
  const auto in = [](const ElfSection* s, uint64_t a, uint64_t n) {
    return s != nullptr && a >= s->addr && n <= s->size &&
           a - s->addr <= s->size - n;
  };
  for (const AltFormat& fmt : kAltFormats) {
    if (alt->size % fmt.size != 0) continue;
    entries.clear();
    bool ok = true;
    for (uint64_t off = 0; off < alt->size && ok; off += fmt.size) {
      const uint64_t at = alt->addr + off;
      int32_t instr_rel = 0, repl_rel = 0;
      std::memcpy(&instr_rel, image.loaded.data() + at, 4);
      std::memcpy(&repl_rel, image.loaded.data() + at + 4, 4);
      AltEntry e;
      e.instr = at + static_cast<uint64_t>(static_cast<int64_t>(instr_rel));
      e.repl = at + 4 + static_cast<uint64_t>(static_cast<int64_t>(repl_rel));
      e.instrlen = image.loaded[at + fmt.instrlen_at];
      e.repllen = image.loaded[at + fmt.instrlen_at + 1];
      ok = e.instrlen > 0 && in(&text, e.instr, e.instrlen) &&
           (e.repllen == 0 || in(repl, e.repl, e.repllen));
      entries.push_back(e);
    }
    if (ok) return entries;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      ".altinstructions (%d bytes) is in no struct alt_instr format vdsolab "
      "knows (14, 12 or 13 bytes an entry, pointing into .text and "
      ".altinstr_replacement)",
      alt->size));
}

bool IsRdtsc(const X86Insn& i) { return i.Is(1, 0x31); }
bool IsRdtscp(const X86Insn& i) {
  return i.Is(1, 0x01) && i.modrm == 0xf9 && !i.opsize && i.rep == 0;
}
bool IsFence(const X86Insn& i) {  // lfence or mfence
  return i.Is(1, 0xae) && (i.modrm == 0xe8 || i.modrm == 0xf0);
}
bool IsNop(const X86Insn& i) {
  return (i.Is(0, 0x90) && (i.rex & 1) == 0 && i.rep == 0) || i.Is(1, 0x1f);
}
bool IsSyscall(const X86Insn& i) {
  return i.Is(1, 0x05) || i.Is(1, 0x34) ||
         (i.Is(0, 0xcd) && i.imm_size == 1);  // int $N: checked below.
}

// The instructions of [p, p + n), as text; false if they do not decode.
bool Describe(const uint8_t* p, size_t n, std::vector<std::string>* parts,
              int* counters) {
  size_t i = 0;
  while (i < n) {
    std::optional<X86Insn> d = DecodeX86(p + i, n - i);
    if (!d) return false;
    if (IsRdtsc(*d)) {
      parts->push_back("rdtsc");
      ++*counters;
    } else if (IsRdtscp(*d)) {
      parts->push_back("rdtscp");
      ++*counters;
    } else if (IsFence(*d)) {
      parts->push_back(d->modrm == 0xe8 ? "lfence" : "mfence");
    } else if (IsNop(*d)) {
      // padding
    } else if (d->Is(0, 0xeb) && i + d->length + p[i + 1] <= n) {
      // A short jump over the rest of the site (old nop padding).
    } else {
      parts->push_back("other");
    }
    i += d->length;
  }
  return true;
}

}  // namespace

absl::StatusOr<CodeScan> ScanVdsoCode(const VdsoImage& image) {
  const ElfSection* text = image.Section(".text");
  if (text == nullptr || text->size == 0) {
    return absl::InvalidArgumentError("the image has no .text section");
  }
  absl::StatusOr<std::vector<AltEntry>> alts = ReadAlternatives(image, *text);
  if (!alts.ok()) return alts.status();
  const uint8_t* bytes = image.loaded.data();
  CodeScan scan;

  // Alternative sites: the entries of one site share its address (nested
  // ALTERNATIVE_2 has two); a site is as long as its longest entry says.
  std::map<uint64_t, std::vector<const AltEntry*>> by_site;
  for (const AltEntry& e : *alts) by_site[e.instr].push_back(&e);
  std::map<uint64_t, Site> alt_sites;  // Counter-reading sites by address.
  std::map<uint64_t, uint8_t> alt_len;
  scan.alternatives = by_site.size();
  for (const auto& [addr, entries] : by_site) {
    uint8_t len = 0;
    for (const AltEntry* e : entries) len = std::max(len, e->instrlen);
    alt_len[addr] = len;
    std::vector<std::string> orig;
    int orig_counters = 0;
    if (!Describe(bytes + addr, len, &orig, &orig_counters)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the alternative site at %#x (%d bytes) does not decode", addr, len));
    }
    std::vector<std::string> variants = {absl::StrJoin(orig, "; ")};
    int repl_counters = 0;
    for (const AltEntry* e : entries) {
      std::vector<std::string> r;
      int c = 0;
      if (!Describe(bytes + e->repl, e->repllen, &r, &c)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "a replacement of the alternative site at %#x does not decode",
            addr));
      }
      repl_counters += c;
      variants.push_back(r.empty() ? "nothing" : absl::StrJoin(r, "; "));
    }
    if (orig_counters == 0 && repl_counters == 0) continue;
    const bool only_counter =
        orig_counters == 1 &&
        std::all_of(orig.begin(), orig.end(), [](const std::string& s) {
          return s == "rdtsc" || s == "rdtscp" || s == "lfence" ||
                 s == "mfence";
        });
    if (!only_counter) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the alternative site at %#x (%s) reads the counter among other "
          "instructions: vdsolab cannot intercept it as one counter read",
          addr, absl::StrJoin(variants, " | ")));
    }
    Site s;
    s.addr = addr;
    s.length = len;
    s.counter = vdso::CounterRead::kOrdered;
    s.alternative = true;
    s.writes_ecx = true;  // The kernel's asm clobbers ecx (rdtscp).
    s.text = "alternative: " + absl::StrJoin(variants, " | ");
    alt_sites[addr] = s;
  }

  // The linear sweep over .text. Every function symbol must start an
  // instruction, or the sweep lost step.
  std::set<uint64_t> starts;
  const uint64_t end = text->addr + text->size;
  uint64_t pc = text->addr;
  std::optional<X86Insn> prev;
  while (pc < end) {
    if (auto it = alt_sites.find(pc); it != alt_sites.end()) {
      starts.insert(pc);
      scan.sites.push_back(it->second);
      pc += it->second.length;
      prev.reset();
      continue;
    }
    std::optional<X86Insn> d = DecodeX86(bytes + pc, end - pc);
    if (!d) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the .text at %#x does not decode as x86-64 (bytes %02x %02x %02x)",
          pc, bytes[pc], pc + 1 < end ? bytes[pc + 1] : 0,
          pc + 2 < end ? bytes[pc + 2] : 0));
    }
    starts.insert(pc);
    ++scan.instructions;
    if (d->rip_relative) {
      scan.references.push_back(RipReference{
          pc, static_cast<int64_t>(pc + d->length) + d->disp, d->Is(0, 0x8d)});
    }
    Site s;
    s.addr = pc;
    s.length = d->length;
    if (IsRdtsc(*d)) {
      const bool fenced = prev && IsFence(*prev);
      s.counter =
          fenced ? vdso::CounterRead::kOrdered : vdso::CounterRead::kPlain;
      s.text = fenced ? "fence; rdtsc" : "rdtsc";
      scan.sites.push_back(s);
    } else if (IsRdtscp(*d)) {
      s.counter = vdso::CounterRead::kRdtscp;
      s.writes_ecx = true;
      s.text = "rdtscp";
      scan.sites.push_back(s);
    } else if (IsSyscall(*d) && (!d->Is(0, 0xcd) || bytes[pc + 1] == 0x80)) {
      s.text = d->Is(1, 0x05)   ? "syscall"
               : d->Is(1, 0x34) ? "sysenter"
                                : "int $0x80";
      scan.sites.push_back(s);
    }
    prev = d;
    pc += d->length;
  }
  for (const auto& [addr, len] : alt_len) {
    if (!starts.count(addr)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the alternative site at %#x is not at an instruction boundary of "
          "the decoded .text",
          addr));
    }
  }
  for (const ElfSymbol& sym : image.symbols) {
    if (sym.type != STT_FUNC || sym.value < text->addr || sym.value >= end) {
      continue;
    }
    if (!starts.count(sym.value)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "decoding .text lost step: %s (%#x) is not at an instruction "
          "boundary",
          sym.name, sym.value));
    }
  }
  return scan;
}

void PatchSites(const std::vector<Site>& sites, uint8_t* loaded, size_t size) {
  for (const Site& s : sites) {
    if (s.length < 2 || s.addr + s.length > size) continue;
    loaded[s.addr] = 0x0f;  // ud2
    loaded[s.addr + 1] = 0x0b;
    std::memset(loaded + s.addr + 2, 0x90, s.length - 2u);
  }
}

std::vector<Site> CounterSites(const CodeScan& scan) {
  std::vector<Site> out;
  for (const Site& s : scan.sites) {
    if (s.counter) out.push_back(s);
  }
  return out;
}

}  // namespace vdsolab::host
