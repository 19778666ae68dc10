//===- tessera/ir/DataType.h - Scalar data types ---------------------------===//
//
// A DataType is a (code, bits, lanes) triple, printed the way TVMScript spells
// it: "bool", "int8" ... "int64", "uint8" ... "uint64", "float16", "bfloat16",
// "float32", "float64", and "handle" for opaque pointers (buffer parameters).
// Vector lanes are carried but every type the project creates today has one
// lane.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::ir {

/// What family a DataType belongs to.
enum class TypeCode : uint8_t { Bool, Int, UInt, Float, BFloat, Handle };

/// A scalar (or, later, vector) element type.
///   DataType::float32().str() == "float32";  DataType::parse("int8") == DataType::int_(8)
class DataType {
 public:
  /// The default is `handle`-less "void": used only for statements' absent values.
  constexpr DataType() = default;
  constexpr DataType(TypeCode code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  static constexpr DataType bool_() { return {TypeCode::Bool, 1}; }
  static constexpr DataType int_(int bits) { return {TypeCode::Int, bits}; }
  static constexpr DataType uint(int bits) { return {TypeCode::UInt, bits}; }
  static constexpr DataType float_(int bits) { return {TypeCode::Float, bits}; }
  static constexpr DataType int32() { return int_(32); }
  static constexpr DataType int64() { return int_(64); }
  static constexpr DataType float16() { return float_(16); }
  static constexpr DataType bfloat16() { return {TypeCode::BFloat, 16}; }
  static constexpr DataType float32() { return float_(32); }
  static constexpr DataType float64() { return float_(64); }
  static constexpr DataType handle() { return {TypeCode::Handle, 64}; }
  /// The "no value" type of statements and of a default-constructed DataType.
  static constexpr DataType void_() { return {}; }

  constexpr TypeCode code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }
  /// Storage size of one element in bytes (bool takes one byte).
  constexpr int bytes() const { return bits_ == 1 ? 1 : (bits_ + 7) / 8; }

  constexpr bool is_void() const { return bits_ == 0; }
  constexpr bool is_bool() const { return code_ == TypeCode::Bool && bits_ == 1; }
  constexpr bool is_int() const { return code_ == TypeCode::Int && bits_ != 0; }
  constexpr bool is_uint() const { return code_ == TypeCode::UInt; }
  /// Signed or unsigned integer, not bool.
  constexpr bool is_integer() const { return is_int() || is_uint(); }
  /// float16/32/64 or bfloat16.
  constexpr bool is_float() const { return code_ == TypeCode::Float || code_ == TypeCode::BFloat; }
  constexpr bool is_bfloat16() const { return code_ == TypeCode::BFloat; }
  constexpr bool is_float16() const { return code_ == TypeCode::Float && bits_ == 16; }
  constexpr bool is_handle() const { return code_ == TypeCode::Handle; }
  /// Bool or integer: values the interpreter keeps as int64.
  constexpr bool is_int_like() const { return is_bool() || is_integer(); }

  constexpr DataType with_bits(int bits) const { return {code_, bits, lanes_}; }

  constexpr bool operator==(const DataType &o) const {
    return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_;
  }
  constexpr bool operator!=(const DataType &o) const { return !(*this == o); }

  /// TVMScript spelling: "float32", "bool", "handle", "void"; vectors as "float32x4".
  std::string str() const;
  /// Parses a TVMScript dtype name; nullopt when it is not one.
  static std::optional<DataType> parse(std::string_view name);

 private:
  TypeCode code_ = TypeCode::Int;
  uint8_t bits_ = 0;
  uint16_t lanes_ = 1;
};

}  // namespace tessera::ir
