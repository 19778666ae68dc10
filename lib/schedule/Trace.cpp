//===- lib/schedule/Trace.cpp - Trace JSON and replay ----------------------===//
//
// The registry maps an op name to its replay function. Primitives register at
// the end of their own files with a namespace-scope initialiser; those files
// are always linked because Schedule.cpp calls their detail:: functions.
//
//===----------------------------------------------------------------------===//
#include "tessera/schedule/Trace.h"

#include <unordered_map>

namespace tessera::schedule {

namespace {

std::unordered_map<std::string, ReplayFn> &registry() {
  static std::unordered_map<std::string, ReplayFn> r;
  return r;
}

std::string op_of(const Json &inst) {
  auto it = inst.find("op");
  return it != inst.end() && it->is_string() ? it->get<std::string>() : "?";
}

std::string prefix(size_t index, const std::string &op) {
  return "trace instruction " + std::to_string(index) + " (" + op + ")";
}

[[noreturn]] void trace_error(const std::string &message) { throw TraceError("replay", message); }

}  // namespace

bool register_instruction(std::string_view op, ReplayFn fn) {
  registry()[std::string(op)] = fn;
  return true;
}

ReplayFn find_instruction(std::string_view op) {
  auto it = registry().find(std::string(op));
  return it == registry().end() ? nullptr : it->second;
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

std::string Trace::dump(const Json &v) {
  if (v.is_object()) {
    std::string s = "{";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      s += (first ? "" : ", ") + Json(it.key()).dump() + ": " + dump(it.value());
      first = false;
    }
    return s + "}";
  }
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + dump(v[i]);
    return s + "]";
  }
  return v.dump();
}

std::string Trace::to_json() const {
  if (insts_.empty()) return "[]\n";
  std::string s = "[\n";
  for (size_t i = 0; i < insts_.size(); ++i) s += "  " + dump(insts_[i]) + (i + 1 < insts_.size() ? ",\n" : "\n");
  return s + "]\n";
}

Trace Trace::from_json(std::string_view text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception &e) {
    trace_error(std::string("trace is not valid JSON: ") + e.what());
  }
  if (!j.is_array()) trace_error("a trace must be a JSON list of instructions");
  Trace t;
  for (size_t i = 0; i < j.size(); ++i) {
    const Json &inst = j[i];
    if (!inst.is_object()) trace_error(prefix(i, "?") + ": an instruction must be a JSON object");
    auto op = inst.find("op");
    if (op == inst.end() || !op->is_string()) trace_error(prefix(i, "?") + ": 'op' must be a string");
    if (!find_instruction(op->get<std::string>()))
      trace_error(prefix(i, op->get<std::string>()) + ": unknown op '" + op->get<std::string>() + "'");
    t.append(inst);
  }
  return t;
}

void Trace::apply(Schedule &sch) const {
  std::map<std::string, BlockOrLoop> names;
  for (size_t i = 0; i < insts_.size(); ++i) {
    const Json &inst = insts_[i];
    std::string op = op_of(inst);
    ReplayFn fn = find_instruction(op);
    if (!fn) trace_error(prefix(i, op) + ": unknown op '" + op + "'");
    ReplayContext ctx(sch, names, i, inst);
    try {
      fn(ctx);
    } catch (TraceError &) {
      throw;
    } catch (ScheduleError &e) {
      e.add_context(prefix(i, op));
      throw;
    }
  }
}

//===----------------------------------------------------------------------===//
// ReplayContext
//===----------------------------------------------------------------------===//

void ReplayContext::fail(std::string_view field, const std::string &message) const {
  trace_error(prefix(index_, op_of(inst_)) + ": '" + std::string(field) + "' " + message);
}

bool ReplayContext::has(std::string_view f) const { return inst_.contains(std::string(f)); }

const Json &ReplayContext::field(std::string_view f) const {
  auto it = inst_.find(std::string(f));
  if (it == inst_.end()) fail(f, "is missing");
  return *it;
}

std::string ReplayContext::string(std::string_view f) const {
  const Json &v = field(f);
  if (!v.is_string()) fail(f, "must be a string");
  return v.get<std::string>();
}

int64_t ReplayContext::integer(std::string_view f) const {
  const Json &v = field(f);
  if (!v.is_number_integer()) fail(f, "must be an integer");
  return v.get<int64_t>();
}

std::vector<std::string> ReplayContext::strings(std::string_view f) const {
  const Json &v = field(f);
  if (!v.is_array()) fail(f, "must be a list of names");
  std::vector<std::string> out;
  for (const Json &x : v) {
    if (!x.is_string()) fail(f, "must be a list of names");
    out.push_back(x.get<std::string>());
  }
  return out;
}

BlockOrLoop ReplayContext::lookup(std::string_view f, const std::string &name) const {
  auto it = names_.find(name);
  if (it == names_.end()) fail(f, "names '" + name + "', which no earlier instruction defines");
  return it->second;
}

LoopRef ReplayContext::loop(std::string_view f) const {
  std::string name = string(f);
  BlockOrLoop h = lookup(f, name);
  if (!std::holds_alternative<LoopRef>(h)) fail(f, "names '" + name + "', which is a block, not a loop");
  return std::get<LoopRef>(h);
}

BlockRef ReplayContext::block(std::string_view f) const {
  std::string name = string(f);
  BlockOrLoop h = lookup(f, name);
  if (!std::holds_alternative<BlockRef>(h)) fail(f, "names '" + name + "', which is a loop, not a block");
  return std::get<BlockRef>(h);
}

std::vector<LoopRef> ReplayContext::loops(std::string_view f) const {
  std::vector<LoopRef> out;
  for (const std::string &name : strings(f)) {
    BlockOrLoop h = lookup(f, name);
    if (!std::holds_alternative<LoopRef>(h)) fail(f, "names '" + name + "', which is a block, not a loop");
    out.push_back(std::get<LoopRef>(h));
  }
  return out;
}

BlockOrLoop ReplayContext::block_or_loop() const {
  if (has("block")) return block("block");
  if (has("loop")) return loop("loop");
  fail("block", "is missing (or give 'loop')");
}

void ReplayContext::bind(const std::string &name, const BlockOrLoop &handle) { names_[name] = handle; }

Json to_json(const BlockOrLoop &h) { return name_of(h); }
Json to_json(const std::vector<LoopRef> &loops) {
  Json j = Json::array();
  for (const LoopRef &l : loops) j.push_back(l.name());
  return j;
}
Json to_json(const std::vector<BlockRef> &blocks) {
  Json j = Json::array();
  for (const BlockRef &b : blocks) j.push_back(b.name);
  return j;
}

}  // namespace tessera::schedule
