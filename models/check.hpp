#pragma once
// Invariant checks for the models layer. A failed check is a bug in clustersim, never bad user input
// (user input is validated, with its JSON path, before it reaches a model): it aborts loudly with file
// and line, in release builds too.
#include <cstdio>
#include <cstdlib>

#define CS_MODELS_CHECK(cond)                                                                        \
  do {                                                                                               \
    if (!(cond)) {                                                                                   \
      std::fprintf(stderr, "clustersim internal error: %s:%d: check failed: %s\n", __FILE__,       \
                   __LINE__, #cond);                                                                 \
      std::abort();                                                                                  \
    }                                                                                                \
  } while (0)
