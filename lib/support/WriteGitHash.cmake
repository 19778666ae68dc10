# cmake -DSOURCE_DIR=<repo> -DOUT=<file> -P WriteGitHash.cmake
# Writes `#define TESSERA_GIT_HASH "<12 hex digits>[-dirty]"` (or "" outside a
# git checkout) into OUT, touching OUT only when its text changes, so a build
# without a new commit recompiles nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE hash OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  set(hash "")
else()
  # Exit status 1: tracked files differ from HEAD.
  execute_process(COMMAND git -C "${SOURCE_DIR}" diff --quiet HEAD --
                  RESULT_VARIABLE dirty OUTPUT_QUIET ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND hash "-dirty")
  endif()
endif()
set(text "#define TESSERA_GIT_HASH \"${hash}\"\n")
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/WriteIfChanged.cmake)
tessera_write_if_changed("${OUT}" "${text}")
