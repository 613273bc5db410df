#include "host/x86_decode.h"

namespace vdsolab::host {
namespace {

// What follows an opcode: a ModRM byte, and an immediate of which kind.
enum class Imm : uint8_t {
  kNone,
  kB,      // 1 byte.
  kW,      // 2 bytes.
  kD,      // 4 bytes (rel32 branches: 66 does not shrink them here).
  kZ,      // 2 with 66, else 4.
  kV,      // 8 with REX.W, 2 with 66, else 4 (mov r, imm).
  kWB,     // enter: 2 + 1.
  kMoffs,  // mov al/eax, moffs: 8, or 4 with 67.
  kTest,   // F6/F7: an immediate only for /0 and /1 (test).
};

struct OpInfo {
  bool valid = true;
  bool modrm = false;
  Imm imm = Imm::kNone;
};

constexpr OpInfo kInvalid{false, false, Imm::kNone};
constexpr OpInfo None() { return OpInfo{true, false, Imm::kNone}; }
constexpr OpInfo M(Imm imm = Imm::kNone) { return OpInfo{true, true, imm}; }
constexpr OpInfo I(Imm imm) { return OpInfo{true, false, imm}; }

OpInfo OneByte(uint8_t op) {
  if (op < 0x40) {
    switch (op & 7) {
      case 4:
        return I(Imm::kB);
      case 5:
        return I(Imm::kZ);
      case 6:
      case 7:
        return kInvalid;  // push/pop seg, daa..aas: not in 64-bit mode.
      default:
        return M();
    }
  }
  if (op >= 0x50 && op <= 0x5f) return None();
  if (op >= 0x70 && op <= 0x7f) return I(Imm::kB);
  if (op >= 0x84 && op <= 0x8f) return M();
  if (op >= 0x90 && op <= 0x9f) return op == 0x9a ? kInvalid : None();
  if (op >= 0xa0 && op <= 0xa3) return I(Imm::kMoffs);
  if (op >= 0xa4 && op <= 0xaf) {
    return op == 0xa8 ? I(Imm::kB) : op == 0xa9 ? I(Imm::kZ) : None();
  }
  if (op >= 0xb0 && op <= 0xb7) return I(Imm::kB);
  if (op >= 0xb8 && op <= 0xbf) return I(Imm::kV);
  if (op >= 0xd8 && op <= 0xdf) return M();  // x87.
  if (op >= 0xe0 && op <= 0xe7) return I(Imm::kB);
  switch (op) {
    case 0x63:
      return M();
    case 0x68:
      return I(Imm::kZ);
    case 0x69:
      return M(Imm::kZ);
    case 0x6a:
      return I(Imm::kB);
    case 0x6b:
      return M(Imm::kB);
    case 0x6c:
    case 0x6d:
    case 0x6e:
    case 0x6f:
      return None();
    case 0x80:
    case 0x83:
    case 0xc0:
    case 0xc1:
    case 0xc6:
      return M(Imm::kB);
    case 0x81:
    case 0xc7:
      return M(Imm::kZ);
    case 0xc2:
    case 0xca:
      return I(Imm::kW);
    case 0xc3:
    case 0xc9:
    case 0xcb:
    case 0xcc:
    case 0xcf:
      return None();
    case 0xc8:
      return I(Imm::kWB);
    case 0xcd:
      return I(Imm::kB);
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3:
      return M();
    case 0xd7:
      return None();
    case 0xe8:
    case 0xe9:
      return I(Imm::kD);
    case 0xeb:
      return I(Imm::kB);
    case 0xec:
    case 0xed:
    case 0xee:
    case 0xef:
    case 0xf1:
    case 0xf4:
    case 0xf5:
      return None();
    case 0xf6:
    case 0xf7:
      return M(Imm::kTest);
    case 0xf8:
    case 0xf9:
    case 0xfa:
    case 0xfb:
    case 0xfc:
    case 0xfd:
      return None();
    case 0xfe:
    case 0xff:
      return M();
    default:
      return kInvalid;  // 60-62 (62 is EVEX), 82, ce, d4-d6, ea.
  }
}

OpInfo TwoByte(uint8_t op) {
  if ((op >= 0x10 && op <= 0x1f) || (op >= 0x40 && op <= 0x6f) ||
      (op >= 0x90 && op <= 0x9f) || op >= 0xd0) {
    return M();
  }
  if (op >= 0x80 && op <= 0x8f) return I(Imm::kD);  // jcc rel32
  if (op >= 0xc8 && op <= 0xcf) return None();      // bswap
  if (op >= 0x70 && op <= 0x73) return M(Imm::kB);
  switch (op) {
    case 0x00:
    case 0x01:
    case 0x02:
    case 0x03:
    case 0x0d:
    case 0x20:
    case 0x21:
    case 0x22:
    case 0x23:
    case 0x28:
    case 0x29:
    case 0x2a:
    case 0x2b:
    case 0x2c:
    case 0x2d:
    case 0x2e:
    case 0x2f:
    case 0x74:
    case 0x75:
    case 0x76:
    case 0x78:
    case 0x79:
    case 0x7c:
    case 0x7d:
    case 0x7e:
    case 0x7f:
    case 0xa3:
    case 0xa5:
    case 0xab:
    case 0xad:
    case 0xae:
    case 0xaf:
    case 0xb0:
    case 0xb1:
    case 0xb2:
    case 0xb3:
    case 0xb4:
    case 0xb5:
    case 0xb6:
    case 0xb7:
    case 0xb8:
    case 0xb9:
    case 0xbb:
    case 0xbc:
    case 0xbd:
    case 0xbe:
    case 0xbf:
    case 0xc0:
    case 0xc1:
    case 0xc3:
    case 0xc7:
      return M();
    case 0x0f:  // 3DNow!: ModRM, then the opcode as an immediate.
    case 0xa4:
    case 0xac:
    case 0xba:
    case 0xc2:
    case 0xc4:
    case 0xc5:
    case 0xc6:
      return M(Imm::kB);
    case 0x05:
    case 0x06:
    case 0x07:
    case 0x08:
    case 0x09:
    case 0x0b:
    case 0x0e:
    case 0x30:
    case 0x31:
    case 0x32:
    case 0x33:
    case 0x34:
    case 0x35:
    case 0x37:
    case 0x77:
    case 0xa0:
    case 0xa1:
    case 0xa2:
    case 0xa8:
    case 0xa9:
    case 0xaa:
      return None();
    default:
      return kInvalid;
  }
}

// VEX/EVEX: ModRM always (but vzeroupper/vzeroall), an imm8 in map 3 and
// for the map-1 opcodes that take one in legacy encoding.
OpInfo VexInfo(uint8_t map, uint8_t op) {
  if (map == 1 && op == 0x77) return None();
  if (map == 3) return M(Imm::kB);
  if (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
                   (op >= 0xc4 && op <= 0xc6))) {
    return M(Imm::kB);
  }
  return M();
}

bool IsLegacyPrefix(uint8_t b) {
  switch (b) {
    case 0xf0:
    case 0xf2:
    case 0xf3:
    case 0x2e:
    case 0x36:
    case 0x3e:
    case 0x26:
    case 0x64:
    case 0x65:
    case 0x66:
    case 0x67:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool X86Insn::addresses_memory() const {
  if (!has_modrm || mod() == 3) return false;
  if (Is(0, 0x8d)) return false;  // lea computes an address, loads nothing.
  // Hint nops and prefetches (0F 18-1F, 0F 0D) do not fault.
  if (!vex && map == 1 &&
      ((opcode >= 0x18 && opcode <= 0x1f) || opcode == 0x0d)) {
    return false;
  }
  return true;
}

int X86Insn::base() const {
  if (!has_modrm || mod() == 3 || rip_relative) return -1;
  if (has_sib) {
    if ((sib & 7) == 5 && mod() == 0) return -1;
    return (sib & 7) | ((rex & 1) << 3);
  }
  return (modrm & 7) | ((rex & 1) << 3);
}

int X86Insn::index() const {
  if (!has_sib || mod() == 3) return -1;
  const int i = ((sib >> 3) & 7) | ((rex & 2) << 2);
  return i == 4 ? -1 : i;  // rsp as index means none.
}

std::optional<X86Insn> DecodeX86(const uint8_t* p, size_t avail) {
  constexpr size_t kMaxLength = 15;
  const size_t limit = avail < kMaxLength ? avail : kMaxLength;
  X86Insn insn;
  size_t i = 0;
  // Legacy prefixes, then an optional REX immediately before the opcode
  // (a REX followed by another prefix is ignored by the CPU).
  for (;;) {
    if (i >= limit) return std::nullopt;
    const uint8_t b = p[i];
    if (IsLegacyPrefix(b)) {
      if (b == 0x66) insn.opsize = true;
      if (b == 0x67) insn.addr32 = true;
      if (b == 0xf2 || b == 0xf3) insn.rep = b;
      insn.rex = 0;
      ++i;
      continue;
    }
    if ((b & 0xf0) == 0x40) {
      insn.rex = b;
      ++i;
      continue;
    }
    break;
  }
  if (i >= limit) return std::nullopt;
  OpInfo info;
  const uint8_t b0 = p[i];
  if (b0 == 0xc4 || b0 == 0xc5 || b0 == 0x62) {
    // VEX (3- or 2-byte) or EVEX: always so in 64-bit mode.
    insn.vex = true;
    const size_t prefix_len = b0 == 0xc5 ? 2 : b0 == 0xc4 ? 3 : 4;
    if (i + prefix_len >= limit) return std::nullopt;
    if (b0 == 0xc5) {
      insn.map = 1;
      insn.rex = static_cast<uint8_t>((p[i + 1] & 0x80) ? 0 : 4);
    } else if (b0 == 0xc4) {
      insn.map = p[i + 1] & 0x1f;
      if (insn.map < 1 || insn.map > 3) return std::nullopt;
      insn.rex = static_cast<uint8_t>(((~p[i + 1] >> 5) & 7) |
                                      ((p[i + 2] & 0x80) ? 8 : 0));
    } else {
      insn.map = p[i + 1] & 7;
      if (insn.map == 0 || insn.map == 4 || insn.map == 7) return std::nullopt;
      insn.rex = static_cast<uint8_t>(((~p[i + 1] >> 5) & 7) |
                                      ((p[i + 2] & 0x80) ? 8 : 0));
    }
    i += prefix_len;
    insn.opcode = p[i++];
    info = VexInfo(insn.map, insn.opcode);
  } else if (b0 == 0x0f) {
    if (i + 1 >= limit) return std::nullopt;
    const uint8_t b1 = p[i + 1];
    if (b1 == 0x38 || b1 == 0x3a) {
      if (i + 2 >= limit) return std::nullopt;
      insn.map = b1 == 0x38 ? 2 : 3;
      insn.opcode = p[i + 2];
      i += 3;
      info = b1 == 0x38 ? M() : M(Imm::kB);
    } else {
      insn.map = 1;
      insn.opcode = b1;
      i += 2;
      info = TwoByte(b1);
    }
  } else {
    insn.map = 0;
    insn.opcode = b0;
    ++i;
    info = OneByte(b0);
  }
  if (!info.valid) return std::nullopt;
  if (info.modrm) {
    if (i >= limit) return std::nullopt;
    insn.has_modrm = true;
    insn.modrm_at = static_cast<uint8_t>(i);
    insn.modrm = p[i++];
    const uint8_t mod = insn.modrm >> 6;
    const uint8_t rm = insn.modrm & 7;
    if (mod != 3) {
      size_t disp_size = mod == 1 ? 1 : mod == 2 ? 4 : 0;
      if (rm == 4) {  // SIB
        if (i >= limit) return std::nullopt;
        const uint8_t sib = p[i++];
        insn.has_sib = true;
        insn.sib = sib;
        if ((sib & 7) == 5 && mod == 0) disp_size = 4;
      } else if (rm == 5 && mod == 0) {
        insn.rip_relative = true;
        disp_size = 4;
      }
      if (i + disp_size > limit) return std::nullopt;
      insn.disp_at = static_cast<uint8_t>(i);
      insn.disp_size = static_cast<uint8_t>(disp_size);
      if (disp_size == 1) {
        insn.disp = static_cast<int8_t>(p[i]);
      } else if (disp_size == 4) {
        uint32_t d = 0;
        for (size_t k = 0; k < 4; ++k)
          d |= static_cast<uint32_t>(p[i + k]) << (8 * k);
        insn.disp = static_cast<int32_t>(d);
      }
      i += disp_size;
    }
  }
  size_t imm = 0;
  switch (info.imm) {
    case Imm::kNone:
      break;
    case Imm::kB:
      imm = 1;
      break;
    case Imm::kW:
      imm = 2;
      break;
    case Imm::kD:
      imm = 4;
      break;
    case Imm::kZ:
      imm = insn.opsize ? 2 : 4;
      break;
    case Imm::kV:
      imm = insn.rex_w() ? 8 : insn.opsize ? 2 : 4;
      break;
    case Imm::kWB:
      imm = 3;
      break;
    case Imm::kMoffs:
      imm = insn.addr32 ? 4 : 8;
      break;
    case Imm::kTest:
      if (((insn.modrm >> 3) & 7) <= 1) {
        imm = insn.opcode == 0xf6 ? 1 : insn.opsize ? 2 : 4;
      }
      break;
  }
  if (i + imm > limit) return std::nullopt;
  insn.imm_size = static_cast<uint8_t>(imm);
  i += imm;
  insn.length = static_cast<uint8_t>(i);
  return insn;
}

uint32_t MemoryOperandSize(const X86Insn& insn) {
  const uint32_t opsize = insn.rex_w() ? 8 : insn.opsize ? 2 : 4;
  if (insn.vex) return 16;
  if (insn.map == 0) {
    const uint8_t op = insn.opcode;
    if (op < 0x40 && (op & 7) <= 3) return (op & 1) == 0 ? 1 : opsize;
    switch (op) {
      case 0x80:
      case 0x84:
      case 0x86:
      case 0x88:
      case 0x8a:
      case 0xc0:
      case 0xc6:
      case 0xd0:
      case 0xd2:
      case 0xf6:
      case 0xfe:
        return 1;
      case 0x63:
        return 4;
      case 0x8f:
        return 8;
      case 0xff: {
        const uint8_t r = (insn.modrm >> 3) & 7;
        return r <= 1 ? opsize : 8;  // inc/dec; call/jmp/push are 64-bit.
      }
      default:
        return (op >= 0xd8 && op <= 0xdf) ? 8 : opsize;
    }
  }
  if (insn.map == 1) {
    const uint8_t op = insn.opcode;
    if (op == 0xb6 || op == 0xbe || (op >= 0x90 && op <= 0x9f) || op == 0xb0 ||
        op == 0xc0) {
      return 1;
    }
    if (op == 0xb7 || op == 0xbf) return 2;
    if ((op >= 0x40 && op <= 0x4f) || op == 0xaf || op == 0xa3 || op == 0xab ||
        op == 0xb3 || op == 0xbb || op == 0xba || op == 0xbc || op == 0xbd ||
        op == 0xb8 || op == 0xa4 || op == 0xa5 || op == 0xac || op == 0xad ||
        op == 0xb1 || op == 0xc1 || op == 0xc3) {
      return opsize;
    }
    if (op == 0xc7) return insn.rex_w() ? 16 : 8;  // cmpxchg8b/16b
    return 16;  // SSE/MMX and the rest: at most a vector.
  }
  return 16;
}

std::optional<PlainLoad> AsPlainLoad(const X86Insn& insn) {
  if (!insn.addresses_memory() || insn.vex || insn.rep != 0) {
    return std::nullopt;
  }
  const uint8_t dst = insn.rex_w() ? 8 : insn.opsize ? 2 : 4;
  PlainLoad load;
  load.reg = insn.reg();
  load.dst_size = dst;
  if (insn.Is(0, 0x8b)) {
    load.src_size = dst;
    return load;
  }
  if (insn.Is(0, 0x63)) {  // movsxd: sign-extends only with REX.W.
    load.src_size = 4;
    load.sign_extend = insn.rex_w();
    if (!insn.rex_w()) load.dst_size = insn.opsize ? 2 : 4;
    if (load.dst_size == 2) load.src_size = 2;
    return load;
  }
  if (insn.map == 1 && (insn.opcode == 0xb6 || insn.opcode == 0xb7 ||
                        insn.opcode == 0xbe || insn.opcode == 0xbf)) {
    load.src_size = (insn.opcode & 1) == 0 ? 1 : 2;
    load.sign_extend = insn.opcode >= 0xbe;
    return load;
  }
  return std::nullopt;
}

}  // namespace vdsolab::host
