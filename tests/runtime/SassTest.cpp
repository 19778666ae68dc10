//===- SassTest.cpp - SASS listings summarised (unit: no toolkit, no tool) ---===//
//
// The fixtures in data/sass/ are real `cuobjdump -sass` output (CUDA 13.5) of
// cubins `tessera compile` built for sm_90; data/sass/README.md says how to
// make them again. The disassembler itself is replaced by small shell scripts
// here, so that its failures can be tested everywhere.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "tessera/runtime/Sass.h"

namespace tessera::runtime {
namespace {

namespace fs = std::filesystem;

std::string read_fixture(const std::string &name) {
  fs::path p = fs::path(TESSERA_TEST_DATA_DIR) / "runtime" / "data" / "sass" / name;
  std::ifstream in(p);
  EXPECT_TRUE(in) << "cannot read " << p;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A listing of one function with one instruction per line of `body`.
std::string listing(const std::vector<std::string> &body) {
  std::string text = "\n\tcode for sm_90\n\t\tFunction : k\n\t.headerflags\t@\"EF_CUDA_SM90\"\n";
  int addr = 0;
  for (const std::string &line : body) {
    char a[16];
    std::snprintf(a, sizeof a, "/*%04x*/", addr);
    text += "        " + std::string(a) + "                   " + line + " ;  /* 0x0000000000007918 */\n";
    text += "                                                  /* 0x000fc00000000000 */\n";
    addr += 16;
  }
  return text;
}

SassSummary only(const std::string &text) {
  std::vector<SassSummary> s = parse_sass(text);
  EXPECT_EQ(s.size(), 1u);
  return s.empty() ? SassSummary{} : s[0];
}

// tests/codegen/kernels/vector_dtypes.py: 16-byte float16/bfloat16/float32
// vectors, 4-byte float32 and 2-byte float16 scalars side by side.
TEST(SassFixture, VectorDtypesKernel) {
  SassSummary s = only(read_fixture("vector_dtypes.sm_90.sass"));
  EXPECT_EQ(s.name, "main_kernel");
  EXPECT_EQ(s.arch, "sm_90");
  EXPECT_EQ(s.instructions, 128);
  EXPECT_EQ(s.global_loads, (WidthCounts{{2, 1}, {4, 6}, {16, 4}}));
  EXPECT_EQ(s.global_stores, (WidthCounts{{2, 1}, {4, 2}, {16, 3}}));
  EXPECT_TRUE(s.shared_loads.empty());
  EXPECT_TRUE(s.shared_stores.empty());
  EXPECT_EQ(s.local_loads + s.local_stores, 0);
  EXPECT_TRUE(s.tensor_ops.empty());
  EXPECT_EQ(s.widest_global_load(), 16);
  EXPECT_EQ(s.widest_global_store(), 16);
  EXPECT_EQ(s.str(),
            "global ld 16B x4, 4B x6, 2B x1 | st 16B x3, 4B x2, 2B x1 | shared 0 | local 0 | mma 0 | "
            "HFMA2 1");
}

// tests/codegen/kernels/transpose_shared.py: a 32 x 33 float32 tile in shared memory.
TEST(SassFixture, TransposeThroughSharedMemory) {
  SassSummary s = only(read_fixture("transpose_shared.sm_90.sass"));
  EXPECT_EQ(s.name, "main_kernel");
  EXPECT_EQ(s.instructions, 56);
  EXPECT_EQ(s.global_loads, (WidthCounts{{4, 4}}));
  EXPECT_EQ(s.global_stores, (WidthCounts{{4, 4}}));
  EXPECT_EQ(s.shared_loads, (WidthCounts{{4, 4}}));
  EXPECT_EQ(s.shared_stores, (WidthCounts{{4, 4}}));
  EXPECT_TRUE(s.fma_ops.empty());
  EXPECT_EQ(s.str(), "global ld 4B x4 | st 4B x4 | shared ld 4B x4 st 4B x4 | local 0 | mma 0 | FMA 0");
}

// An excerpt of real output (nvcc -arch=sm_90, inline PTX): cp.async,
// ldmatrix, one mma.sync, and the `@!PT LDS RZ, [RZ]` padding ptxas puts
// before cp.async, which never executes.
const char *kTensorCoreExcerpt = R"sass(
	code for sm_90
		Function : tc
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*00b0*/                   LDC.64 R4, c[0x0][0x218] ;                                    /* 0x00008600ff047b82 */
                                                                                                 /* 0x000e620000000a00 */
        /*00c0*/              @!PT LDS RZ, [RZ] ;                                                /* 0x00000000fffff984 */
                                                                                                 /* 0x000fe20000000800 */
        /*00d0*/              @!PT LDS RZ, [RZ] ;                                                /* 0x00000000fffff984 */
                                                                                                 /* 0x000fe20000000800 */
        /*00f0*/                   LDGSTS.E.BYPASS.128 [R7], desc[UR4][R2.64] ;                  /* 0x0000000002077fae */
                                                                                                 /* 0x0001e8000b981a04 */
        /*0100*/                   LDGSTS.E [R7+0x4], desc[UR4][R2.64+0x4] ;                     /* 0x0000400402077fae */
                                                                                                 /* 0x0001e8000b121844 */
        /*0110*/                   LDGDEPBAR ;                                                   /* 0x00000000000079af */
                                                                                                 /* 0x000fe20000000000 */
        /*0150*/                   LDSM.16.M88.4 R8, [R7] ;                                      /* 0x000000000708783b */
                                                                                                 /* 0x001e240000000200 */
        /*0160*/                   HMMA.16816.F32 R8, R8, R8, RZ ;                               /* 0x000000080808723c */
                                                                                                 /* 0x001b5e00000018ff */
        /*0180*/                   STG.E desc[UR4][R4.64], R8 ;                                  /* 0x0000000804007986 */
                                                                                                 /* 0x020fe8000c101904 */
        /*01c0*/                   EXIT ;                                                        /* 0x000000000000794d */
                                                                                                 /* 0x000fea0003800000 */
		..........
)sass";

TEST(SassParse, TensorCoresLdmatrixAndCpAsync) {
  SassSummary s = only(kTensorCoreExcerpt);
  EXPECT_EQ(s.name, "tc");
  EXPECT_EQ(s.instructions, 10);
  EXPECT_TRUE(s.shared_loads.empty()) << "@!PT instructions never execute";
  EXPECT_EQ(s.async_copies, (WidthCounts{{4, 1}, {16, 1}}));
  EXPECT_EQ(s.ldmatrix, 1);
  EXPECT_EQ(s.tensor_ops, (std::map<std::string, int64_t>{{"HMMA", 1}}));
  EXPECT_EQ(s.global_stores, (WidthCounts{{4, 1}}));
  EXPECT_TRUE(s.global_loads.empty()) << "LDGSTS is not an LDG";
  EXPECT_EQ(s.str(),
            "global ld 0 | st 4B x1 | shared 0 | ldmatrix 1 | cp.async 16B x1, 4B x1 | local 0 | "
            "HMMA 1 | FMA 0");
}

struct WidthCase {
  const char *opcode;
  int bytes;
};
void PrintTo(const WidthCase &c, std::ostream *os) { *os << c.opcode << " -> " << c.bytes; }

class SassWidth : public ::testing::TestWithParam<WidthCase> {};

TEST_P(SassWidth, OfEachSuffix) {
  const WidthCase &c = GetParam();
  EXPECT_EQ(access_width(c.opcode), c.bytes) << c.opcode;
  // The same through a listing: the opcode lands in its family's map at that width.
  SassSummary s = only(listing({std::string(c.opcode) + " R2, desc[UR4][R4.64]"}));
  std::string base = std::string(c.opcode).substr(0, std::string(c.opcode).find('.'));
  const WidthCounts *family = base == "LDG"      ? &s.global_loads
                              : base == "STG"    ? &s.global_stores
                              : base == "LDS"    ? &s.shared_loads
                              : base == "STS"    ? &s.shared_stores
                              : base == "LDGSTS" ? &s.async_copies
                              : base == "LD"     ? &s.generic_loads
                                                 : &s.generic_stores;
  EXPECT_EQ(*family, (WidthCounts{{c.bytes, 1}})) << c.opcode;
}

INSTANTIATE_TEST_SUITE_P(
    Suffixes, SassWidth,
    ::testing::Values(WidthCase{"LDG.E.U8.CONSTANT", 1}, WidthCase{"LDG.E.S8", 1}, WidthCase{"STG.E.U8", 1},
                      WidthCase{"LDG.E.U16.CONSTANT", 2}, WidthCase{"STG.E.S16", 2}, WidthCase{"LDG.E", 4},
                      WidthCase{"LDG.E.CONSTANT", 4}, WidthCase{"STG.E.STRONG.GPU", 4},
                      WidthCase{"LDG.E.64.CONSTANT", 8}, WidthCase{"LDG.E.LU.64", 8},
                      WidthCase{"LDG.E.128.CONSTANT", 16}, WidthCase{"LDG.E.EL.128", 16},
                      WidthCase{"STG.E.128", 16}, WidthCase{"STG.E.STRONG.SYS.128", 16},
                      WidthCase{"LDG.E.ENL2.256", 32}, WidthCase{"LDS.U16", 2}, WidthCase{"LDS", 4},
                      WidthCase{"LDS.U.128", 16}, WidthCase{"STS.64", 8},
                      WidthCase{"LDGSTS.E.BYPASS.128", 16}, WidthCase{"LDGSTS.E.BYPASS.LTC128B.128", 16},
                      WidthCase{"LDGSTS.E", 4}, WidthCase{"LD.E.64", 8}, WidthCase{"ST.E.U8", 1}),
    [](const ::testing::TestParamInfo<WidthCase> &info) {
      std::string name = info.param.opcode;  // "LDG.E.U16.CONSTANT" -> "LDG_E_U16_CONSTANT"
      for (char &ch : name)
        if (ch == '.') ch = '_';
      return name;
    });

TEST(SassParse, LocalMemoryAtomicsAndFusedMultiplyAdds) {
  SassSummary s = only(listing({
      "STL [R1], R4",
      "STL.64 [R1+0x8], R6",
      "LDL R4, [R1]",
      "@P0 REDG.E.ADD.STRONG.GPU desc[UR6][R18.64], R27",
      "@P0 ATOMG.E.ADD.STRONG.GPU PT, R15, desc[UR6][R14.64], R27",
      "ATOMS.ADD R3, [R2], R5",
      "FFMA R0, R2, R3, R0",
      "FFMA.SAT R0, R2, 1.4426950216293334961, -R0",
      "DFMA R4, R4, R4, 1",
      "HFMA2.MMA R5, -RZ, RZ, 1.875, 0",  // a constant moved into R5
      "HFMA2 R6, R2.H0_H0, R3, R6",
      "HGMMA.64x128x16.F32 R24, gdesc[UR4], R24",
  }));
  EXPECT_EQ(s.local_stores, 2);
  EXPECT_EQ(s.local_loads, 1);
  EXPECT_EQ(s.atomics, 2);
  EXPECT_EQ(s.shared_atomics, 1);
  EXPECT_EQ(s.fma_ops, (std::map<std::string, int64_t>{{"DFMA", 1}, {"FFMA", 2}, {"HFMA2", 1}}));
  EXPECT_EQ(s.tensor_ops, (std::map<std::string, int64_t>{{"HGMMA", 1}}));
  EXPECT_EQ(s.str(),
            "global ld 0 | st 0 | shared 0 | local ld 1 st 2 | atomics 3 (shared 1) | HGMMA 1 | "
            "DFMA 1, FFMA 2, HFMA2 1");
}

TEST(SassParse, SeveralFunctionsAndArchitectures) {
  std::string text = listing({"LDG.E.128 R4, desc[UR4][R2.64]"});
  std::string second = listing({"STG.E.U16 desc[UR4][R2.64], R4"});
  second.replace(second.find("sm_90"), 5, "sm_80");
  second.replace(second.find("Function : k"), 12, "Function : other_kernel");
  std::vector<SassSummary> s = parse_sass(text + second);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "k");
  EXPECT_EQ(s[0].arch, "sm_90");
  EXPECT_EQ(s[1].name, "other_kernel");
  EXPECT_EQ(s[1].arch, "sm_80");
  SassSummary sum = s[0];
  sum += s[1];
  EXPECT_EQ(sum.name, "k");
  EXPECT_EQ(sum.instructions, 2);
  EXPECT_EQ(sum.widest_global_load(), 16);
  EXPECT_EQ(sum.widest_global_store(), 2);
}

TEST(SassParse, EmptyOrMalformedTextGivesNoSummaryAndNeverThrows) {
  EXPECT_TRUE(parse_sass("").empty());
  EXPECT_TRUE(parse_sass("cuobjdump fatal   : Invalid fatbin header in 'x'\n").empty());
  // Instructions before any function header are dropped.
  EXPECT_TRUE(parse_sass("/*0000*/ LDG.E R2, desc[UR4][R4.64] ;\n").empty());
  // A header alone is a function with nothing in it.
  SassSummary s = only("\t\tFunction : k\n");
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.str(), "global ld 0 | st 0 | shared 0 | local 0 | mma 0 | FMA 0");
  // Truncated and odd lines: an address with nothing after it, a predicate
  // with no opcode, an unterminated address, lower-case junk, binary bytes.
  std::string junk =
      "Function : k\n/*0010*/\n/*0020*/ @P0\n/*0030 LDG.E R1\n/*zz*/ LDG.E R1 ;\n/*0040*/ "
      "ldg r1 ;\n";
  const char binary[] = "\0\x01\xff/*0050*/ \x80\x81 ;\n";
  junk.append(binary, sizeof binary - 1);
  junk += "/*0060*/ LDG";  // no newline, no ';'
  s = only(junk);
  EXPECT_EQ(s.instructions, 1);
  EXPECT_EQ(s.global_loads, (WidthCounts{{4, 1}}));
}

