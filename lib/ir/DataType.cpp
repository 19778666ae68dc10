//===- DataType.cpp - Names of data types ----------------------------------===//
#include "tessera/ir/DataType.h"

#include <charconv>

namespace tessera::ir {

std::string DataType::str() const {
  if (is_void()) return "void";
  std::string base;
  switch (code_) {
    case TypeCode::Bool: base = "bool"; break;
    case TypeCode::Int: base = "int" + std::to_string(bits_); break;
    case TypeCode::UInt: base = "uint" + std::to_string(bits_); break;
    case TypeCode::Float: base = "float" + std::to_string(bits_); break;
    case TypeCode::BFloat: base = "bfloat" + std::to_string(bits_); break;
    case TypeCode::Handle: return "handle";
  }
  if (lanes_ != 1) base += "x" + std::to_string(lanes_);
  return base;
}

std::optional<DataType> DataType::parse(std::string_view name) {
  if (name == "bool") return bool_();
  if (name == "handle") return handle();
  if (name == "void") return void_();
  auto with_prefix = [&](std::string_view prefix, TypeCode code,
                         std::initializer_list<int> allowed) -> std::optional<DataType> {
    if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
    std::string_view rest = name.substr(prefix.size());
    int bits = 0, lanes = 1;
    auto x = rest.find('x');
    std::string_view bits_text = rest.substr(0, x);
    auto [p, ec] = std::from_chars(bits_text.data(), bits_text.data() + bits_text.size(), bits);
    if (ec != std::errc() || p != bits_text.data() + bits_text.size() || bits_text.empty())
      return std::nullopt;
    if (x != std::string_view::npos) {
      std::string_view lanes_text = rest.substr(x + 1);
      auto [q, ec2] = std::from_chars(lanes_text.data(), lanes_text.data() + lanes_text.size(), lanes);
      if (ec2 != std::errc() || q != lanes_text.data() + lanes_text.size() || lanes < 1)
        return std::nullopt;
    }
    for (int b : allowed)
      if (b == bits) return DataType(code, bits, lanes);
    return std::nullopt;
  };
  if (auto t = with_prefix("uint", TypeCode::UInt, {8, 16, 32, 64})) return t;
  if (auto t = with_prefix("int", TypeCode::Int, {8, 16, 32, 64})) return t;
  if (auto t = with_prefix("bfloat", TypeCode::BFloat, {16})) return t;
  if (auto t = with_prefix("float", TypeCode::Float, {16, 32, 64})) return t;
  return std::nullopt;
}

}  // namespace tessera::ir
