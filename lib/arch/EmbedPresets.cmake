# cmake -DARCH_DIR=<repo>/arch -DOUT=<file> -P EmbedPresets.cmake
# Writes the GPU presets (ARCH_DIR/*.json, by file name) into OUT as C++
# initialisers {"h100_sxm.json", R"(...)"}, for Arch::presets() to fall back
# on where no data folder has arch/ (a program linked against an installed
# tessera). OUT is touched only when its text changes.
file(GLOB files "${ARCH_DIR}/*.json")
list(SORT files)
set(text "// Generated from arch/*.json by lib/arch/EmbedPresets.cmake: do not edit.\n")
foreach(f IN LISTS files)
  get_filename_component(name "${f}" NAME)
  file(READ "${f}" content)
  string(FIND "${content}" ")tessera_arch\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${f} contains the raw-string delimiter )tessera_arch\"")
  endif()
  string(APPEND text "{\"${name}\", R\"tessera_arch(${content})tessera_arch\"},\n")
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/WriteIfChanged.cmake)
tessera_write_if_changed("${OUT}" "${text}")
