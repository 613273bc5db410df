"""Compiler flags for vdsolab's own code (not system libraries)."""

VDSOLAB_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wshadow",
    "-Wconversion",
    "-Wno-sign-conversion",
    "-Wnon-virtual-dtor",
    "-Wimplicit-fallthrough",
]
