# packaging.cmake -- the man pages, the licence and changelog files, and the
# Debian packages. In the build directory, `cpack -G DEB` makes three
# packages from the install components:
#
#   libfleet2     lib    the shared library (libfleet.so.2; the package is
#                        named after the soname, FLEET_SOVERSION)
#   libfleet-dev  dev    headers, libfleet.so, libfleet.a, fleet.pc, the CMake
#                        package, fleet(3) and the pages of the headers and
#                        their functions (fleet_queue(3), fleet_queue_enqueue(3)
#                        ...), the Lua scripts expanded
#                        (share/fleet/lua, for other languages)
#   fleet-tools   tools  bin/fleet (the CLI, when built), bin/fleet-demo,
#                        fleet(1), fleet-demo(1)
#
# installed under /usr, the libraries in the multiarch directory (see
# CMakeLists.txt). Each package holds /usr/share/doc/<package>/copyright
# (machine-readable, DEP-5) and changelog.Debian.gz. The run-time
# dependencies of the library and the programs come from dpkg-shlibdeps
# alone (one entry per library); libfleet-dev names the -dev packages its
# pkg-config file and CMake package need. tests/install/deb.sh checks the
# packages, and runs lintian on them.

include(GNUInstallDirs)

# Who answers for the packages, and the project's home page (left out of
# the packages when empty). Set both when building packages to publish.
set(FLEET_DEB_MAINTAINER
    "fleet maintainers <maintainers@users.noreply.a-seed-77570848.example>"
    CACHE STRING "Maintainer field of the Debian packages")
set(FLEET_HOMEPAGE "" CACHE STRING
    "The project's home page (Homepage of the Debian packages)")
# The date of this release, for the packages' changelog (RFC 5322).
set(FLEET_RELEASE_DATE "Fri, 27 Nov 2026 06:00:00 +0000")

set(FLEET_DEB_LIB libfleet${FLEET_SOVERSION})
set(FLEET_DEB_RELEASE 1)

# Man pages, compressed as Debian wants them (gzip -n: no name or time in
# the header, so that two builds give the same bytes).
find_program(FLEET_GZIP gzip)
mark_as_advanced(FLEET_GZIP)
if(NOT FLEET_GZIP)
  message(FATAL_ERROR "gzip is needed to install the man pages")
endif()
set(FLEET_DOC_DIR ${PROJECT_BINARY_DIR}/doc)
file(MAKE_DIRECTORY ${FLEET_DOC_DIR})
function(fleet_gzip src out)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${FLEET_GZIP} -9nc ${src} > ${out}
    DEPENDS ${src}
    VERBATIM)
endfunction()
set(FLEET_MAN_PAGES man1/fleet-demo.1 man3/fleet.3)
if(TARGET fleet-cli)
  list(APPEND FLEET_MAN_PAGES man1/fleet.1)
endif()
set(FLEET_DOC_OUTPUTS "")
foreach(page IN LISTS FLEET_MAN_PAGES)
  get_filename_component(section ${page} DIRECTORY)
  get_filename_component(name ${page} NAME)
  file(MAKE_DIRECTORY ${FLEET_DOC_DIR}/${section})
  fleet_gzip(${PROJECT_SOURCE_DIR}/man/${name} ${FLEET_DOC_DIR}/${page}.gz)
  list(APPEND FLEET_DOC_OUTPUTS ${FLEET_DOC_DIR}/${page}.gz)
