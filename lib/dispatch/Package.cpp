//===- lib/dispatch/Package.cpp - A tuned kernel as one file ---------------===//
#include "tessera/dispatch/Package.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tessera/support/Error.h"

namespace tessera::dispatch {

namespace {

constexpr const char *kMagic = "tessera-package";
constexpr int kVersion = 1;

/// Writes all of `text` to `fd`; false on any error.
bool write_all(int fd, const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

}  // namespace

std::string fnv1a_hex(const void *data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

void save_package(const std::string &path, const Package &package) {
  Json j = {{"kind", package.kind}, {"meta", package.meta}};
  std::string blobs;
  if (package.plan) {
    Json plan = package.plan->to_json();
    // Each step's cubin by its place in the blob area (the order of the plan).
    size_t k = 0;
    for (Json &kj : plan["kernels"]) {
      size_t s = 0;
      for (Json &sj : kj["steps"]) {
        const std::vector<uint8_t> &cubin = package.plan->kernels[k].steps[s++].cubin;
        sj["cubin"] = {{"offset", blobs.size()}, {"bytes", cubin.size()}, {"fnv1a", fnv1a_hex(cubin.data(), cubin.size())}};
        blobs.append(reinterpret_cast<const char *>(cubin.data()), cubin.size());
      }
      ++k;
    }
    j["plan"] = std::move(plan);
  }
  const std::string text = j.dump();
  const std::string header = std::string(kMagic) + " " + std::to_string(kVersion) + " " + std::to_string(text.size()) + "\n";
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw UserError("cannot write the kernel package " + path + ": " + std::strerror(errno));
  const bool ok = write_all(fd, header) && write_all(fd, text) && write_all(fd, blobs) && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int why = ok ? errno : err;
    std::remove(tmp.c_str());
    throw UserError("cannot write the kernel package " + path + ": " + std::strerror(why));
  }
}

Package load_package(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read the kernel package " + path + ": " + std::strerror(errno));
  std::stringstream all;
  all << in.rdbuf();
  const std::string data = all.str();
  auto bad = [&](const std::string &why) { return UserError(path + ": not a whole tessera kernel package: " + why); };

  // The header: magic, version, JSON bytes.
  const size_t eol = data.find('\n');
  if (eol == std::string::npos || eol > 64) throw bad("no header line");
  std::istringstream header(data.substr(0, eol));
  std::string magic;
  int version = 0;
  size_t json_bytes = 0;
  if (!(header >> magic >> version >> json_bytes) || magic != kMagic) throw bad("the header is not '" + std::string(kMagic) + " VERSION BYTES'");
  if (version != kVersion)
    throw UserError(path + ": a kernel package of format " + std::to_string(version) + "; this tessera reads format " +
                    std::to_string(kVersion) + " (tune the function again)");
  if (json_bytes > data.size() - eol - 1) throw bad("truncated (the description is cut short)");
  Json j;
  try {
    j = Json::parse(data.substr(eol + 1, json_bytes));
  } catch (const Json::exception &e) {
    throw bad(std::string("its description is not JSON: ") + e.what());
  }
  const size_t blob_start = eol + 1 + json_bytes;

  Package p;
  try {
    p.kind = j.at("kind").get<std::string>();
    p.meta = j.value("meta", Json::object());
  } catch (const Json::exception &e) {
    throw bad(e.what());
  }
  if (p.kind != "cuda" && p.kind != "cpu") throw bad("unknown kind '" + p.kind + "'");
  if (p.kind == "cpu") return p;
  if (!j.contains("plan")) throw bad("a cuda package without a plan");
  auto cubin = [&](const Json &step) {
    const Json &c = step.at("cubin");
    const size_t offset = c.at("offset").get<size_t>(), bytes = c.at("bytes").get<size_t>();
    if (offset > data.size() - blob_start || bytes > data.size() - blob_start - offset)
      throw bad("truncated (the cubin of " + step.at("entry").get<std::string>() + " is cut short)");
    const char *at = data.data() + blob_start + offset;
    if (fnv1a_hex(at, bytes) != c.at("fnv1a").get<std::string>())
      throw bad("the cubin of " + step.at("entry").get<std::string>() + " does not read back as written");
    return std::vector<uint8_t>(at, at + bytes);
  };
  try {
    p.plan = std::make_shared<KernelPlan>(KernelPlan::from_json(j.at("plan"), cubin));
  } catch (const Json::exception &e) {
    throw bad(e.what());
  } catch (const UserError &e) {
    // Already says what; keep the path in front.
    throw UserError(std::string(e.what()).starts_with(path) ? e.what() : path + ": " + e.what());
  }
  return p;
}

}  // namespace tessera::dispatch
