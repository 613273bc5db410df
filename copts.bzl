"""Compiler flags for vdsolab's own code (not system libraries)."""

# -O2 everywhere: the readers' native builds are benchmarked against the
# host's optimised vDSO, and the simulation's tests run faster; -g keeps
# failures debuggable.
VDSOLAB_COPTS = [
    "-O2",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wshadow",
    "-Wconversion",
    "-Wno-sign-conversion",
    "-Wnon-virtual-dtor",
    "-Wimplicit-fallthrough",
]
