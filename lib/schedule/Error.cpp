//===- lib/schedule/Error.cpp - Rendering schedule errors ------------------===//
#include "tessera/schedule/Error.h"

#include "tessera/script/Printer.h"

namespace tessera::schedule {

std::string ScheduleError::render(ErrorRenderLevel level) const {
  std::string head = context_.empty() ? "" : context_ + ": ";
  head += "schedule primitive '" + std::string(primitive()) + "' failed";
  if (level == ErrorRenderLevel::None) return head;
  head += ": " + brief();
  if (level == ErrorRenderLevel::Brief) return head;
  std::vector<NodeRef> locs = locations();
  std::string text = head;
  std::string d = detail();
  if (!locs.empty() || d != brief()) text += "\n" + d;
  if (!func_.defined()) return text;
  // The function with every location's line tagged `# {i}` (several tags on
  // one node are joined: `# {0} {2}`).
  script::PrintOptions opts;
  for (size_t i = 0; i < locs.size(); ++i) {
    if (!locs[i].defined()) continue;
    std::string &c = opts.comments[locs[i].get()];
    c += (c.empty() ? "" : " ") + ("{" + std::to_string(i) + "}");
  }
  return text + "\n" + script::print(func_, opts);
}

const char *ScheduleError::what() const noexcept {
  try {
    what_ = render(level_);
  } catch (...) {
    what_ = "schedule primitive failed (and rendering the error failed)";
  }
  return what_.c_str();
}

void ScheduleError::attach(ir::PrimFunc func, ErrorRenderLevel level) {
  if (!func_.defined()) func_ = std::move(func);
  level_ = level;
}

void ScheduleError::add_context(std::string context) {
  context_ = context_.empty() ? std::move(context) : context + ": " + context_;
}

}  // namespace tessera::schedule