TEST(SassCheck, WidthContradiction) {
  SassSummary narrow =
      only(listing({"LDG.E.U16.CONSTANT R2, desc[UR4][R4.64]", "STG.E.U16 desc[UR4][R2.64], R4"}));
  std::optional<std::string> why = width_contradiction(narrow, 16);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "no global load or store is 16 bytes wide: the widest load is 2 bytes, the "
            "widest store 2 bytes");
  EXPECT_FALSE(width_contradiction(narrow, 2));
  EXPECT_FALSE(width_contradiction(narrow, 0)) << "nothing expected";
  // A wide load alone is enough (a reduction stores one narrow value per row).
  SassSummary load_only =
      only(listing({"LDG.E.128.CONSTANT R4, desc[UR4][R2.64]", "STG.E.U16 desc[UR4][R2.64], R4"}));
  EXPECT_FALSE(width_contradiction(load_only, 16));
  EXPECT_FALSE(width_contradiction(load_only, 8)) << "wider than asked is not a contradiction";
  SassSummary none = only(listing({"FFMA R0, R2, R3, R0"}));
  EXPECT_EQ(width_contradiction(none, 4).value_or(""),
            "no global load or store is 4 bytes wide: there is no global access at all");
  EXPECT_FALSE(width_contradiction(SassSummary{}, 16)) << "an empty summary says nothing";
}

