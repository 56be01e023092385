# Install rules (cmake --install BUILD [--prefix DIR]):
#   include/seqrt/       seqrt.h, seqrt.hpp, seqrt_version.h
#   lib/                 libseqrt.so (+ SONAME link), and the backend plugins
#                        beside it (libseqrt_cuda.so, target seqrt_cuda)
#   lib/cmake/seqrt/     find_package(seqrt): target seqrt::seqrt
#   lib/pkgconfig/       seqrt.pc
#   bin/                 the seqrt command-line tool
# Everything is relocatable: the package files find the prefix from their
# own location, so --prefix works at install time.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SEQRT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/seqrt)

install(TARGETS seqrt_shared EXPORT seqrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/seqrt/seqrt.h
              ${PROJECT_SOURCE_DIR}/include/seqrt/seqrt.hpp
              ${PROJECT_BINARY_DIR}/include/seqrt/seqrt_version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/seqrt)
# Backend plugins are loaded at run time from the library's own folder.
if(TARGET seqrt_cuda)
  install(TARGETS seqrt_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(TARGETS seqrt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT seqrtTargets NAMESPACE seqrt::
        DESTINATION ${SEQRT_INSTALL_CMAKEDIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/seqrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/seqrtConfig.cmake
  INSTALL_DESTINATION ${SEQRT_INSTALL_CMAKEDIR})
# The ABI only changes with the SONAME; before 1.0 the minor version also
# breaks source compatibility, so the package asks for the same minor.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/seqrtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/seqrtConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/seqrtConfigVersion.cmake
        DESTINATION ${SEQRT_INSTALL_CMAKEDIR})

# pkg-config: the prefix is taken relative to the .pc file's folder.
file(RELATIVE_PATH SEQRT_PC_TO_PREFIX
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/seqrt.pc.in
               ${PROJECT_BINARY_DIR}/cmake/seqrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/seqrt.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
