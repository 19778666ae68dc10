//===- NVRTC.cpp - CUDA C to cubin with NVRTC, one program per call --------===//
//
// Built with TESSERA_HAVE_NVRTC (the CUDA toolkit was found) this links
// libnvrtc; without it every entry point throws "NVRTC not available". The
// parts that need no NVRTC (dumping, log parsing, the thread pool) are shared.
//
//===----------------------------------------------------------------------===//
#include "tessera/runtime/NVRTC.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include "tessera/runtime/KernelCache.h"
#include "tessera/support/Version.h"

#ifdef TESSERA_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace tessera::runtime {

namespace fs = std::filesystem;

CompileError::CompileError(const std::string &summary, std::string log, std::string source_path)
    : UserError(summary + (source_path.empty() ? "" : " (source saved to " + source_path + ")") +
                (log.empty() ? "" : "\n" + log)),
      log_(std::move(log)),
      source_path_(std::move(source_path)) {}

const KernelResources *CompileResult::find_kernel(const std::string &kernel) const {
  for (const KernelResources &k : kernels)
    if (k.name == kernel) return &k;
  return nullptr;
}

namespace {

/// Where failing sources go: $TESSERA_DUMP_DIR (STYLE.md 3.7), else a fixed
/// folder under the system's temporary directory.
fs::path dump_dir() {
  if (const char *d = std::getenv("TESSERA_DUMP_DIR"); d && *d) return fs::path(d);
  return fs::temp_directory_path() / "tessera-dump";
}

std::string sanitize(const std::string &name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return s.empty() ? "kernel" : s;
}

/// Writes the source and the log of a failed compile and returns the .cu path.
/// The name carries a hash of the source so threads compiling different
/// sources never collide; each file is written under a unique temporary name
/// and renamed, so two threads failing on the same source both leave a whole
/// file. Returns "" if the directory cannot be written (the error still
/// carries the log).
std::string dump_failure(const std::string &source, const std::string &log,
                         const CompileOptions &options) {
  std::error_code ec;
  fs::path dir = dump_dir();
  fs::create_directories(dir, ec);
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(source + options.arch));
  std::string stem = sanitize(options.name) + "-" + sanitize(options.arch) + "-" + hash;
  static std::atomic<uint64_t> counter{0};
  auto write = [&](const fs::path &final_path, const std::string &text) {
    fs::path tmp = final_path;
    tmp += ".tmp" + std::to_string(counter.fetch_add(1));
    {
      std::ofstream out(tmp, std::ios::binary);
      out << text;
      if (!out) return false;
    }
    fs::rename(tmp, final_path, ec);
    return !ec;
  };
  fs::path cu = dir / (stem + ".cu");
  if (!write(cu, source)) return "";
  write(dir / (stem + ".log"), log);
  return cu.string();
}

#ifdef TESSERA_HAVE_NVRTC

/// Splits a list of directories at `sep`, dropping empty entries.
std::vector<std::string> split_dirs(const std::string &dirs, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(sep, start);
    if (end == std::string::npos) end = dirs.size();
    if (end > start) out.push_back(dirs.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

/// The -I for cuda_fp16.h & co.; NVRTC 13 ships no built-in copy (TOOLCHAIN.md
/// 2). The first of these that holds cuda_fp16.h: $TESSERA_CUDA_INCLUDE
/// (':'-separated), the toolkit tessera was built with (CUDAToolkit_INCLUDE_DIRS,
/// ';'-separated), $CUDA_HOME/include, $CUDA_PATH/include, /usr/local/cuda's.
/// A relocated binary thus finds the headers of the machine it runs on. With
/// none found, the build tree's directories are passed anyway and NVRTC's
/// "cannot open source file" names the missing header.
std::vector<std::string> include_options() {
  static const std::vector<std::string> options = [] {
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("TESSERA_CUDA_INCLUDE"))
      for (const std::string &d : split_dirs(env, ':')) candidates.push_back(d);
    std::vector<std::string> built = split_dirs(TESSERA_CUDA_INCLUDE_DIR, ';');
    candidates.insert(candidates.end(), built.begin(), built.end());
    for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char *env = std::getenv(var); env && *env) candidates.push_back(std::string(env) + "/include");
    candidates.push_back("/usr/local/cuda/include");
    candidates.push_back("/usr/local/cuda/targets/x86_64-linux/include");
    std::error_code ec;
    for (const std::string &d : candidates)
      if (fs::exists(fs::path(d) / "cuda_fp16.h", ec)) return std::vector<std::string>{"-I" + d};
    std::vector<std::string> out;
    for (const std::string &d : built) out.push_back("-I" + d);
    return out;
  }();
  return options;
}

