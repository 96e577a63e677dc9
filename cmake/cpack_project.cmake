# cpack_project.cmake: read by cpack (CPACK_PROJECT_CONFIG_FILE, set in
# cmake/install.cmake) before it makes a package.
#
# Built-Using (Debian policy 7.8): the source packages of the static
# libraries the binary embeds, as cmake/gen_copyright.sh wrote them at
# build time (CPACK_EL_BUILT_USING_FILE; empty without EL_STATIC_LIBS, and
# then the field is left out). CPack (3.25) has no variable for this
# field; it writes each control field as "Name: value" with the value as
# given, so the field rides on a second line of Source, which names the
# package's own source (Debian's default for it). tests/e2e/
# test_package_deb.sh reads the field back with dpkg-deb -f.
if(CPACK_GENERATOR STREQUAL "DEB" AND EXISTS "${CPACK_EL_BUILT_USING_FILE}")
  file(READ "${CPACK_EL_BUILT_USING_FILE}" el_built_using)
  string(STRIP "${el_built_using}" el_built_using)
  if(el_built_using)
    set(CPACK_DEBIAN_PACKAGE_SOURCE
        "${CPACK_PACKAGE_NAME}\nBuilt-Using: ${el_built_using}")
  endif()
endif()
