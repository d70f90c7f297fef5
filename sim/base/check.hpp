#pragma once
// Invariant checks, one macro for every layer (engine, models, topologies, ...). A failed check is a
// clustersim bug, never bad user input: it aborts with file and line, in release builds too. User input errors are InputError (sim/base/input_error.hpp).
#include <cstdio>
#include <cstdlib>

#define CS_CHECK(cond)                                                                               \
  do {                                                                                               \
    if (!(cond)) {                                                                                   \
      std::fprintf(stderr, "clustersim internal error: %s:%d: check failed: %s\n", __FILE__,       \
                   __LINE__, #cond);                                                                 \
      std::abort();                                                                                  \
    }                                                                                                \
  } while (0)
