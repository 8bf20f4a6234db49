# Profile-guided optimisation (GCC): scripts/build-release builds poolsim
# twice in one build directory. POOLSIM_PGO=generate instruments every
# target; bench/pgo-train then runs the bundled scenarios, which writes the
# branch and call counts into POOLSIM_PGO_DIR; POOLSIM_PGO=use rebuilds with
# them. GCC names a profile after its object file's full path, so both
# stages must use the same build directory (the script does).
#
# Why: the simulator's cost is spread over a few hundred small functions
# (kernel, engine, runtimes, the driver's coroutines), with no single hot
# spot left (docs/performance.md); what the profile buys is inlining, block
# order and branch layout chosen from real runs. Simulation results do not
# change (no value-changing flag; scripts/build-release checks that the
# final binary's results equal the instrumented one's byte for byte).
set(POOLSIM_PGO "" CACHE STRING "Profile-guided optimisation stage: empty, 'generate' or 'use'")
set(POOLSIM_PGO_DIR "${CMAKE_BINARY_DIR}/pgo-profile" CACHE PATH
    "Where the PGO profile (.gcda files) is written and read")
if(POOLSIM_PGO STREQUAL "")
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  message(FATAL_ERROR "poolsim: POOLSIM_PGO needs GCC (it uses -fprofile-generate/-fprofile-use); "
                      "configure without POOLSIM_PGO for ${CMAKE_CXX_COMPILER_ID}")
endif()
if(POOLSIM_PGO STREQUAL "generate")
  # prefer-atomic: a training simulation runs its replications on one
  # thread per CPU (validate/worker_pool.cpp), so the same counters are
  # incremented from several threads. With -fprofile-update=single those
  # increments race, and a lost one can leave a value profile larger than
  # its block's count, which -fprofile-use rejects as a hard error
  # ("corrupted value profile: divmod profile counter ... inconsistent with
  # basic-block count", seen on a fresh 2-CPU machine). Atomic updates cost
  # the instrumented training a few seconds and make the profile exact.
  add_compile_options(-fprofile-generate -fprofile-update=prefer-atomic "-fprofile-dir=${POOLSIM_PGO_DIR}")
  add_link_options(-fprofile-generate)
elseif(POOLSIM_PGO STREQUAL "use")
  # partial-training: code the training never ran (the real backends,
  # calibrate, import) stays optimised as without a profile instead of for
  # size. A source without a profile is not an error, and a source edited
  # since the training (a developer rebuilding this directory) is compiled
  # without the profile of the functions that changed, with GCC's warning
  # (coverage-mismatch is an error by default).
  add_compile_options(-fprofile-use -fprofile-partial-training "-fprofile-dir=${POOLSIM_PGO_DIR}"
                      -Wno-missing-profile -Wno-error=coverage-mismatch)
else()
  message(FATAL_ERROR "poolsim: POOLSIM_PGO is '${POOLSIM_PGO}'; expected empty, 'generate' or 'use'")
endif()
