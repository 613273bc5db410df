#!/usr/bin/env python3
"""Writes the extended-mode seeds of corpus/timekeeper (timekeeper_fuzzer.cc).

Each seed spells out operations in the fuzzer's input layout: a header
(0x80 | clocksource kind, TSC kHz, HZ, era and machine flags, counter bases,
boot time), then an opcode byte per operation and its fields. Run from the
repository root:  python3 fuzz/make_timekeeper_corpus.py fuzz/corpus/timekeeper
Print what a seed does with TK_FUZZ_TRACE=1 bazel-bin/fuzz/timekeeper_fuzz_test
SEED --mutations=0.
"""
import random, struct, sys, os
out = sys.argv[1]
def le(v, n): return (v & ((1<<(8*n))-1)).to_bytes(n, 'little')
def header(kind=2, khz=2600000, hz=1, era=5, flags=0):
    b = bytes([0x80 | kind])
    if kind >= 2: b += le(khz - 1000, 3)
    b += bytes([hz]) + bytes([era | flags])
    b += le(123456789, 8) + le(5555, 8) + le(77, 4) + le(99, 3)
    b += le(1700000000, 5) + le(3, 2)
    return b
def tick(): return bytes([0]) + le(0, 2)
def idle(c): return bytes([2]) + le(c, 5)
def read(c): return bytes([3]) + le(c, 3)
def settime(s, ns): return bytes([4]) + le(s, 8) + le(ns, 4)
def timex(shape, modes, offset=0, freq=0, maxerr=0, esterr=0, status=0, constant=0, sec=0, usec=0, tick=0, code=5, extra=None):
    b = bytes([code]) + le(shape, 2) + le(modes, 2)
    if shape & 2: b += le(extra or 0, 2)
    b += le(offset, 8) + le(freq, 8) + le(maxerr, 8) + le(esterr, 8) + le(status, 2) + le(constant, 8) + le(sec, 8) + le(usec, 4) + le(tick, 4)
    return b
def ntpd(pick, offset, freq, const=4): return bytes([7, pick]) + le(offset, 4) + le(freq, 4) + le(1000, 2) + le(100, 2) + bytes([const])
def leap(day, frac, ins): return bytes([8]) + le(day, 2) + le(frac, 4) + bytes([1 if ins else 0])
def suspend(ns): return bytes([9]) + le(ns, 6)
def cs(i): return bytes([10, i])
def aux(pick, rest=b''): return bytes([11, pick]) + rest
def ticks(n): return b''.join(tick() for _ in range(n))
S = 1000000000
seeds = {}
# Default era, nonstop TSC and RTC: suspend a minute, an hour; leap insert/delete.
seeds['ext-suspend-leap.bin'] = header(era=5, flags=16|32) + ticks(5) + suspend(60*S) + ticks(3) + suspend(3600*S+123) + leap(19000, 5000, True) + ticks(2) + timex(0x3ff, 0x0010, status=0) + idle(2*2600000000) + ticks(2) + leap(19001, 7, False) + ticks(2)
# 6.1 era: a SETOFFSET the kernel refuses after forwarding (MONOTONIC would go negative), then NTP.
seeds['ext-6.1-setoffset.bin'] = header(era=1) + ticks(3) + timex(0x3ff, 0x0100, sec=-(1<<40), usec=0) + ntpd(0, 400, 10<<16) + ticks(20) + timex(0x3ff, 0x0100|0x2000, sec=-5, usec=999999999) + ticks(4)
# Clocksource changes round the machine, idle on each, suspend on hpet (RTC driver injects).
seeds['ext-clocksources.bin'] = header(era=4, flags=32|64) + ticks(2) + cs(1) + ticks(2) + idle(1<<30) + cs(2) + ticks(3) + suspend(5*S) + cs(3) + ticks(3) + read(1000) + cs(0) + ticks(2)
# Aux clocks: enable 0 and 3, adjtimex on them (freq, setoffset, a refused leap), set, disable.
seeds['ext-aux.bin'] = header(era=5) + aux(0) + aux(3<<2) + ticks(2) + aux(3, timex(0x3ff, 0x0002, freq=100<<16, code=11)[1:]) + ticks(4) + aux(3, timex(0x3ff, 0x0010, status=0x10, code=11)[1:]) + aux(2 | (3<<2), le(5, 8) + le(7, 4)) + ticks(3) + aux(1 | (3<<2)) + ticks(2) + aux(3|(3<<2), timex(0x3ff, 0x0002, code=11)[1:])
# Every adjtimex mode on the core clock with edge values.
b = header(era=5, flags=8)
for m in (0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x80, 0x100, 0x1000, 0x2000, 0x4000, 0x8000, 0x8001, 0xa001):
    b += timex(0x3ff, m, offset=-400, freq=-(501<<16), maxerr=-5, esterr=1<<40, status=0x2001, constant=37, sec=1, usec=5, tick=11001)
    b += ticks(2)
seeds['ext-modes.bin'] = b
random.seed(12)
for era in range(6):
    seeds['ext-random-era%d.bin' % era] = header(kind=random.choice([0,1,2,3]), era=era, flags=random.choice([0,16,48,112])) + bytes(random.getrandbits(8) for _ in range(600))
for k, v in seeds.items():
    open(os.path.join(out, k), 'wb').write(v)
print(len(seeds))
