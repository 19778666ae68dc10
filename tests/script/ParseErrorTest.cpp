//===- ParseErrorTest.cpp - One test per class of TVMScript parse error ----===//
#include <gtest/gtest.h>

#include "tessera/script/Parser.h"

using tessera::script::parse_module;
using tessera::script::ParseError;

namespace {

// Parses `text` and returns the ParseError it must raise.
ParseError parse_error(const std::string &text) {
  try {
    parse_module(text, "prog.py");
  } catch (const ParseError &e) {
    return e;
  }
  ADD_FAILURE() << "no ParseError for:\n" << text;
  return ParseError("", 0, 0, "", "");
}

void expect_error(const std::string &text, int line, int col, const std::string &fragment) {
  ParseError e = parse_error(text);
  EXPECT_EQ(e.line, line) << e.what();
  EXPECT_EQ(e.col, col) << e.what();
  EXPECT_NE(e.message.find(fragment), std::string::npos) << "message: " << e.message;
  EXPECT_EQ(e.file, "prog.py");
  // what() is "FILE:LINE:COL: error: MESSAGE\nSOURCE LINE\nCARET".
  std::string prefix = "prog.py:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
  EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  std::string w = e.what();
  if (w.find('\t') == std::string::npos) {
    EXPECT_EQ(w.substr(w.rfind('\n') + 1), std::string(col - 1, ' ') + "^") << w;
  }
}

// A one-function program whose body (indented by 4) is `body`.
std::string func(const std::string &body, const std::string &params = "A: T.Buffer((16,), \"float32\")") {
  return "@T.prim_func\ndef main(" + params + "):\n" + body;
}

}  // namespace

// ---- lexing ----
TEST(ParseError, BadCharacter) { expect_error(func("    A[0] = $1\n"), 3, 12, "unexpected character '$'"); }
TEST(ParseError, UnterminatedString) {
  expect_error("@T.prim_func\ndef main(A: T.Buffer((16,), \"float32)):\n    pass\n", 2, 29, "unterminated string literal");
}
TEST(ParseError, InconsistentDedent) {
  expect_error(func("    for i in range(16):\n        A[i] = 0\n  A[0] = 1\n"), 5, 3, "unindent does not match");
}
TEST(ParseError, InconsistentTabs) {
  expect_error(func("    for i in range(16):\n\tA[i] = 0\n"), 4, 2, "inconsistent use of tabs and spaces");
}
TEST(ParseError, IntegerLiteralTooBig) {
  expect_error(func("    A[0] = 99999999999999999999\n"), 3, 12, "does not fit in int64");
}

// ---- syntax ----
TEST(ParseError, MissingColon) {
  expect_error(func("    for i in range(16)\n        A[i] = 0\n"), 3, 23, "expected ':' to start the for loop body");
}
TEST(ParseError, UnclosedParen) {
  expect_error("@T.prim_func\ndef main(A: T.Buffer((128,), \"float32\"):\n    pass\n", 2, 40,
               "expected ')' to close '(' from 2:9, found ':'");
}
TEST(ParseError, UnclosedBracketAtEndOfFile) {
  expect_error(func("    A[0] = (1 + 2\n"), 4, 1, "to close '(' from 3:12, found end of file");
}
TEST(ParseError, UnexpectedToken) { expect_error(func("    A[0] = 1 +* 2\n"), 3, 19 - 4, "expected an expression, found '*'"); }
TEST(ParseError, UnexpectedIndent) { expect_error(func("    A[0] = 1\n        A[1] = 2\n"), 4, 9, "unexpected indent"); }
TEST(ParseError, MissingIndentedBody) {
  expect_error(func("    for i in range(16):\n    A[i] = 0\n"), 4, 5, "expected an indented for loop body");
}
TEST(ParseError, ElseWithoutIf) { expect_error(func("    else:\n        pass\n"), 3, 5, "'else' without a matching 'if'"); }

