# step(WHAT COMMAND...): runs COMMAND without LD_LIBRARY_PATH (so what it loads comes from its RUNPATH or the
# system) and stops the calling test script with WHAT and the command's output when it fails; otherwise its
# stdout and stderr are left in STEP_OUTPUT and STEP_ERROR. Included by install_test.cmake and package_test.cmake.
function(step what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(STEP_OUTPUT "${out}" PARENT_SCOPE)
  set(STEP_ERROR "${err}" PARENT_SCOPE)
endfunction()
