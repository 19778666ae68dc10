#!/usr/bin/env python3
"""Files a device run's results into the repository (./dev.sh gpu-import DIR).

    import-results.py DIR RESULTS_DIR README

DIR is the folder the device call's files came back to: it holds the archive
that run-gpu.sh --archive wrote (tessera-gpu.tar.gz), or is an unpacked
run-gpu.sh OUTDIR itself. The run lands in RESULTS_DIR/DATE-DEVICE/ (summary,
environment, benchmark JSON/Markdown/SVG, gtest XML, logs; not the generated
kernels, which the git hash reproduces) with RUN.json
naming the device, driver, toolkit and git hash, and the section between the
gpu-results markers of README (bench/README.md) is rewritten from it.
"""
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile

BEGIN = "<!-- gpu-results:begin: written by ./dev.sh gpu-import from the latest run; edits here are overwritten -->"
END = "<!-- gpu-results:end -->"


def fail(message):
    print(f"gpu-import: {message}", file=sys.stderr)
    sys.exit(1)


def find_run(folder, scratch):
    """The run-gpu.sh output folder inside `folder` (unpacking an archive)."""
    if os.path.isfile(os.path.join(folder, "summary.md")):
        return folder
    archives = sorted(f for f in os.listdir(folder) if f.endswith((".tar.gz", ".tgz")))
    if not archives:
        fail(f"{folder} holds neither summary.md nor a .tar.gz from run-gpu.sh --archive")
    with tarfile.open(os.path.join(folder, archives[-1])) as tar:
        for member in tar.getmembers():
            if member.name.startswith("/") or ".." in member.name.split("/"):
                fail(f"{archives[-1]}: refusing the path {member.name!r}")
        tar.extractall(scratch)
    for root, _, files in os.walk(scratch):
        if "summary.md" in files:
            return root
    fail(f"{archives[-1]} holds no summary.md: the run did not get to its end")


def environment(run):
    """{key: value} from environment.txt ('key value' lines, nvidia-smi's CSV)."""
    env = {}
    path = os.path.join(run, "environment.txt")
    if not os.path.isfile(path):
        return env
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("name, driver_version") and i + 1 < len(lines):
            cells = [c.strip() for c in lines[i + 1].split(",")]
            env["device"], env["driver"] = cells[0], cells[1] if len(cells) > 1 else ""
        elif line.startswith("Cuda compilation tools"):
            env["toolkit"] = line.split(",", 1)[-1].strip()
        elif " " in line and not line.startswith(("|", "name,")):
            key, value = line.split(" ", 1)
            env.setdefault(key.rstrip(":"), value.strip())
    return env


def spaced(lines):
    """`lines` with a blank line wherever a table starts or ends, so Markdown
    renders each table as one (a table must not touch a paragraph)."""
    out = []
    for line in lines:
        if out and out[-1] != "" and line.startswith("|") != out[-1].startswith("|"):
            out.append("")
        out.append(line)
    return out


def slug(text):
    s = re.sub(r"[^a-z0-9]+", "-", text.lower().replace("nvidia", "")).strip("-")
    return s or "no-device"


def markdown_tables(path):
    """The table lines (and headings) of a Markdown file, or of a log."""
    if not os.path.isfile(path):
        return []
    keep = []
    for line in open(path, encoding="utf-8", errors="replace").read().splitlines():
        if line.startswith(("|", "- ", "Copy bandwidth")):
            keep.append(line)
    return keep


def main():
    if len(sys.argv) != 4:
        fail("usage: import-results.py DIR RESULTS_DIR README")
    folder, results, readme = sys.argv[1:]
    if not os.path.isdir(folder):
        fail(f"{folder} is not a folder")
    with tempfile.TemporaryDirectory() as scratch:
        run = find_run(folder, scratch)
        env = environment(run)
        date = env.get("date", "unknown")[:10]
        device = env.get("device", "no device")
        name = f"{date}-{slug(device)}"
        dest = os.path.join(results, name)
        n = 2
        while os.path.exists(dest):
            dest = os.path.join(results, f"{name}-{n}")
            n += 1
        # Generated kernels (CUDA C, cubins, scheduled TVMScript) are reproducible
        # from the git hash; the numbers and logs are what a run alone can tell.
        shutil.copytree(run, dest, ignore=shutil.ignore_patterns("*.cu", "*.cubin", "*.scheduled.py"))
    meta = {
        "date": env.get("date", ""),
        "device": device,
        "driver": env.get("driver", ""),
        "toolkit": env.get("toolkit", ""),
        "nvrtc_build": env.get("nvrtc_build", ""),
        "git": env.get("git", "unknown"),
        "host": env.get("host", ""),
    }
    with open(os.path.join(dest, "RUN.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")

    rel = os.path.relpath(dest, os.path.dirname(os.path.abspath(readme)) or ".")
    section = [BEGIN, "", f"### Latest GPU run: {meta['date']} on {device}", ""]
    section.append(f"Driver {meta['driver'] or '?'}, {meta['toolkit'] or 'toolkit ?'}, bundle built at git "
                   f"{meta['git']}; everything the run wrote is in [`{rel}/`]({rel}/).")
    section.append("")
    summary = open(os.path.join(dest, "summary.md"), encoding="utf-8").read().splitlines()
    section += [line for line in summary if line.startswith("|") or "failed or timed out" in line]
    for title, path in [("Every workload at full size, default config (tessera_bench_workloads)",
                         os.path.join(dest, "logs", "bench-workloads.log")),
                        ("Every scheduled test kernel (tessera_bench_kernels)",
                         os.path.join(dest, "logs", "bench-kernels.log"))]:
        lines = markdown_tables(path)
        if lines:
            section += ["", f"#### {title}", ""] + lines
    bench = os.path.join(dest, "bench")
    for md in sorted(os.listdir(bench)) if os.path.isdir(bench) else []:
        if md.endswith(".md"):
            section += ["", f"#### tessera bench: {md[:-3]}", ""] + markdown_tables(os.path.join(bench, md))
    section = spaced(section) + ["", END]

    text = open(readme, encoding="utf-8").read() if os.path.isfile(readme) else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + "\n".join(section) + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## GPU results\n\n" + "\n".join(section) + "\n"
    with open(readme, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"gpu-import: {dest} ({device}, git {meta['git']}); {readme} updated")


if __name__ == "__main__":
    main()