/// Every option NVRTC gets: ours first, then the caller's (a later one wins).
std::vector<std::string> nvrtc_options(const CompileOptions &options) {
  std::vector<std::string> opts = {"-std=c++17", "--gpu-architecture=" + options.arch, "--ptxas-options=-v"};
  for (const std::string &inc : include_options()) opts.push_back(inc);
  opts.insert(opts.end(), options.extra_options.begin(), options.extra_options.end());
  return opts;
}

/// The KernelCache key of `source` compiled with `opts` (nvrtc_options).
std::string cache_key_of(const std::string &source, const CompileOptions &options, const std::vector<std::string> &opts) {
  std::string material = "nvrtc " + nvrtc_version() + "\ntessera " + std::string(tessera::version()) + "\n" +
                         (options.want_ptx ? "ptx\n" : "cubin\n");
  for (const std::string &o : opts) material += o + '\n';
  return KernelCache::digest(material + '\0' + source);
}

/// Checks "sm_XX[a|f]" against NVRTC's list before compiling, so a typo or an
/// arch this NVRTC dropped (sm_70 in CUDA 13) gets a message naming both.
void check_arch(const std::string &arch) {
  int number = 0;
  size_t pos = 3;
  bool ok = arch.rfind("sm_", 0) == 0 && arch.size() > 3;
  while (ok && pos < arch.size() && std::isdigit(static_cast<unsigned char>(arch[pos])))
    number = number * 10 + (arch[pos++] - '0');
  ok = ok && pos > 3 && (pos == arch.size() || (pos + 1 == arch.size() && (arch[pos] == 'a' || arch[pos] == 'f')));
  const std::vector<int> &supported = nvrtc_supported_archs();
  std::string list;
  for (int a : supported) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
  if (!ok)
    throw CompileError("invalid arch '" + arch + "': expected sm_XX (supported: " + list + ")", "", "");
  if (std::find(supported.begin(), supported.end(), number) == supported.end())
    throw CompileError("arch '" + arch + "' is not supported by NVRTC " + nvrtc_version() +
                           " (supported: " + list + ")",
                       "", "");
}

std::string program_log(nvrtcProgram prog) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

/// Owns one nvrtcProgram.
struct Program {
  nvrtcProgram prog = nullptr;
  ~Program() {
    if (prog) nvrtcDestroyProgram(&prog);
  }
};

void check_nvrtc(nvrtcResult r, const char *what, const CompileOptions &options) {
  if (r != NVRTC_SUCCESS)
    throw CompileError(std::string(what) + " failed for '" + options.name + "': " + nvrtcGetErrorString(r),
                       "", "");
}

#endif  // TESSERA_HAVE_NVRTC

[[noreturn]] void throw_unavailable() {
  throw UserError(
      "NVRTC not available: tessera was built without the CUDA toolkit "
      "(configure with -DTESSERA_ENABLE_CUDA=ON and CUDAToolkit_ROOT pointing at CUDA 12 or 13)");
}

}  // namespace

bool nvrtc_available() {
#ifdef TESSERA_HAVE_NVRTC
  return true;
#else
  return false;
#endif
}

std::string nvrtc_version() {
#ifdef TESSERA_HAVE_NVRTC
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "";
  return std::to_string(major) + "." + std::to_string(minor);
#else
  return "";
#endif
}

const std::vector<int> &nvrtc_supported_archs() {
  static const std::vector<int> archs = [] {
    std::vector<int> out;
#ifdef TESSERA_HAVE_NVRTC
    int n = 0;
    if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
      out.resize(n);
      if (nvrtcGetSupportedArchs(out.data()) != NVRTC_SUCCESS) out.clear();
    }
#endif
    return out;
  }();
  return archs;
}

std::string kernel_cache_key(const std::string &source, const CompileOptions &options) {
#ifndef TESSERA_HAVE_NVRTC
  (void)source;
  (void)options;
  throw_unavailable();
#else
  return cache_key_of(source, options, nvrtc_options(options));
#endif
}

