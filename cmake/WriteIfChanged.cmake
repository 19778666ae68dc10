# tessera_write_if_changed(FILE TEXT): writes TEXT into FILE only when FILE
# does not already hold it, so that what includes FILE is not rebuilt for
# nothing. For the build-time scripts (cmake -P) that generate sources.
function(tessera_write_if_changed file text)
  set(old "")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${file}" "${text}")
  endif()
endfunction()
