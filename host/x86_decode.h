// File: host/x86_decode.h
//
// An x86-64 instruction decoder for what vdsolab must know about a
// compiled vDSO's machine code: where each instruction starts and ends
// (to find the counter reads and system calls to intercept without
// mistaking bytes inside another instruction for them), which ones address
// memory RIP-relative and where (to see where the code expects its data
// pages), and, for an instruction that faulted on a data page, how many
// bytes it reads and into which register (to hand the load to the
// simulation with its size, and to emulate plain moves).
//
// It decodes lengths for the whole 64-bit instruction set (legacy, 0F,
// 0F38, 0F3A maps, VEX and EVEX prefixes); operand details only for the
// general-purpose instructions compiled C uses. It is checked against
// objdump on the vDSO images at hand (host:vdso_sites_test).

#ifndef VDSOLAB_HOST_X86_DECODE_H_
#define VDSOLAB_HOST_X86_DECODE_H_

#include <cstddef>
#include <cstdint>
#include <optional>

namespace vdsolab::host {

struct X86Insn {
  uint8_t length = 0;
  // 0: one-byte map; 1: 0F; 2: 0F 38; 3: 0F 3A (VEX/EVEX: their map).
  uint8_t map = 0;
  uint8_t opcode = 0;
  bool vex = false;     // VEX or EVEX encoded.
  uint8_t rex = 0;      // The REX prefix (0 if none).
  bool opsize = false;  // 66 prefix.
  bool addr32 = false;  // 67 prefix.
  uint8_t rep = 0;      // F2 or F3 (the last one), else 0.
  bool has_modrm = false;
  uint8_t modrm = 0;
  uint8_t modrm_at = 0;  // Offset of the ModRM byte in the instruction.
  bool has_sib = false;
  uint8_t sib = 0;
  uint8_t disp_at = 0;  // Offset and size of the displacement.
  uint8_t disp_size = 0;
  bool rip_relative = false;  // ModRM addresses [rip + disp32].
  int32_t disp = 0;           // The displacement (rip_relative: from the
                              // end of the instruction).
  uint8_t imm_size = 0;

  uint8_t mod() const { return modrm >> 6; }
  // The ModRM reg field with REX.R: the register operand.
  uint8_t reg() const {
    return static_cast<uint8_t>(((modrm >> 3) & 7) | ((rex & 4) << 1));
  }
  bool rex_w() const { return (rex & 8) != 0; }
  // The base register of a memory operand (with REX.B), or -1 for none
  // (RIP-relative, or SIB without a base).
  int base() const;
  // The SIB index register (with REX.X), or -1 for none.
  int index() const;
  // A memory operand in the ModRM byte (not LEA's address computation).
  bool addresses_memory() const;
  bool Is(uint8_t m, uint8_t op) const {
    return !vex && map == m && opcode == op;
  }
};

// Decodes the instruction at `p` (at most `avail` bytes readable);
// nullopt if the bytes are not a valid 64-bit instruction or run past
// `avail`. Async-signal-safe (no allocation): the compiled vDSO's child
// process calls it from its SIGSEGV handler.
std::optional<X86Insn> DecodeX86(const uint8_t* p, size_t avail);

// How many bytes a memory operand of `insn` reads (1, 2, 4, 8 or 16), for
// the general-purpose instructions; 8 where the decoder does not know (an
// over-estimate only offers the simulation more interleavings).
uint32_t MemoryOperandSize(const X86Insn& insn);

// A plain load the SIGSEGV handler may emulate instead of single-stepping:
// mov r, m (16/32/64), movzx/movsx r, m8/m16, movsxd r64, m32.
struct PlainLoad {
  uint8_t reg = 0;       // Destination register number (0 = rax ... 15).
  uint8_t src_size = 0;  // Bytes read.
  uint8_t dst_size = 0;  // 2, 4 or 8: what the instruction writes.
  bool sign_extend = false;
};
std::optional<PlainLoad> AsPlainLoad(const X86Insn& insn);

}  // namespace vdsolab::host

#endif  // VDSOLAB_HOST_X86_DECODE_H_
