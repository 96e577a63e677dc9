# install.cmake: what `cmake --install` puts where, and the Debian package
# (issue 14 item 8; README "Install"). Every install rule of the project is
# here, included once from the top CMakeLists.txt; a new installed file
# (a plugin, a data file) gets its rule in this file.
#
#   bin/eventlog-live                      the program
#   bin/eventlog-live-otelcol              the daemon: a symlink to it
#   share/eventlog-live/lua/               the Lua library (found from the
#                                          binary's own place, src/host/host.c)
#   share/man/man1/eventlog-live*.1        manual pages (help2man, from --help)
#   share/bash-completion/completions/     bash completion (from --help)
#   share/zsh/vendor-completions/          zsh completion (from --help)
#   share/doc/eventlog-live/               README.md, docs/, LICENSE,
#                                          copyright (with the notices of
#                                          the embedded static libraries)
#
# The manual pages and completions are generated from the built binary's
# help texts at build time (cmake/gen_man.sh, cmake/gen_completion.py), so
# they follow the options; tests/e2e/test_install.sh checks the installed
# tree and the .deb.
include(GNUInstallDirs)

install(TARGETS eventlog-live DESTINATION ${CMAKE_INSTALL_BINDIR})
install(CODE "execute_process(COMMAND \${CMAKE_COMMAND} -E create_symlink
  eventlog-live
  \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/eventlog-live-otelcol\")
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/eventlog-live-otelcol -> eventlog-live\")")
install(DIRECTORY lua/ DESTINATION ${CMAKE_INSTALL_DATADIR}/eventlog-live/lua)
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# Manual pages and completions, from --help.
set(EL_GEN_DIR ${CMAKE_BINARY_DIR}/share)
find_program(EL_HELP2MAN help2man)
find_package(Python3 COMPONENTS Interpreter)
set(EL_MAN_PAGES eventlog-live eventlog-live-show eventlog-live-stats
    eventlog-live-run eventlog-live-repl eventlog-live-report
    eventlog-live-watch eventlog-live-otelcol)
if(EL_HELP2MAN)
  set(man_out "")
  foreach(p ${EL_MAN_PAGES})
    list(APPEND man_out ${EL_GEN_DIR}/man/${p}.1)
  endforeach()
  add_custom_command(OUTPUT ${man_out}
    COMMAND bash ${CMAKE_SOURCE_DIR}/cmake/gen_man.sh
            $<TARGET_FILE:eventlog-live> ${EL_GEN_DIR}/man ${PROJECT_VERSION}
    DEPENDS eventlog-live ${CMAKE_SOURCE_DIR}/cmake/gen_man.sh
    COMMENT "Manual pages from --help (help2man)")
  add_custom_target(el_man ALL DEPENDS ${man_out})
  install(FILES ${man_out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(WARNING "help2man not found: no manual pages "
                  "(apt-get install help2man, scripts/setup.sh)")
endif()
if(Python3_Interpreter_FOUND)
  set(comp_out ${EL_GEN_DIR}/completion/bash/eventlog-live
      ${EL_GEN_DIR}/completion/bash/eventlog-live-otelcol
      ${EL_GEN_DIR}/completion/zsh/_eventlog-live)
  add_custom_command(OUTPUT ${comp_out}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/cmake/gen_completion.py
            $<TARGET_FILE:eventlog-live> ${EL_GEN_DIR}/completion
    DEPENDS eventlog-live ${CMAKE_SOURCE_DIR}/cmake/gen_completion.py
    COMMENT "Shell completion from --help")
  add_custom_target(el_completion ALL DEPENDS ${comp_out})
  install(FILES ${EL_GEN_DIR}/completion/bash/eventlog-live
                ${EL_GEN_DIR}/completion/bash/eventlog-live-otelcol
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
  install(FILES ${EL_GEN_DIR}/completion/zsh/_eventlog-live
          DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
else()
  message(WARNING "python3 not found: no shell completion")
endif()

# The copyright file (Debian policy 12.5): the project's LICENSE and the
# copyright notice of each static library the binary embeds
# (EL_STATIC_LIBS: Debian's archives, whose packages' notices are read at
# build time), and the value of the package's Built-Using field naming
# their source packages (cmake/gen_copyright.sh). The archives are
# dependencies: an upgraded -dev package remakes both.
get_property(el_archives GLOBAL PROPERTY EL_STATIC_ARCHIVES)
set(el_notice ${EL_GEN_DIR}/doc/copyright ${EL_GEN_DIR}/doc/built-using)
add_custom_command(OUTPUT ${el_notice}
  COMMAND bash ${CMAKE_SOURCE_DIR}/cmake/gen_copyright.sh ${EL_GEN_DIR}/doc
          ${CMAKE_SOURCE_DIR}/LICENSE ${PROJECT_NAME} ${PROJECT_VERSION}
          ${el_archives}
  DEPENDS ${CMAKE_SOURCE_DIR}/cmake/gen_copyright.sh
          ${CMAKE_SOURCE_DIR}/LICENSE ${el_archives}
  COMMENT "copyright and Built-Using of the embedded static libraries")
add_custom_target(el_copyright ALL DEPENDS ${el_notice})
install(FILES ${EL_GEN_DIR}/doc/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The Debian package: `cd build && cpack -G DEB` -> eventlog-live_VERSION_ARCH.deb.
# Depends is computed by dpkg-shlibdeps from the linked libraries, plus
# libseccomp2, which watch opens with dlopen (src/common/el_rtsguard.c);
# Built-Using (the static libraries' sources) is read from the file above
# when cpack runs (cmake/cpack_project.cmake).
set(CPACK_PACKAGE_NAME eventlog-live)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "eventlog-live maintainers <eventlog-live@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GHC eventlog reader: live analysis in Lua and OpenTelemetry export")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Reads a GHC program's eventlog (file, FIFO, eventlog-socket) live,
runs Lua processors over it and exports heap, thread, log and profile
telemetry to an OpenTelemetry collector, a Prometheus endpoint and a web
view. Commands: eventlog-live (show, stats, run, repl, report, watch,
otelcol) and the daemon eventlog-live-otelcol.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libseccomp2")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_EL_BUILT_USING_FILE ${EL_GEN_DIR}/doc/built-using)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_SOURCE_DIR}/cmake/cpack_project.cmake)
include(CPack)
