# What `cmake --install build --prefix P` and `cpack -G DEB` put where
# (docs/install.md):
#   P/bin/poolsim                                  the program
#   P/share/poolsim/configs/{machines,scenarios,seeds}/   bundled profiles and scenarios;
#       an installed poolsim finds them from its own path (/proc/self/exe ->
#       ../share/poolsim/configs, models/scenario_loader.cpp default_config_dir)
#   P/share/man/man1/poolsim.1                      man page (see below)
#   P/share/bash-completion/completions/poolsim     bash completion
#   P/include/poolsim/{poolsim.hpp,models/,sim/}    the library's headers
#   P/lib/libpoolsim_{models,sim}.a, P/lib/cmake/poolsim/   find_package(poolsim)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(POOLSIM_INSTALL_CONFIGS ${CMAKE_INSTALL_DATADIR}/poolsim/configs)
install(TARGETS poolsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${POOLSIM_INSTALL_CONFIGS})
install(FILES ${PROJECT_SOURCE_DIR}/completions/poolsim.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME poolsim)

# The man page: generated from `poolsim --help` by help2man when it is found
# (scripts/install-deps installs it), so it always matches the binary; else
# the checked-in docs/man/poolsim.1 (regenerate it with
# `cmake --build build --target poolsim_man && cp build/poolsim.1 docs/man/`).
# Sanitizer builds use the checked-in page: running an instrumented binary
# at build time (LeakSanitizer's exit code) must not break their build.
find_program(POOLSIM_HELP2MAN help2man)
set(_man_include ${PROJECT_SOURCE_DIR}/docs/man/poolsim.h2m)
if(POOLSIM_HELP2MAN AND NOT POOLSIM_SANITIZE)
  add_custom_command(
    OUTPUT ${PROJECT_BINARY_DIR}/poolsim.1
    COMMAND ${POOLSIM_HELP2MAN} --no-info
            --name "thread-pool simulator and validator" --include ${_man_include}
            --output ${PROJECT_BINARY_DIR}/poolsim.1 $<TARGET_FILE:poolsim>
    DEPENDS poolsim ${_man_include}
    COMMENT "help2man: poolsim.1")
  add_custom_target(poolsim_man ALL DEPENDS ${PROJECT_BINARY_DIR}/poolsim.1)
  install(FILES ${PROJECT_BINARY_DIR}/poolsim.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  install(FILES ${PROJECT_SOURCE_DIR}/docs/man/poolsim.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# ---- the library: poolsim::poolsim (poolsim/poolsim.hpp), poolsim::models, poolsim::sim
add_library(poolsim_api INTERFACE)
target_link_libraries(poolsim_api INTERFACE poolsim_sim poolsim_models)
target_include_directories(poolsim_api INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                                 $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(poolsim_api PROPERTIES EXPORT_NAME poolsim)
set_target_properties(poolsim_models PROPERTIES EXPORT_NAME models)
set_target_properties(poolsim_sim PROPERTIES EXPORT_NAME sim)
foreach(_t poolsim_models poolsim_sim)
  # The layers include each other as "models/x.hpp" from the repository root;
  # installed, that root is P/include/poolsim.
  set_property(TARGET ${_t} PROPERTY INTERFACE_INCLUDE_DIRECTORIES
    "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>;$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/poolsim>")
endforeach()
# The build tree's configs path is for the build tree only (the installed
# library gets P/share/poolsim/configs from poolsimConfig.cmake).
get_target_property(_models_defs poolsim_models INTERFACE_COMPILE_DEFINITIONS)
set_property(TARGET poolsim_models PROPERTY INTERFACE_COMPILE_DEFINITIONS
  "$<BUILD_INTERFACE:${_models_defs}>")

install(TARGETS poolsim_models poolsim_sim poolsim_api EXPORT poolsimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(_layer models sim)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_layer}/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/poolsim/${_layer}
          FILES_MATCHING PATTERN "*.hpp")
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/include/poolsim/poolsim.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/poolsim)
set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/poolsim)
install(EXPORT poolsimTargets NAMESPACE poolsim:: DESTINATION ${_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/poolsimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/poolsimConfig.cmake INSTALL_DESTINATION ${_cmake_dir}
  PATH_VARS POOLSIM_INSTALL_CONFIGS)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/poolsimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/poolsimConfig.cmake
              ${PROJECT_BINARY_DIR}/poolsimConfigVersion.cmake DESTINATION ${_cmake_dir})

# ---- the .deb: `cpack -G DEB` in the build directory (one package with the
# program, its configs, man page, completion and the library).
set(CPACK_PACKAGE_NAME poolsim)
set(CPACK_PACKAGE_VENDOR "poolsim")
set(CPACK_PACKAGE_CONTACT "poolsim maintainers <poolsim@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "thread-pool simulator: predicts, measures and compares thread runtimes")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Depends: from the shared libraries the binary links (dpkg-shlibdeps).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
