# pkg-config file for libcjrt (cjrt.pc), installed to <libdir>/pkgconfig by `cmake --install`.
#   cc prog.c $(pkg-config --cflags --libs cjrt)
#   pkg-config --variable=plugin cjrt     -> the installed cjrt PJRT plugin
# The prefix is written relative to the .pc file (${pcfiledir}), so `cmake --install --prefix X`
# and moved installations stay correct. Include this file from the top CMakeLists.txt after
# include(GNUInstallDirs).
include(GNUInstallDirs)

if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(CJRT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(CJRT_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH _cjrt_pc_up "/cjrt-prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/cjrt-prefix")
  string(REGEX REPLACE "/$" "" _cjrt_pc_up "${_cjrt_pc_up}")
  set(CJRT_PC_PREFIX "\${pcfiledir}/${_cjrt_pc_up}")
  set(CJRT_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(CJRT_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(CJRT_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/cjrt.pc" @ONLY CONTENT
"prefix=@CJRT_PC_PREFIX@
exec_prefix=\${prefix}
libdir=@CJRT_PC_LIBDIR@
includedir=@CJRT_PC_INCLUDEDIR@
plugin=\${libdir}/pjrt_c_api_cjrt_plugin.so

Name: cjrt
Description: libcjrt, the framework side of PJRT: load any PJRT plugin and run StableHLO on it
URL: https://openxla.org/xla/pjrt
Version: @PROJECT_VERSION@
Libs: -L\${libdir} -lcjrt
Cflags: -I\${includedir}
")
install(FILES "${CMAKE_BINARY_DIR}/cjrt.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
