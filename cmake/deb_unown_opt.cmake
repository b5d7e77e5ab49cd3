# Run by cpack for the .deb only (CPACK_POST_BUILD_SCRIPTS, cmake/package_generator.cmake), on the package it made:
# removes the entry for the folder /opt from the package's data.tar.gz, leaving /opt/mpspack and everything in it.
# cpack lists every parent folder of the tree, and a package that lists a folder no other package owns (no
# Debian package owns /opt) has dpkg try to remove it with the package: `dpkg -r` then warns that /opt is not
# empty, or removes an empty /opt that was there before. The preinst (deb/preinst) makes /opt where it is missing.
# Needs ar (binutils) and GNU tar with gzip.
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
  # The archive is made again from its unpacked files, every folder but /opt named (GNU tar --delete loses
  # members of an archive this size). Owner and group are root's, as cpack wrote them; modes, link targets and
  # times are kept.
  file(MAKE_DIRECTORY ${work}/root)
  run(tar -xpzf data.tar.gz -C root)
  file(REMOVE ${work}/data.tar.gz)
  file(GLOB tops RELATIVE ${work}/root ${work}/root/*)
  set(members)
  foreach(top ${tops})
    if(top STREQUAL "opt")
      file(GLOB below RELATIVE ${work}/root ${work}/root/opt/*)
      list(APPEND members ${below})
    else()
      list(APPEND members ${top})
    endif()
  endforeach()
  list(TRANSFORM members PREPEND "./")
  run(tar --format=gnu --owner=root:0 --group=root:0 --sort=name -czf data.tar.gz -C root ${members})
  run(ar r ${deb} data.tar.gz)
  file(REMOVE_RECURSE ${work})
endforeach()