// ---- semantics ----
TEST(ParseError, UndefinedName) { expect_error(func("    A[0] = x\n"), 3, 12, "undefined name 'x'"); }
TEST(ParseError, UnknownTFunction) { expect_error(func("    A[0] = T.expo(1.0)\n"), 3, 12, "unknown function 'T.expo'"); }
TEST(ParseError, WrongArgumentCount) { expect_error(func("    A[0] = T.exp(1.0, 2.0)\n"), 3, 12, "T.exp takes 1 argument, found 2"); }
TEST(ParseError, BadDtypeString) {
  expect_error("@T.prim_func\ndef main(A: T.Buffer((16,), \"flaot32\")):\n    pass\n", 2, 29, "unknown data type 'flaot32'");
}
TEST(ParseError, RemapKindArityMismatch) {
  expect_error(func("    for i, j in T.grid(16, 16):\n        with T.block(\"B\"):\n            vi, vj = T.axis.remap(\"S\", [i, j])\n"
                    "            A[vi] = 0\n"),
               5, 35, "kinds 'S' have 1 letter but 2 bindings are given");
}
TEST(ParseError, RemapNameCountMismatch) {
  expect_error(func("    for i, j in T.grid(16, 16):\n        with T.block(\"B\"):\n            vi = T.axis.remap(\"SS\", [i, j])\n"
                    "            A[vi] = 0\n"),
               5, 13, "T.axis.remap binds 2 iter vars but 1 name is assigned");
}
TEST(ParseError, RemapUnknownKind) {
  expect_error(func("    for i in range(16):\n        with T.block(\"B\"):\n            vi = T.axis.remap(\"X\", [i])\n            A[vi] = 0\n"),
               5, 31, "unknown iter kind 'X'");
}
TEST(ParseError, RemapBindingNotALoop) {
  expect_error(func("    for i in range(16):\n        with T.block(\"B\"):\n            vi = T.axis.remap(\"S\", [i + 1])\n            A[vi] = 0\n"),
               5, 37, "binding must be a loop variable");
}
TEST(ParseError, StoreToNonBuffer) {
  expect_error(func("    for i in range(16):\n        i[0] = 1\n"), 4, 9, "cannot store to 'i', which is not a buffer");
}
TEST(ParseError, WrongNumberOfIndices) {
  expect_error(func("    A[0, 1] = 1\n"), 3, 5, "buffer 'A' has 1 dimension but is indexed with 2 indices");
}
TEST(ParseError, NonIntegerIndex) { expect_error(func("    A[1.5] = 1\n"), 3, 7, "index of buffer 'A' must be an integer, found float32"); }
// A store of another type converts, as in TVM (TvmFormsTest); a handle cannot.
TEST(ParseError, HandleStoredIntoABuffer) {
  expect_error(func("    A[0] = h\n", "A: T.Buffer((16,), \"float32\"), h: T.handle"), 3, 12, "handle 'h' used as a value");
}
TEST(ParseError, MissingPrimFuncDecorator) { expect_error("def main(A: T.handle):\n    pass\n", 1, 1, "expected '@T.prim_func' before function 'main'"); }
TEST(ParseError, EmptyInput) { expect_error("", 1, 1, "expected a '@T.prim_func' function or an '@I.ir_module' class"); }
TEST(ParseError, OnlyComments) {
  expect_error("# from tvm.script import tir as T\n\n", 1, 1, "expected a '@T.prim_func' function");
}
TEST(ParseError, DuplicateFunctionName) {
  expect_error("@I.ir_module\nclass Module:\n    @T.prim_func\n    def f():\n        pass\n    @T.prim_func\n    def f():\n        pass\n",
               7, 5, "duplicate function name 'f'");
}
TEST(ParseError, DuplicateParameter) {
  expect_error(func("    pass\n", "A: T.handle, A: T.handle"), 2, 23, "duplicate parameter name 'A'");
}
TEST(ParseError, DeclarationOutsideBlock) { expect_error(func("    T.reads(A[0])\n"), 3, 5, "T.reads must be directly inside"); }
TEST(ParseError, UnknownKeywordArgument) {
  expect_error(func("    B = T.match_buffer(a, (16,), bogus=1)\n", "a: T.handle"), 3, 34,
               "unexpected keyword argument 'bogus' to T.match_buffer");
}
TEST(ParseError, MissingAnnotation) { expect_error(func("    pass\n", "a"), 2, 10, "parameter 'a' needs a type annotation"); }
TEST(ParseError, HandleUsedAsValue) {
  expect_error(func("    A = T.match_buffer(a, (16,))\n    A[0] = a\n", "a: T.handle"), 4, 12, "handle 'a' used as a value");
}
TEST(ParseError, BufferUsedAsValue) { expect_error(func("    A[0] = A\n"), 3, 12, "buffer 'A' used as a value"); }
TEST(ParseError, BitwiseOnFloat) { expect_error(func("    A[0] = A[0] & 1\n"), 3, 12, "operator '&' needs integer operands"); }
TEST(ParseError, LoopBoundsMustBeIntegers) { expect_error(func("    for i in range(1.5):\n        pass\n"), 3, 14, "loop bounds must be integers"); }
TEST(ParseError, NestingTooDeep) {
  std::string deep(500, '(');
  ParseError e = parse_error(func("    A[0] = " + deep + "1" + std::string(500, ')') + "\n"));
  EXPECT_NE(e.message.find("nesting too deep"), std::string::npos) << e.what();
}

