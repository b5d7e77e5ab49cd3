# mpspack_soname(LIBRARY OUT): the name a program asks for when it links LIBRARY (libzip.so -> "libzip.so.4"),
# read from the library's SONAME, so that code which opens it at run time (dlopen) asks for the same version.
# OUT is a cache entry (internal) so that the tests, configured in other folders, see the same name.
function(mpspack_soname LIBRARY OUT)
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p "${LIBRARY}" OUTPUT_VARIABLE _dump RESULT_VARIABLE _rc ERROR_QUIET)
  string(REGEX MATCH "SONAME +([^\n ]+)" _match "${_dump}")
  if(NOT _rc EQUAL 0 OR NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "cannot read the SONAME of ${LIBRARY}")
  endif()
  set(${OUT} "${CMAKE_MATCH_1}" CACHE INTERNAL "SONAME of ${LIBRARY}")
endfunction()
