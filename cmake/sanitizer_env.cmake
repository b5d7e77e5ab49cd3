# Under the sanitizers (the asan preset) Python loading the instrumented libmpspack_c.so needs their runtimes first
# in the process, and the interpreter's own allocations are not this project's to leak-check.
# mpspack_python_under_sanitizers(TEST...): the whole test runs so (the Python package's tests).
# mpspack_python_preload_for(TEST...): the test gets MPSPACK_PYTHON_PRELOAD, which its scripts put in LD_PRELOAD for
# their python3 steps alone (preloaded into cmake, cpack and dpkg as well, the install tests ran past their limit).
function(mpspack_sanitizer_runtimes out)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so OUTPUT_VARIABLE asan_rt
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libubsan.so OUTPUT_VARIABLE ubsan_rt
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(${out} "${asan_rt}:${ubsan_rt}" PARENT_SCOPE)
endfunction()

function(mpspack_python_preload_for)
  if(CMAKE_C_FLAGS MATCHES "-fsanitize=address")
    mpspack_sanitizer_runtimes(runtimes)
    set_property(TEST ${ARGN} APPEND PROPERTY ENVIRONMENT "MPSPACK_PYTHON_PRELOAD=${runtimes}")
  endif()
endfunction()

function(mpspack_python_under_sanitizers)
  if(NOT CMAKE_C_FLAGS MATCHES "-fsanitize=address")
    return()
  endif()
  mpspack_sanitizer_runtimes(runtimes)
  set_property(TEST ${ARGN} APPEND PROPERTY ENVIRONMENT "LD_PRELOAD=${runtimes}"
               "ASAN_OPTIONS=detect_leaks=0:fast_unwind_on_malloc=0:intercept_tls_get_addr=0")
endfunction()
