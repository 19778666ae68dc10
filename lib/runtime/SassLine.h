//===- SassLine.h - One instruction line of a SASS listing (private) -------===//
//
// Shared by parse_sass (cuobjdump listings, Sass.cpp) and summarise_cubins
// (nvdisasm on raw code, SassBatch.cpp): both tools print an instruction as
//   /*0090*/                   @P0 LDG.E.128 R8, desc[UR4][R4.64] ;   /* 0x... */
// and differ only in what surrounds the instructions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string_view>

#include "tessera/runtime/Sass.h"

namespace tessera::runtime::detail {

struct SassInstruction {
  uint64_t address = 0;        ///< the /*hex*/ offset
  std::string_view predicate;  ///< "@P0", "@!PT", "" when unconditional
  std::string_view opcode;     ///< with its modifiers: "LDG.E.128"
  std::string_view operands;   ///< up to the ';'
};

/// Reads one line; false when it is not an instruction (a header, an
/// encoding line `/* 0x... */`, a label, a truncated line).
bool read_instruction(std::string_view line, SassInstruction &out);

/// Adds `i` to `s`: always to `instructions`, and to its family's counts
/// unless it is predicated off for good (`@!PT`).
void count_instruction(SassSummary &s, const SassInstruction &i);

}  // namespace tessera::runtime::detail