/// An executable shell script in a directory of the running test's own.
fs::path write_script(const std::string &name, const std::string &body) {
  const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::temp_directory_path() / "tessera_sass_test" / info->name();
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

const std::vector<uint8_t> kFakeCubin = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3};

TEST(SassDisassemble, RunsTheToolOnATemporaryCopyOfTheCubin) {
  // Checks its arguments, prints the fixture; the temporary file is gone afterwards.
  fs::path fixture =
      fs::path(TESSERA_TEST_DATA_DIR) / "runtime" / "data" / "sass" / "transpose_shared.sm_90.sass";
  fs::path tool = write_script("cuobjdump",
                               "[ \"$1\" = -sass ] || exit 3\nhead -c 4 \"$2\" | grep -q ELF || exit 4\n"
                               "echo \"$2\" > \"$(dirname \"$0\")/arg\"\ncat " +
                                   fixture.string());
  std::string text = disassemble(kFakeCubin, tool);
  EXPECT_EQ(only(text).shared_loads, (WidthCounts{{4, 4}}));
  std::ifstream arg(tool.parent_path() / "arg");
  std::string path;
  std::getline(arg, path);
  EXPECT_FALSE(path.empty());
  EXPECT_FALSE(fs::exists(path)) << path << " was not removed";
}