// ---- typed literals out of range (TVM rejects them instead of wrapping) ----
TEST(ParseError, Int8ConstructorOutOfRange) {
  expect_error(func("    A[0] = T.int8(300)\n", "A: T.Buffer((16,), \"int8\")"), 3, 19,
               "value 300 is out of range for int8 [-128, 127]");
}
TEST(ParseError, Uint8ConstructorOfNegative) {
  expect_error(func("    A[0] = T.uint8(-1)\n", "A: T.Buffer((16,), \"uint8\")"), 3, 20,
               "value -1 is out of range for uint8 [0, 255]");
}
TEST(ParseError, Int32ConstructorOutOfRange) {
  expect_error(func("    A[0] = T.int32(3000000000)\n", "A: T.Buffer((16,), \"int32\")"), 3, 20,
               "value 3000000000 is out of range for int32 [-2147483648, 2147483647]");
}
TEST(ParseError, LiteralAdaptedToInt8OperandOutOfRange) {
  expect_error(func("    A[0] = A[1] + 300\n", "A: T.Buffer((16,), \"int8\")"), 3, 19,
               "value 300 is out of range for int8 [-128, 127]");
}
TEST(ParseError, LiteralStoredToInt8BufferOutOfRange) {
  expect_error(func("    A[0] = -129\n", "A: T.Buffer((16,), \"int8\")"), 3, 12,
               "value -129 is out of range for int8 [-128, 127]");
}
TEST(ParseError, Float16ConstructorOverflows) {
  expect_error(func("    A[0] = T.float16(70000)\n", "A: T.Buffer((16,), \"float16\")"), 3, 22,
               "value 70000 overflows float16");
}
TEST(ParseError, FloatLiteralAdaptedToFloat16OperandOverflows) {
  expect_error(func("    A[0] = A[1] * 1e5\n", "A: T.Buffer((16,), \"float16\")"), 3, 19,
               "value 100000 overflows float16");
}

// ---- with T.LetStmt ----
TEST(ParseError, LetStmtWithoutVariable) {
  expect_error(func("    with T.LetStmt(3):\n        A[0] = 1\n"), 3, 10, "T.LetStmt needs a variable");
}
TEST(ParseError, LetStmtAsNonName) {
  expect_error(func("    with T.LetStmt(3) as A[0]:\n        A[0] = 1\n"), 3, 26, "expected a variable name after 'as'");
}

// A lambda is refused; in T.comm_reducer (a cross-thread reduction TVM has
// already lowered) the error says what to give instead.
TEST(ParseError, LambdaAndLoweredCommReducer) {
  expect_error(func("    f = lambda x: x\n"), 3, 9, "lambda expressions are not supported");
  const std::string lowered =
      "    red_buf = T.alloc_buffer((1,), scope=\"local\")\n"
      "    T.attr(T.comm_reducer(lambda x0, y0: x0 + y0, [T.float32(0)]), \"reduce_scope\", T.reinterpret(\"handle\", "
      "T.uint64(0)))\n";
  expect_error(func(lowered), 4, 27, "T.comm_reducer is not supported");
  expect_error(func(lowered), 4, 27, "before TVM's LowerCrossThreadReduction");
}
