# -DPOOLSIM_SANITIZE=address,undefined or =thread. Applied to every target so
# that the libraries and the tests agree on instrumentation.
if(POOLSIM_SANITIZE)
  if(POOLSIM_SANITIZE MATCHES "thread" AND POOLSIM_SANITIZE MATCHES "address")
    message(FATAL_ERROR "poolsim: ThreadSanitizer cannot be combined with AddressSanitizer")
  endif()
  set(_san -fsanitize=${POOLSIM_SANITIZE} -fno-omit-frame-pointer -g1)
  if(POOLSIM_SANITIZE MATCHES "undefined")
    list(APPEND _san -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${_san})
  add_link_options(${_san})
  message(STATUS "poolsim: sanitizers ${POOLSIM_SANITIZE}")
endif()
