//===- lib/dispatch/KernelPlan.cpp - Built kernels, and which serves which sizes ===//
#include "tessera/dispatch/KernelPlan.h"

#include <algorithm>
#include <string>

#include "tessera/support/Error.h"

namespace tessera::dispatch {

namespace {

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

Json programs_json(const std::vector<SizeProgram> &programs) {
  Json out = Json::array();
  for (const SizeProgram &p : programs) out.push_back(p.to_json());
  return out;
}

std::vector<SizeProgram> programs_from_json(const Json &j, size_t symbols) {
  std::vector<SizeProgram> out;
  for (const Json &d : j) out.push_back(SizeProgram::from_json(d, symbols));
  return out;
}

Json buffer_json(const BufferShape &b) {
  return {{"name", b.name}, {"shape", programs_json(b.shape)}, {"element_bits", b.element_bits}};
}

BufferShape buffer_from_json(const Json &j, size_t symbols) {
  BufferShape b{j.at("name").get<std::string>(), programs_from_json(j.at("shape"), symbols),
                j.at("element_bits").get<int64_t>()};
  if (b.element_bits <= 0) throw UserError("buffer '" + b.name + "' has elements of " +
                                           std::to_string(b.element_bits) + " bits");
  return b;
}

Json step_json(const KernelStep &st) {
  Json s = {{"entry", st.entry},
            {"cubin_key", st.cache_key},
            {"target", st.target},
            {"dynamic_shared_bytes", st.dynamic_shared_bytes},
            {"params", Json::array()},
            {"tensor_maps", Json::array()},
            {"grid", Json::array()},
            {"block", Json::array()}};
  for (const KernelParam &p : st.params)
    s["params"].push_back(
        {{"name", p.name}, {"symbol", p.symbol}, {"bytes", p.bytes}, {"buffer", p.buffer}, {"workspace", p.workspace}});
  for (const TensorMapParam &m : st.tensor_maps)
    s["tensor_maps"].push_back({{"buffer", m.buffer},
                                {"tensor", buffer_json(m.tensor)},
                                {"data_type", int(m.box.data_type)},
                                {"element_bytes", m.box.element_bytes},
                                {"box", m.box.extent},
                                {"swizzle", m.box.swizzle_bytes}});
  for (int d = 0; d < 3; ++d) {
    s["grid"].push_back(st.grid[d].to_json());
    s["block"].push_back(st.block[d].to_json());
  }
  return s;
}

KernelStep step_from_json(const Json &s, size_t symbols, const std::function<std::vector<uint8_t>(const Json &)> &cubin) {
  KernelStep st;
  st.entry = s.at("entry").get<std::string>();
  st.cache_key = s.at("cubin_key").get<std::string>();
  st.target = s.at("target").get<std::string>();
  st.dynamic_shared_bytes = s.at("dynamic_shared_bytes").get<int64_t>();
  for (const Json &p : s.at("params"))
    st.params.push_back({p.at("name").get<std::string>(), p.at("symbol").get<int>(), p.at("bytes").get<int>(),
                         p.at("buffer").get<int>(), p.at("workspace").get<int>()});
  for (const Json &m : s.at("tensor_maps")) {
    TensorMapParam t;
    t.buffer = m.at("buffer").get<int>();
    t.tensor = buffer_from_json(m.at("tensor"), symbols);
    const int type = m.at("data_type").get<int>();
    if (type < int(runtime::TensorMapDataType::UInt8) || type > int(runtime::TensorMapDataType::BFloat16))
      throw UserError("tensor map of '" + t.tensor.name + "' has data type " + std::to_string(type));
    t.box = {runtime::TensorMapDataType(type), m.at("element_bytes").get<int>(),
             m.at("box").get<std::vector<int64_t>>(), m.at("swizzle").get<int>()};
    st.tensor_maps.push_back(std::move(t));
  }
  const Json &grid = s.at("grid"), &block = s.at("block");
  if (grid.size() != 3 || block.size() != 3) throw UserError("kernel " + st.entry + ": a grid or block of not 3 extents");
  for (int d = 0; d < 3; ++d) {
    st.grid[d] = SizeProgram::from_json(grid.at(d), symbols);
    st.block[d] = SizeProgram::from_json(block.at(d), symbols);
  }
  st.cubin = cubin(s);
  if (st.cubin.empty()) throw UserError("kernel " + st.entry + " has no cubin");
  return st;
}

/// Every combination of the cells' edges, one value per symbol: where a
/// workspace size is largest when it grows or shrinks with each symbol.
template <typename Fn>
void for_each_cell_corner(const std::vector<std::vector<int64_t>> &ends, const std::vector<int64_t> &lows, Fn &&fn) {
  std::vector<std::vector<int64_t>> values(ends.size());
  for (size_t s = 0; s < ends.size(); ++s) {
    values[s].push_back(lows[s]);
    for (size_t i = 0; i < ends[s].size(); ++i) {
      values[s].push_back(ends[s][i]);
      if (i + 1 < ends[s].size()) values[s].push_back(ends[s][i] + 1);
    }
  }
  std::vector<int64_t> at(ends.size());
  std::vector<size_t> index(ends.size(), 0);
  while (true) {
    for (size_t s = 0; s < ends.size(); ++s) at[s] = values[s][index[s]];
    fn(at.data());
    size_t s = ends.size();
    while (s > 0 && ++index[s - 1] == values[s - 1].size()) index[--s] = 0;
    if (s == 0) return;
  }
}

}  // namespace

int64_t BufferShape::bytes(const int64_t *sizes) const {
  int64_t elements = 1;
  for (const SizeProgram &d : shape) elements *= std::max<int64_t>(d.eval(sizes), 0);
  return (elements * element_bits + 7) / 8;
}

std::vector<int64_t> BufferShape::at(const int64_t *sizes) const {
  std::vector<int64_t> out;
  for (const SizeProgram &d : shape) out.push_back(d.eval(sizes));
  return out;
}

bool KernelLaunch::has_work() const {
  for (int s = 0; s < steps; ++s)
    if (step[s].has_work) return true;
  return false;
}

void CellTable::assign(const std::vector<int> &kernels) {
  table_ = std::make_shared<std::vector<std::atomic<int>>>(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) (*table_)[i].store(kernels[i], std::memory_order_relaxed);
}

std::vector<int> CellTable::snapshot() const {
  std::vector<int> out;
  for (size_t i = 0; i < size(); ++i) out.push_back((*this)[i]);
  return out;
}

size_t KernelPlan::cell_count() const {
  size_t cells = 1;
  for (const auto &e : ends) cells *= e.size();
  return cells;
}

KernelLaunch KernelPlan::select(const int64_t *sizes) const {
  KernelLaunch l;
  size_t cell = 0;
  for (size_t s = 0; s < ends.size(); ++s) {
    const std::vector<int64_t> &e = ends[s];
    if (sizes[s] < lows[s] || sizes[s] > e.back())
      throw UserError(symbols[s] + " = " + std::to_string(sizes[s]) + " is outside the planned range " +
                      std::to_string(lows[s]) + ":" + std::to_string(e.back()));
    cell = cell * e.size() + size_t(std::lower_bound(e.begin(), e.end(), sizes[s]) - e.begin());
  }
  l.cell = static_cast<int>(cell);
  l.kernel = cells[cell];
  fill_dims(l, sizes);
  return l;
}

void KernelPlan::fill_dims(KernelLaunch &l, const int64_t *sizes) const {
  const PlanKernel &k = kernels[static_cast<size_t>(l.kernel)];
  l.steps = static_cast<int>(k.steps.size());
  for (int s = 0; s < l.steps; ++s) {
    const KernelStep &st = k.steps[size_t(s)];
    LaunchDims &out = l.step[s];
    int64_t g[3], b[3];
    out.has_work = true;
    for (int d = 0; d < 3; ++d) {
      g[d] = st.grid[d].eval(sizes), b[d] = st.block[d].eval(sizes);
      if (g[d] <= 0 || b[d] <= 0) out.has_work = false;
    }
    if (out.has_work) {
      out.grid = runtime::Dim3(unsigned(g[0]), unsigned(g[1]), unsigned(g[2]));
      out.block = runtime::Dim3(unsigned(b[0]), unsigned(b[1]), unsigned(b[2]));
    }
    out.dynamic_shared_bytes = size_t(st.dynamic_shared_bytes);
  }
}

std::vector<int64_t> KernelPlan::sizes_of(const std::vector<std::vector<int64_t>> &shapes) const {
  if (shapes.size() != arguments.size())
    throw UserError("'" + name + "' takes " + std::to_string(arguments.size()) + " arguments, not " +
                    std::to_string(shapes.size()));
  std::vector<int64_t> sizes(symbols.size(), 0);
  std::vector<bool> known(symbols.size(), false);
  for (size_t a = 0; a < arguments.size(); ++a) {
    const BufferShape &b = arguments[a].buffer;
    if (shapes[a].size() != b.shape.size())
      throw UserError("argument " + std::to_string(a) + " ('" + b.name + "') of '" + name + "' has " +
                      std::to_string(shapes[a].size()) + " dimensions, not " + std::to_string(b.shape.size()));
    for (size_t d = 0; d < b.shape.size(); ++d)
      if (int s = b.shape[d].symbol(); s >= 0 && !known[size_t(s)]) sizes[size_t(s)] = shapes[a][d], known[size_t(s)] = true;
  }
  for (size_t s = 0; s < symbols.size(); ++s)
    if (!known[s])
      throw UserError("the size '" + symbols[s] + "' of '" + name + "' is no dimension of an argument: give it");
  for (size_t a = 0; a < arguments.size(); ++a) {
    std::vector<int64_t> want = arguments[a].buffer.at(sizes.data());
    if (want != shapes[a])
      throw UserError("argument " + std::to_string(a) + " ('" + arguments[a].buffer.name + "') of '" + name +
                      "' has shape " + shape_text(shapes[a]) + "; the others make it " + shape_text(want));
  }
  return sizes;
}

std::vector<runtime::TensorMapEncoding> KernelPlan::tensor_map_encodings(int kernel, int step,
                                                                         const int64_t *sizes) const {
  if (kernel < 0 || kernel >= int(kernels.size()) || step < 0 || step >= int(kernels[size_t(kernel)].steps.size()))
    throw UserError("no step " + std::to_string(step) + " of kernel " + std::to_string(kernel));
  std::vector<runtime::TensorMapEncoding> out;
  for (const TensorMapParam &m : kernels[size_t(kernel)].steps[size_t(step)].tensor_maps)
    out.push_back(runtime::tensor_map_encoding(m.box, m.tensor.at(sizes), m.tensor.name));
  return out;
}

KernelPlan::WorkspaceLayout KernelPlan::workspace_layout() const {
  WorkspaceLayout layout;
  for (const PlanKernel &k : kernels) {
    std::vector<std::pair<size_t, int64_t>> spans;
    size_t offset = 0;
    for (const BufferShape &w : k.workspace) {
      int64_t most = 0;
      for_each_cell_corner(ends, lows, [&](const int64_t *sizes) { most = std::max(most, w.bytes(sizes)); });
      offset = (offset + 255) / 256 * 256;
      spans.emplace_back(offset, most);
      offset += size_t(most);
    }
    layout.bytes = std::max(layout.bytes, offset);
    layout.spans.push_back(std::move(spans));
  }
  return layout;
}

int KernelPlan::bind_values(int kernel, int step, const int64_t *sizes, const uint64_t *buffers, size_t buffer_count,
                            uint64_t workspace, const WorkspaceLayout &layout, uint64_t *values) const {
  const KernelStep &st = kernels[size_t(kernel)].steps[size_t(step)];
  if (st.params.size() > size_t(kMaxParams))
    throw UserError(st.entry + " has " + std::to_string(st.params.size()) + " parameters; a launch binds " +
                    std::to_string(kMaxParams));
  int count = 0;
  for (const KernelParam &p : st.params) {
    uint64_t &v = values[count++];
    if (p.symbol >= 0) {
      const int64_t size = sizes[size_t(p.symbol)];
      v = p.bytes == 8 ? uint64_t(size) : uint64_t(uint32_t(int32_t(size)));  // a 4-byte scalar: the low 4 bytes
    } else if (p.workspace >= 0) {
      const auto [offset, reserved] = layout.spans[size_t(kernel)][size_t(p.workspace)];
      const BufferShape &ws = kernels[size_t(kernel)].workspace[size_t(p.workspace)];
      if (ws.bytes(sizes) > reserved)
        throw UserError("launch: the workspace buffer '" + ws.name + "' needs " + std::to_string(ws.bytes(sizes)) +
                        " bytes at these sizes, more than its largest at the cells' edges (" +
                        std::to_string(reserved) + ")");
      v = workspace + offset;
    } else {
      if (size_t(p.buffer) >= buffer_count)
        throw UserError("launch: " + std::to_string(buffer_count) + " buffers for kernel " + st.entry +
                        ", which reads buffer " + std::to_string(p.buffer + 1) + " ('" + p.name + "')");
      v = buffers[p.buffer];
    }
  }
  return count;
}

void KernelPlan::validate() const {
  auto bad = [&](const std::string &why) { return UserError("kernel plan of '" + name + "': " + why); };
  if (lows.size() != symbols.size() || ends.size() != symbols.size())
    throw bad("the symbols' ranges are not one per symbol");
  for (size_t s = 0; s < symbols.size(); ++s) {
    if (ends[s].empty() || ends[s].front() < lows[s] || !std::is_sorted(ends[s].begin(), ends[s].end()))
      throw bad("the cells of '" + symbols[s] + "' are not ascending ranges from " + std::to_string(lows[s]));
  }
  if (cells.size() != cell_count())
    throw bad(std::to_string(cells.size()) + " cells for " + std::to_string(cell_count()) + " ranges");
  if (kernels.empty()) throw bad("no kernels");
  for (size_t c = 0; c < cells.size(); ++c)
    if (cells[c] < 0 || cells[c] >= int(kernels.size())) throw bad("cell " + std::to_string(c) + " names no kernel");
  for (const PlanKernel &k : kernels) {
    if (k.steps.empty() || k.steps.size() > size_t(KernelLaunch::kMaxSteps))
      throw bad("a kernel of " + std::to_string(k.steps.size()) + " steps (1 to " +
                std::to_string(KernelLaunch::kMaxSteps) + ")");
    for (const KernelStep &st : k.steps) {
      for (const KernelParam &p : st.params) {
        const bool symbol = p.symbol >= 0 && p.symbol < int(symbols.size()) && (p.bytes == 4 || p.bytes == 8);
        const bool buffer = p.buffer >= 0 && p.buffer < int(arguments.size());
        const bool workspace = p.workspace >= 0 && p.workspace < int(k.workspace.size());
        if (int(symbol) + int(buffer) + int(workspace) != 1)
          throw bad("parameter '" + p.name + "' of " + st.entry + " names no symbol, buffer or workspace slot");
      }
      for (const TensorMapParam &m : st.tensor_maps)
        if (m.buffer < 0 || m.buffer >= int(arguments.size()) || m.box.extent.size() != m.tensor.shape.size())
          throw bad("a tensor map of " + st.entry + " names no buffer, or its box is not of the tensor's rank");
    }
  }
}

Json KernelPlan::to_json() const {
  Json j = {{"name", name}, {"target", target}, {"arch", arch}, {"symbols", symbols}, {"lows", lows},
            {"ends", ends}, {"cells", cells.snapshot()}, {"arguments", Json::array()}, {"kernels", Json::array()}};
  for (const Argument &a : arguments) {
    Json b = buffer_json(a.buffer);
    b["dtype"] = a.dtype;
    b["written"] = a.written;
    j["arguments"].push_back(std::move(b));
  }
  for (const PlanKernel &k : kernels) {
    Json kj = {{"steps", Json::array()}, {"workspace", Json::array()}};
    for (const KernelStep &st : k.steps) kj["steps"].push_back(step_json(st));
    for (const BufferShape &w : k.workspace) kj["workspace"].push_back(buffer_json(w));
    j["kernels"].push_back(std::move(kj));
  }
  return j;
}

KernelPlan KernelPlan::from_json(const Json &j, const std::function<std::vector<uint8_t>(const Json &)> &cubin) {
  KernelPlan p;
  try {
    p.name = j.at("name").get<std::string>();
    p.target = j.at("target").get<std::string>();
    p.arch = j.at("arch").get<std::string>();
    p.symbols = j.at("symbols").get<std::vector<std::string>>();
    p.lows = j.at("lows").get<std::vector<int64_t>>();
    p.ends = j.at("ends").get<std::vector<std::vector<int64_t>>>();
    p.cells.assign(j.at("cells").get<std::vector<int>>());
    const size_t symbols = p.symbols.size();
    for (const Json &a : j.at("arguments"))
      p.arguments.push_back({buffer_from_json(a, symbols), a.at("dtype").get<std::string>(), a.at("written").get<bool>()});
    for (const Json &kj : j.at("kernels")) {
      PlanKernel k;
      for (const Json &s : kj.at("steps")) k.steps.push_back(step_from_json(s, symbols, cubin));
      for (const Json &w : kj.at("workspace")) k.workspace.push_back(buffer_from_json(w, symbols));
      p.kernels.push_back(std::move(k));
    }
  } catch (const Json::exception &e) {
    throw UserError(std::string("a kernel plan is malformed: ") + e.what());
  }
  p.validate();
  return p;
}

}  // namespace tessera::dispatch
