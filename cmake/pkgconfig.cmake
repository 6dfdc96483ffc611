# SPDX-License-Identifier: MIT
# pkgconfig.cmake -- writes <libdir>/pkgconfig/<name>.pc from <template>.pc.in
# beside this file. Runs at install time (install(CODE) in CMakeLists.txt
# sets RTMEM_PC_NAME, _TEMPLATE, _LIBS, _VERSION, _LIBS_PRIVATE, _LIBDIR,
# _INCLUDEDIR; one template serves a library's shared and -static files), when
# CMAKE_INSTALL_PREFIX is the prefix actually installed to: the one given to
# `cmake --install build --prefix P`, not the one configured. Staged installs
# (DESTDIR) write under DESTDIR but name the final prefix, as they should.

set(RTMEM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
# GNUInstallDirs' folders are relative to the prefix unless set absolute.
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${RTMEM_PC_${dir}}")
    set(RTMEM_PC_${dir}_FULL "${RTMEM_PC_${dir}}")
    set(full_${dir} "${RTMEM_PC_${dir}}")
  else()
    set(RTMEM_PC_${dir}_FULL "\${prefix}/${RTMEM_PC_${dir}}")
    set(full_${dir} "${CMAKE_INSTALL_PREFIX}/${RTMEM_PC_${dir}}")
  endif()
endforeach()

set(pc_file "$ENV{DESTDIR}${full_LIBDIR}/pkgconfig/${RTMEM_PC_NAME}.pc")
message(STATUS "Installing: ${pc_file}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/${RTMEM_PC_TEMPLATE}.pc.in" "${pc_file}" @ONLY)
list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${pc_file}")