CompileResult compile_cuda(const std::string &source, const CompileOptions &options) {
#ifndef TESSERA_HAVE_NVRTC
  (void)source;
  (void)options;
  (void)dump_failure;
  throw_unavailable();
#else
  check_arch(options.arch);
  auto start = std::chrono::steady_clock::now();

  // Step 1. Options: ours first, then the caller's (a later option wins).
  std::vector<std::string> opts = nvrtc_options(options);

  // A compile already kept: everything that decides the cubin is in the key.
  std::string cache_key;
  if (options.cache) {
    cache_key = cache_key_of(source, options, opts);
    if (std::optional<CompileResult> hit = options.cache->load(cache_key, options.arch)) {
      if (!options.want_ptx || !hit->ptx.empty()) {
        hit->name = options.name;
        return *hit;
      }
    }
  }

  std::vector<const char *> argv;
  for (const std::string &o : opts) argv.push_back(o.c_str());

  // Step 2. Compile; a failure keeps the log and saves the source.
  Program p;
  std::string file_name = sanitize(options.name) + ".cu";
  check_nvrtc(nvrtcCreateProgram(&p.prog, source.c_str(), file_name.c_str(), 0, nullptr, nullptr),
              "nvrtcCreateProgram", options);
  nvrtcResult r = nvrtcCompileProgram(p.prog, static_cast<int>(argv.size()), argv.data());
  std::string log = program_log(p.prog);
  if (r != NVRTC_SUCCESS) {
    std::string path = dump_failure(source, log, options);
    throw CompileError("NVRTC failed to compile '" + options.name + "' for " + options.arch + ": " +
                           nvrtcGetErrorString(r),
                       std::move(log), std::move(path));
  }

  // ptxas serialising wgmma or injecting warpgroup fences around them
  // (C7510, C7511: serialised; C7512: serialised for want of registers;
  // C7517, C7519: a wait or arrive injected) makes a Hopper kernel much
  // slower than its code says: a failed build, with the first such line as
  // the reason.
  for (const char *code : {"(C7510)", "(C7511)", "(C7512)", "(C7517)", "(C7519)"}) {
    size_t at = log.find(code);
    if (at == std::string::npos) continue;
    size_t begin = log.rfind('\n', at), end = log.find('\n', at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    std::string line = log.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    std::string path = dump_failure(source, log, options);
    throw CompileError("ptxas serialised the wgmma of '" + options.name + "' for " + options.arch + ": " + line,
                       std::move(log), std::move(path));
  }

  // Step 3. Collect the cubin, the PTX if asked, and the ptxas resource lines.
  CompileResult result;
  result.name = options.name;
  result.arch = options.arch;
  size_t size = 0;
  check_nvrtc(nvrtcGetCUBINSize(p.prog, &size), "nvrtcGetCUBINSize", options);
  result.cubin.resize(size);
  if (size) check_nvrtc(nvrtcGetCUBIN(p.prog, reinterpret_cast<char *>(result.cubin.data())), "nvrtcGetCUBIN", options);
  if (options.want_ptx) {
    check_nvrtc(nvrtcGetPTXSize(p.prog, &size), "nvrtcGetPTXSize", options);
    result.ptx.resize(size);
    if (size) check_nvrtc(nvrtcGetPTX(p.prog, result.ptx.data()), "nvrtcGetPTX", options);
    if (!result.ptx.empty() && result.ptx.back() == '\0') result.ptx.pop_back();
  }
  result.kernels = parse_ptxas_log(log);
  result.log = std::move(log);
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (options.cache) options.cache->store(cache_key, result);
  return result;
#endif
}

std::vector<CompileOutcome> compile_many(std::span<const CompileJob> jobs, unsigned threads) {
  if (!nvrtc_available()) throw_unavailable();
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, std::max<size_t>(jobs.size(), 1));

  // Workers take the next index from a shared counter: no queue, no locks on
  // the fast path, and each slot is written by exactly one worker.
  std::vector<CompileOutcome> out(jobs.size());
  std::atomic<size_t> next{0};
  std::exception_ptr fatal;
  std::mutex fatal_mutex;
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      try {
        out[i].result = compile_cuda(jobs[i].source, jobs[i].options);
      } catch (const CompileError &e) {
        out[i].error = e;
      } catch (...) {
        std::lock_guard<std::mutex> lock(fatal_mutex);
        if (!fatal) fatal = std::current_exception();
        next = jobs.size();  // stop handing out work
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();  // the calling thread is worker 0
  for (std::thread &t : pool) t.join();
  if (fatal) std::rethrow_exception(fatal);
  return out;
}

std::vector<CompileOutcome> compile_many(const std::vector<std::string> &sources,
                                         const CompileOptions &options, unsigned threads) {
  std::vector<CompileJob> jobs;
  jobs.reserve(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    CompileOptions o = options;
    o.name = options.name + "_" + std::to_string(i);
    jobs.push_back({sources[i], std::move(o)});
  }
  return compile_many(std::span<const CompileJob>(jobs), threads);
}

}  // namespace tessera::runtime
