// assert.hpp: POOLSIM_ASSERT(cond, msg), an invariant check with a message.
//
// Same semantics as assert(): active unless NDEBUG is defined. Release
// builds define NDEBUG (CMake's -O3 -DNDEBUG), so checks cost nothing there;
// the sanitizer builds (scripts/test: Release with CMAKE_CXX_FLAGS_RELEASE=-O1,
// no NDEBUG) and Debug builds check them. A failed check prints the
// condition, the message and the place, then aborts (std::abort, like
// assert), so a sanitizer run stops at the first broken invariant.
#pragma once

#ifdef NDEBUG
#define POOLSIM_ASSERT(cond, msg) static_cast<void>(0)
#else
#include <cstdio>
#include <cstdlib>
#define POOLSIM_ASSERT(cond, msg)                                                                  \
  ((cond) ? static_cast<void>(0)                                                                   \
          : (std::fprintf(stderr, "%s:%d: invariant failed: %s (%s)\n", __FILE__, __LINE__, #cond, \
                          msg),                                                                    \
             std::abort()))
#endif
