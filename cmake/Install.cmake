# cmake --install BUILD --prefix PREFIX installs
#   PREFIX/lib/libtessera_*.a            every library of the project (static, position-independent)
#   PREFIX/include/tessera/              the public headers (tessera/tessera.h is the facade)
#   PREFIX/lib/cmake/tessera/            tesseraConfig.cmake, its version file, the exported targets
#   PREFIX/bin/tessera                   the program
#   PREFIX/libexec/tessera/              tessera-measure-worker, which fast_tune measures in
#   PREFIX/share/tessera/                its data: arch/, workloads/, bench/suites/, examples/
# A project then writes
#   find_package(tessera 0.1 CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE tessera::tessera)    # the facade and all of tessera
#   target_link_libraries(engine PRIVATE tessera::dispatch) # launching saved kernels only
# (examples/consumer). The program finds its data beside it
# (support/DataPaths.h); a program linked against the libraries needs none
# (the GPU presets are compiled in).
include(CMakePackageConfigHelpers)

get_property(TESSERA_INSTALLED_LIBRARIES GLOBAL PROPERTY TESSERA_INSTALLED_LIBRARIES)
set_target_properties(tessera_api PROPERTIES EXPORT_NAME tessera)
set_target_properties(tessera_dispatch PROPERTIES EXPORT_NAME dispatch)
install(TARGETS ${TESSERA_INSTALLED_LIBRARIES} EXPORT tesseraTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT tesseraTargets NAMESPACE tessera:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)

# The program, with the directories of the shared libraries it links (NVRTC,
# LLVM, fmt) as its run path.
set_target_properties(tessera PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS tessera RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The measuring worker fast_tune spawns (tune/MeasureWorkerMain.h), where
# find_measure_worker looks for it: PREFIX/libexec/tessera.
set_target_properties(tessera-measure-worker PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS tessera-measure-worker RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/tessera)

# Headers: all but those of the program's own libraries (the benchmark suites).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessera DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  PATTERN bench EXCLUDE)

# The program's data, where support::data_root() looks for an installed one.
set(TESSERA_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/tessera)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/arch ${PROJECT_SOURCE_DIR}/workloads ${PROJECT_SOURCE_DIR}/examples
  DESTINATION ${TESSERA_INSTALL_DATADIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/bench/suites DESTINATION ${TESSERA_INSTALL_DATADIR}/bench)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tesseraConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tesseraConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tesseraConfig.cmake ${PROJECT_BINARY_DIR}/tesseraConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
