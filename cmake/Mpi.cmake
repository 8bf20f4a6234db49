# MPI for `mpirun -n R poolsim sweep` (app/mpi_sweep.hpp).
#   POOLSIM_WITH_MPI=AUTO (default): built in when find_package(MPI) finds one
#                                    (Debian: openmpi-bin libopenmpi-dev);
#                    ON: required;  OFF: never (sweep runs in one process).
# The same binary runs without a launcher either way.
set(POOLSIM_WITH_MPI AUTO CACHE STRING "Build the MPI sweep: AUTO, ON or OFF")
set_property(CACHE POOLSIM_WITH_MPI PROPERTY STRINGS AUTO ON OFF)
set(POOLSIM_HAVE_MPI OFF)
if(NOT POOLSIM_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(POOLSIM_HAVE_MPI ON)
    message(STATUS "poolsim: MPI sweep built in (MPI ${MPI_CXX_VERSION})")
  elseif(POOLSIM_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "poolsim: POOLSIM_WITH_MPI=ON but no MPI found: ${_poolsim_hint}")
  else()
    message(STATUS "poolsim: no MPI found; sweep runs in one process (POOLSIM_WITH_MPI=AUTO)")
  endif()
endif()
