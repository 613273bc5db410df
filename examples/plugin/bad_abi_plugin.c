/* A plugin from a future ABI version: vdsolab must refuse it by name. */
#include "vdsolab_plugin.h"

static const struct vdsolab_plugin kPlugin = {99,         "future", 0, 0,
                                              "upstream", 0,        0, 0};

const struct vdsolab_plugin* vdsolab_plugin_v1(void) { return &kPlugin; }
