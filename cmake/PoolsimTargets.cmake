# poolsim_library(NAME DIR DEPS...): one library per top-level folder, built
# from every .cpp in it (and its subfolders), public include root = the repo.
function(poolsim_library name dir)
  file(GLOB_RECURSE _src CONFIGURE_DEPENDS ${dir}/*.cpp)
  if(_src)
    add_library(${name} STATIC ${_src})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC ${ARGN})
  else()
    # A layer with headers only (early in a layer's life).
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARGN})
  endif()
endfunction()