TEST(SassDisassemble, FailuresCarryTheToolsStderr) {
  fs::path tool =
      write_script("cuobjdump", "echo \"cuobjdump fatal   : Invalid fatbin header in '$2'\" >&2\nexit 255");
  try {
    disassemble(kFakeCubin, tool);
    FAIL() << "expected a DisassembleError";
  } catch (const DisassembleError &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("exited with status 255"), std::string::npos) << what;
    EXPECT_NE(what.find("Invalid fatbin header"), std::string::npos) << what;
  }
  EXPECT_THROW(disassemble({}, tool), DisassembleError);
  EXPECT_THROW(disassemble(kFakeCubin, "/nonexistent/cuobjdump"), DisassembleError);
}

TEST(SassDisassemble, AHangingToolIsKilledAtTheTimeout) {
  fs::path tool = write_script("cuobjdump", "sleep 30");
  auto start = std::chrono::steady_clock::now();
  try {
    disassemble(kFakeCubin, tool, 0.3);
    FAIL() << "expected a DisassembleError";
  } catch (const DisassembleError &e) {
    EXPECT_NE(std::string(e.what()).find("ran longer than 0.3 s"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(SassDisassemble, TheEnvironmentVariableChoosesTheTool) {
  const char *saved = std::getenv("TESSERA_CUOBJDUMP");
  std::string keep = saved ? saved : "";
  fs::path tool = write_script("my-cuobjdump", "exit 0");
  setenv("TESSERA_CUOBJDUMP", tool.c_str(), 1);
  EXPECT_EQ(find_disassembler(), std::optional<fs::path>(tool));
  // A variable that names nothing means "none", not "look elsewhere".
  setenv("TESSERA_CUOBJDUMP", "/nonexistent/cuobjdump", 1);
  EXPECT_EQ(find_disassembler(), std::nullopt);
  setenv("TESSERA_CUOBJDUMP", "/nonexistent/cuobjdump", 1);
  try {
    disassemble(kFakeCubin);
    FAIL() << "expected a DisassembleError";
  } catch (const DisassembleError &e) {
    EXPECT_NE(std::string(e.what()).find("no cuobjdump found"), std::string::npos) << e.what();
  }
  if (saved)
    setenv("TESSERA_CUOBJDUMP", keep.c_str(), 1);
  else
    unsetenv("TESSERA_CUOBJDUMP");
}

std::vector<uint8_t> read_cubin_fixture() {
  fs::path p = fs::path(TESSERA_TEST_DATA_DIR) / "runtime" / "data" / "sass" / "transpose_shared.sm_90.cubin";
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << p;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A stand-in for nvdisasm -b SMxy -ndf FILE: one 16-byte load per 16 bytes
/// of input (what the real one prints for each instruction word), its
/// arguments saved beside it.
const char *kFakeNvdisasm =
    "echo \"$@\" > \"$(dirname \"$0\")/nvdisasm-args\"\n"
    "n=$(( $(wc -c < \"$4\") / 16 )); i=0\n"
    "while [ $i -lt $n ]; do\n"
    "  printf '        /*%04x*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;\\n' $((i * 16))\n"
    "  i=$((i + 1))\n"
    "done";

// The code sections of several cubins in one nvdisasm run, each instruction
// given back to its cubin and function by its offset.
TEST(SassBatch, OneRunForManyCubinsSplitByOffset) {
  fs::path cuobjdump = write_script("cuobjdump", "echo 'cuobjdump should not run' >&2; exit 1");
  write_script("nvdisasm", kFakeNvdisasm);
  // main_kernel: 0x380 bytes of code, and shared memory: a NOBITS section
  // whose size reaches past the end of the file.
  std::vector<uint8_t> cubin = read_cubin_fixture();
  std::vector<const std::vector<uint8_t> *> cubins = {&cubin, &cubin, &cubin};
  std::vector<CubinSass> got = summarise_cubins(cubins, "sm_90", cuobjdump, 2);
  ASSERT_EQ(got.size(), 3u);
  for (const CubinSass &c : got) {
    EXPECT_EQ(c.error, "");
    ASSERT_EQ(c.functions.size(), 1u);
    EXPECT_EQ(c.functions[0].name, "main_kernel");
    EXPECT_EQ(c.functions[0].arch, "sm_90");
    EXPECT_EQ(c.functions[0].instructions, 0x380 / 16);
    EXPECT_EQ(c.functions[0].global_loads, (WidthCounts{{16, 0x380 / 16}}));
  }
  std::ifstream args(cuobjdump.parent_path() / "nvdisasm-args");
  std::string line;
  std::getline(args, line);
  EXPECT_TRUE(line.starts_with("-b SM90 -ndf ")) << line;
}

// What the batch cannot read goes to cuobjdump one cubin at a time: not an
// ELF, no nvdisasm beside cuobjdump, or an nvdisasm whose instruction count
// does not match its input.
TEST(SassBatch, FallsBackToCuobjdumpPerCubin) {
  fs::path fixture = fs::path(TESSERA_TEST_DATA_DIR) / "runtime" / "data" / "sass" / "transpose_shared.sm_90.sass";
  fs::path cuobjdump = write_script("cuobjdump", "cat " + fixture.string());
  std::vector<uint8_t> cubin = read_cubin_fixture();
  std::vector<const std::vector<uint8_t> *> cubins = {&cubin, &kFakeCubin};
  auto check = [&](const std::vector<CubinSass> &got, const std::string &why) {
    ASSERT_EQ(got.size(), 2u) << why;
    for (const CubinSass &c : got) {
      EXPECT_EQ(c.error, "") << why;
      ASSERT_EQ(c.functions.size(), 1u) << why;
      EXPECT_EQ(c.functions[0].shared_loads, (WidthCounts{{4, 4}})) << why << ": the fixture's counts";
    }
  };
  fs::remove(cuobjdump.parent_path() / "nvdisasm");  // left by an earlier run of this test
  check(summarise_cubins(cubins, "sm_90", cuobjdump), "no nvdisasm");
  write_script("nvdisasm", "echo '        /*0000*/ LDG.E R1, desc[UR4][R2.64] ;'");
  check(summarise_cubins(cubins, "sm_90", cuobjdump), "one instruction for 56 words");
  write_script("nvdisasm", "exit 1");
  check(summarise_cubins(cubins, "sm_90", cuobjdump), "nvdisasm fails");
  write_script("nvdisasm", kFakeNvdisasm);
  check(summarise_cubins(cubins, "compute_90", cuobjdump), "not an sm_XX arch");
  // A failing cuobjdump is that cubin's error, not an exception.
  fs::path broken = write_script("cuobjdump", "echo 'cuobjdump fatal   : bad input' >&2; exit 1");
  std::vector<CubinSass> got = summarise_cubins({&kFakeCubin}, "sm_90", broken);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].error.find("bad input"), std::string::npos) << got[0].error;
  EXPECT_TRUE(summarise_cubins({}, "sm_90", broken).empty());
}

}  // namespace
}  // namespace tessera::runtime
