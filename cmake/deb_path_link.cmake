# Run by cpack for the .deb only (CPACK_PRE_BUILD_SCRIPTS, cmake/package_generator.cmake), after the tree is
# staged under /opt/mpspack and before the package is made: /usr/bin/mpspack, a link to the tool, so that the
# command is on PATH once the package is installed. The tree itself stays whole under /opt/mpspack (its lib/
# must not be where the system's loader searches); the archive has no such link and stays relocatable.
set(staged_bin ${CPACK_TEMPORARY_INSTALL_DIRECTORY}/usr/bin)
file(MAKE_DIRECTORY ${staged_bin})
file(CREATE_LINK ${CPACK_PACKAGING_INSTALL_PREFIX}/bin/mpspack ${staged_bin}/mpspack SYMBOLIC)
