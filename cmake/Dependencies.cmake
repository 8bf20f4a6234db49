# Every dependency comes from Debian's archive, installed by scripts/install-deps.
# A missing one stops the configure step with the script's name.
set(_poolsim_hint "run 'scripts/install-deps' as root (it installs poolsim's Debian packages)")

macro(poolsim_require pkg)
  find_package(${pkg} ${ARGN} QUIET)
  if(NOT ${pkg}_FOUND)
    message(FATAL_ERROR "poolsim: dependency '${pkg}' not found: ${_poolsim_hint}")
  endif()
endmacro()

poolsim_require(yaml-cpp)
poolsim_require(Eigen3)
poolsim_require(Boost COMPONENTS fiber context)
poolsim_require(Catch2)
poolsim_require(CLI11)
poolsim_require(nlohmann_json)
poolsim_require(fmt)
poolsim_require(TBB)
poolsim_require(benchmark)
poolsim_require(Threads)

find_path(ASIO_INCLUDE_DIR asio.hpp)
if(NOT ASIO_INCLUDE_DIR)
  message(FATAL_ERROR "poolsim: dependency 'asio' (standalone, libasio-dev) not found: ${_poolsim_hint}")
endif()
if(NOT EXISTS /usr/include/boost/graph/adjacency_list.hpp AND NOT EXISTS ${Boost_INCLUDE_DIRS}/boost/graph/adjacency_list.hpp)
  message(FATAL_ERROR "poolsim: dependency 'Boost.Graph' (libboost-graph-dev) not found: ${_poolsim_hint}")
endif()
add_library(poolsim_asio INTERFACE)
target_include_directories(poolsim_asio SYSTEM INTERFACE ${ASIO_INCLUDE_DIR})
target_compile_definitions(poolsim_asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED)

# yaml-cpp 0.7 exports a plain 'yaml-cpp' target; newer ones yaml-cpp::yaml-cpp.
if(TARGET yaml-cpp::yaml-cpp)
  set(POOLSIM_YAML yaml-cpp::yaml-cpp)
else()
  set(POOLSIM_YAML yaml-cpp)
endif()
