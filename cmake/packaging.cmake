# packaging.cmake -- the man pages and the Debian packages. In the build
# directory, `cpack -G DEB` makes three packages from the install
# components:
#
#   libfleet0     lib    the shared library (libfleet.so.0)
#   libfleet-dev  dev    headers, libfleet.so, libfleet.a, fleet.pc, the CMake
#                        package, fleet(3), the Lua scripts expanded
#                        (share/fleet/lua, for other languages)
#   fleet-tools   tools  bin/fleet (the CLI, when built), bin/fleet-demo,
#                        fleet(1), fleet-demo(1)
#
# installed under /usr. The run-time dependencies of the library and the
# programs come from dpkg-shlibdeps; libfleet-dev names the -dev packages
# its pkg-config file and CMake package need.

include(GNUInstallDirs)

install(FILES ${PROJECT_SOURCE_DIR}/man/fleet-demo.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools)
# fleet(1) documents the CLI of tools/fleet: installed with it.
if(TARGET fleet-cli)
  install(FILES ${PROJECT_SOURCE_DIR}/man/fleet.1
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/man/fleet.3
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man3 COMPONENT dev)

set(CPACK_PACKAGE_NAME fleet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR fleet)
set(CPACK_PACKAGE_CONTACT "fleet developers <fleet@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Coordinate processes through Redis from a libuv loop")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://example.invalid/fleet")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL lib dev tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

set(CPACK_DEBIAN_LIB_PACKAGE_NAME libfleet0)
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
# fleet is built against libuv 1.44 (dpkg-shlibdeps alone says 1.40); the
# rest of the run-time dependencies come from dpkg-shlibdeps.
set(CPACK_DEBIAN_LIB_PACKAGE_DEPENDS "libuv1 (>= 1.44)")
# A shlibs file (for packages that link libfleet) and the ldconfig calls.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_LIB_DESCRIPTION
    "fleet: locks, leader election, job queues, pools and cron on Redis
 The shared library. fleet coordinates processes through Redis (or an
 in-process memory backend) from a libuv event loop.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libfleet-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# fleet.pc and fleet::fleet require libuv; linking libfleet.a (and
# fleet::fleet_static) also wants hiredis, Lua 5.1 and OpenSSL, which are
# inside the shared library and absent from the headers: recommended, not
# required.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libfleet0 (= ${PROJECT_VERSION}-1), libuv1-dev (>= 1.44)")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS
    "libhiredis-dev, liblua5.1-0-dev, libssl-dev")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "fleet: development files
 Headers, the static library, the pkg-config file (fleet.pc), the CMake
 package (find_package(fleet)) and the fleet(3) man page.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME fleet-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libuv1 (>= 1.44)")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "fleet: command-line tools
 fleet (inspect and operate queues, locks, leaders, pools and stores; a web
 dashboard) and fleet-demo (the demo worker), with their man pages.")

include(CPack)
