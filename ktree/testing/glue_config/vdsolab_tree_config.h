/* A config for compiling ktree/internal/glue.c under Bazel (the real one
 * is generated per tree build, ktree/internal/build_steps.cc). */
#define VDSOLAB_TREE_NAME "glue-compile-check"
#define VDSOLAB_TREE_PROVENANCE "ktree/BUILD.bazel :glue_compiles"
#define VDSOLAB_TREE_SUMMARY "not loaded"
#define VDSOLAB_TREE_LAYOUT "6.10"
#define VDSOLAB_TREE_ERA "Linux 6.12"
#define VDSOLAB_TREE_ORIGIN "none"
#define VDSOLAB_TREE_DATA_OFFSET 128u
#define VDSOLAB_TREE_SEQ_OFFSETS \
  { 128u, 376u }
#define VDSOLAB_TREE_CLOCKS \
  { 0, 1, 4, 5, 6, 7, 11 }
#define VDSOLAB_TREE_COUNTER_SEMANTICS 0u
#define VDSOLAB_TREE_SEMANTICS_FLAGS 1u
#define VDSOLAB_TREE_COUNTER_READ 0u
#define VDSOLAB_TREE_CONFIG_HZ 250u
