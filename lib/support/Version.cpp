//===- Version.cpp - version() and git_hash() -------------------------------===//
#include "tessera/support/Version.h"

// Generated at build time: #define TESSERA_GIT_HASH "..." (see WriteGitHash.cmake).
#include "GitHash.inc"

namespace tessera {

std::string_view version() {
  return TESSERA_VERSION;
}

std::string_view git_hash() {
  return TESSERA_GIT_HASH;
}

}  // namespace tessera