endforeach()
install(FILES ${FLEET_DOC_DIR}/man1/fleet-demo.1.gz
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools)
# fleet(1) documents the CLI of tools/fleet: installed with it.
if(TARGET fleet-cli)
  install(FILES ${FLEET_DOC_DIR}/man1/fleet.1.gz
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools)
endif()
install(FILES ${FLEET_DOC_DIR}/man3/fleet.3.gz
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man3 COMPONENT dev)
# The pages of the public headers, fleet_<header>(3), and one page per
# public function that sources its header's page (".so"): generated from
# the headers' comments by scripts/gen-man.py and committed (the test
# man-pages says when they are stale), so that building needs no python3.
file(GLOB FLEET_MAN3_PAGES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/man/fleet_*.3 ${PROJECT_SOURCE_DIR}/man/links/*.3)
set(FLEET_MAN3_OUTPUTS "")
foreach(src IN LISTS FLEET_MAN3_PAGES)
  get_filename_component(name ${src} NAME)
  fleet_gzip(${src} ${FLEET_DOC_DIR}/man3/${name}.gz)
  list(APPEND FLEET_MAN3_OUTPUTS ${FLEET_DOC_DIR}/man3/${name}.gz)
endforeach()
list(APPEND FLEET_DOC_OUTPUTS ${FLEET_MAN3_OUTPUTS})
install(FILES ${FLEET_MAN3_OUTPUTS}
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man3 COMPONENT dev)

# Per package: the copyright file (cmake/copyright, the same for all three)
# and a changelog.Debian.gz with this release's entry, which points to
# CHANGELOG.md's list of changes.
foreach(pkg ${FLEET_DEB_LIB} libfleet-dev fleet-tools)
  if(pkg STREQUAL FLEET_DEB_LIB)
    set(component lib)
  elseif(pkg STREQUAL "libfleet-dev")
    set(component dev)
  else()
    set(component tools)
  endif()
  set(FLEET_DEB_PACKAGE ${pkg})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/changelog.Debian.in
                 ${FLEET_DOC_DIR}/${pkg}/changelog.Debian @ONLY)
  fleet_gzip(${FLEET_DOC_DIR}/${pkg}/changelog.Debian
             ${FLEET_DOC_DIR}/${pkg}/changelog.Debian.gz)
  list(APPEND FLEET_DOC_OUTPUTS ${FLEET_DOC_DIR}/${pkg}/changelog.Debian.gz)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/copyright
                ${FLEET_DOC_DIR}/${pkg}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${pkg}
          COMPONENT ${component})
endforeach()
add_custom_target(fleet_docs ALL DEPENDS ${FLEET_DOC_OUTPUTS})

set(CPACK_PACKAGE_NAME fleet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "the fleet authors")
set(CPACK_PACKAGE_CONTACT "${FLEET_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${FLEET_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Coordinate processes through Redis from a libuv loop")
if(FLEET_HOMEPAGE)
  set(CPACK_PACKAGE_HOMEPAGE_URL "${FLEET_HOMEPAGE}")
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${FLEET_HOMEPAGE}")
endif()
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL lib dev tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${FLEET_DEB_RELEASE})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Debian ships binaries without their symbols (lintian:
# unstripped-binary-or-object).
set(CPACK_STRIP_FILES ON)
# Files 0644, directories and programs 0755, owned by root, whatever the
# build tree's umask.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_LIB_PACKAGE_NAME ${FLEET_DEB_LIB})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
# A shlibs file (for packages that link libfleet). The linker cache is
# refreshed by the ldconfig trigger (cmake/deb/triggers), not by
# maintainer scripts: the postinst and postrm given here replace the ones
# CPack would write to call ldconfig (lintian: lacks-ldconfig-trigger,
# maintscript-calls-ldconfig).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/cmake/deb/triggers
    ${PROJECT_SOURCE_DIR}/cmake/deb/postinst
    ${PROJECT_SOURCE_DIR}/cmake/deb/postrm)
# Lintian warns that those two scripts are empty: they are meant to be.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/deb/lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
        RENAME ${FLEET_DEB_LIB} COMPONENT lib)
set(CPACK_COMPONENT_LIB_DESCRIPTION
    "fleet: locks, leader election, job queues, pools and cron on Redis
 The shared library. fleet coordinates processes through Redis (or an
 in-process memory backend) from a libuv event loop.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libfleet-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# fleet.pc and fleet::fleet require libuv; linking libfleet.a (and
# fleet::fleet_static) also wants hiredis, the Lua it was built with
# (FLEET_LUA: LuaJIT or Lua 5.1) and OpenSSL, which are inside the shared
# library and absent from the headers: recommended, not required.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "${FLEET_DEB_LIB} (= ${PROJECT_VERSION}-${FLEET_DEB_RELEASE}), libuv1-dev (>= 1.44)")
if(FLEET_LUA_MODULE STREQUAL "luajit")
  set(FLEET_DEB_LUA_DEV libluajit-5.1-dev)
else()
  set(FLEET_DEB_LUA_DEV liblua5.1-0-dev)
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS
    "libhiredis-dev, ${FLEET_DEB_LUA_DEV}, libssl-dev")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "fleet: development files
 Headers, the static library, the pkg-config file (fleet.pc), the CMake
 package (find_package(fleet)) and the section 3 man pages: fleet(3), one
 page per header and one name per function.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME fleet-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "fleet: command-line tools
 fleet (inspect and operate queues, locks, leaders, pools and stores; a web
 dashboard) and fleet-demo (the demo worker), with their man pages.")

include(CPack)
