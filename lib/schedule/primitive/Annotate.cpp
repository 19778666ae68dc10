//===- primitive/Annotate.cpp - annotate and unannotate --------------------===//
//
// Annotations are plain data on a loop (`annotations={...}`) or a block
// (`T.block_attr({...})`) that later passes read: pragmas such as
// "pragma_auto_unroll_max_step", "software_pipeline_stage". The loop keeps its
// variable, so handles stay valid.
//
//===----------------------------------------------------------------------===//
#include "../Primitive.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

const Annotations &annotations_of(const StmtPath &p) {
  return p.loop() ? p.loop()->annotations : p.block()->annotations;
}

std::string what(const StmtPath &p) {
  return p.loop() ? "loop " + loop_name(*p.loop()) : "block " + quoted(p.block()->name);
}

/// Steps 2-3 of both primitives.
void set_annotations(State &st, const StmtPath &p, Annotations anns) {
  Stmt s = p.loop() ? loop_with_annotations(*p.loop(), std::move(anns))
                    : block_with_annotations(*p.block(), std::move(anns));
  replace(st, p.stmt, s);
}

}  // namespace

void annotate(State &st, const BlockOrLoop &target, const std::string &key, const AnnValue &value) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath p = find(st, target, "annotate");
  if (key.empty())
    throw InvalidAnnotationKeyError("annotate", "cannot annotate " + what(p) + " with an empty key", "", {p.stmt});
  // Steps 2-3. Build the new node and replace it.
  Annotations anns = annotations_of(p);
  anns[key] = value;
  set_annotations(st, p, std::move(anns));
}

void unannotate(State &st, const BlockOrLoop &target, const std::string &key) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath p = find(st, target, "unannotate");
  Annotations anns = annotations_of(p);
  if (!anns.erase(key)) {
    std::string keys;
    for (const auto &[k, v] : annotations_of(p)) keys += (keys.empty() ? "" : ", ") + quoted(k);
    throw AnnotationNotFoundError("unannotate",
                                  what(p) + " has no annotation " + quoted(key) +
                                      (keys.empty() ? " (it has none)" : " (it has " + keys + ")"),
                                  "", {p.stmt});
  }
  // Steps 2-3. Build the new node and replace it.
  set_annotations(st, p, std::move(anns));
}

//===----------------------------------------------------------------------===//
// Trace
//===----------------------------------------------------------------------===//

Json ann_to_json(const AnnValue &v) {
  if (v.is_bool()) return v.as_bool();
  if (v.is_int()) return v.as_int();
  if (v.is_float()) return v.as_float();
  if (v.is_string()) return v.as_string();
  if (v.is_dict()) {
    Json d = Json::object();
    for (size_t i = 0; i < v.as_dict().keys.size(); ++i) d[v.as_dict().keys[i]] = ann_to_json(v.as_dict().values[i]);
    return d;
  }
  if (v.is_call()) {
    Json args = Json::array();
    for (const AnnValue &x : v.as_call().args) args.push_back(ann_to_json(x));
    return Json{{"call", v.as_call().callee}, {"args", args}};
  }
  Json j = Json::array();
  for (const AnnValue &x : v.as_list()) j.push_back(ann_to_json(x));
  return j;
}

std::optional<AnnValue> ann_from_json(const Json &j) {
  if (j.is_boolean()) return AnnValue(j.get<bool>());
  if (j.is_number_integer()) return AnnValue(j.get<int64_t>());
  if (j.is_number_float()) return AnnValue(j.get<double>());
  if (j.is_string()) return AnnValue(j.get<std::string>());
  if (j.is_object() && j.contains("call") && j["call"].is_string() && j.contains("args") && j["args"].is_array()) {
    AnnCall c{j["call"].get<std::string>(), {}};
    for (const Json &x : j["args"]) {
      auto v = ann_from_json(x);
      if (!v) return std::nullopt;
      c.args.push_back(*v);
    }
    return AnnValue(std::move(c));
  }
  if (j.is_object()) {
    AnnDict d;
    for (auto it = j.begin(); it != j.end(); ++it) {
      auto v = ann_from_json(it.value());
      if (!v) return std::nullopt;
      d.keys.push_back(it.key());
      d.values.push_back(*v);
    }
    return AnnValue(std::move(d));
  }
  if (!j.is_array()) return std::nullopt;
  AnnValue::List l;
  for (const Json &x : j) {
    auto v = ann_from_json(x);
    if (!v) return std::nullopt;
    l.push_back(*v);
  }
  return AnnValue(std::move(l));
}

namespace {

Json target_json(const char *op, const BlockOrLoop &target) {
  Json j{{"op", op}};
  j[std::holds_alternative<BlockRef>(target) ? "block" : "loop"] = name_of(target);
  return j;
}

}  // namespace

Json encode_annotate(const BlockOrLoop &target, const std::string &key, const AnnValue &value) {
  Json j = target_json("annotate", target);
  j["key"] = key;
  j["value"] = ann_to_json(value);
  return j;
}

Json encode_unannotate(const BlockOrLoop &target, const std::string &key) {
  Json j = target_json("unannotate", target);
  j["key"] = key;
  return j;
}

namespace {

void replay_annotate(ReplayContext &ctx) {
  auto value = ann_from_json(ctx.field("value"));
  if (!value) ctx.fail("value", "must be a bool, number, string, list or dictionary");
  ctx.sch.annotate(ctx.block_or_loop(), ctx.string("key"), *value);
}

void replay_unannotate(ReplayContext &ctx) { ctx.sch.unannotate(ctx.block_or_loop(), ctx.string("key")); }

[[maybe_unused]] const bool kRegistered =
    register_instruction("annotate", replay_annotate) && register_instruction("unannotate", replay_unannotate);

}  // namespace

}  // namespace tessera::schedule::detail
