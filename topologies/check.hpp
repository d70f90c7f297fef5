#pragma once
// Invariant checks for the topologies layer: a failed check is a clustersim bug, never bad user input.
#include <cstdio>
#include <cstdlib>

#define CS_TOPO_CHECK(cond)                                                                          \
  do {                                                                                               \
    if (!(cond)) {                                                                                   \
      std::fprintf(stderr, "clustersim internal error: %s:%d: check failed: %s\n", __FILE__,       \
                   __LINE__, #cond);                                                                 \
      std::abort();                                                                                  \
    }                                                                                                \
  } while (0)
