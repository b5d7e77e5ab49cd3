# Run by cpack for the .deb only (CPACK_POST_BUILD_SCRIPTS, cmake/package_generator.cmake), on the package it made:
# removes the entry for the folder /opt from the package's data.tar.gz, leaving /opt/mpspack and everything in it.
# cpack lists every parent folder of the tree, and a package that lists a folder no other package owns (no
# Debian package owns /opt) has dpkg try to remove it with the package: `dpkg -r` then warns that /opt is not
# empty, or removes an empty /opt that was there before. The preinst (deb/preinst) makes /opt where it is missing.
# Needs ar (binutils), gzip and GNU tar.
function(run)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${work} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "deb_unown_opt.cmake: '${ARGN}' failed (${rc}): ${err}")
  endif()
  set(RUN_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

foreach(deb ${CPACK_PACKAGE_FILES})
  if(NOT deb MATCHES "\\.deb$")
    continue()
  endif()
  set(work ${deb}.unown_opt)
  file(REMOVE_RECURSE ${work})
  file(MAKE_DIRECTORY ${work})
  run(ar t ${deb})
  if(NOT RUN_OUTPUT STREQUAL "debian-binary\ncontrol.tar.gz\ndata.tar.gz\n")
    message(FATAL_ERROR "deb_unown_opt.cmake: ${deb} holds '${RUN_OUTPUT}', expected data.tar.gz")
  endif()
  run(ar x ${deb} data.tar.gz)
  run(gzip -d data.tar.gz)
  run(tar -tf data.tar)
  string(REGEX MATCH "(^|\n)(\\./)?opt/?\n" opt "${RUN_OUTPUT}")
  if(opt)
    string(STRIP "${opt}" opt)
    run(tar --delete --no-recursion -f data.tar ${opt})
  endif()
  run(gzip -9n data.tar)
  run(ar r ${deb} data.tar.gz)
  file(REMOVE_RECURSE ${work})
endforeach()
