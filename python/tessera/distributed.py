"""Tuning many workloads across the GPUs of a Ray cluster.

::

    import tessera.distributed as td
    results = td.tune_many(
        [{"name": "softmax", "func": SOFTMAX, "dims": {"rows": 4096}},
         {"name": "gemm", "func": GEMM, "dims": {"m": 4096, "n": 4096, "k": 4096}}],
        db="tuning.jsonl")            # address=None: the cluster of ray.init(), or a local one

One Ray actor per GPU (a process of its own: its own CUDA context, so a
candidate that faults takes down that actor only), each compiling on its
CPUs and measuring on its GPU; without GPUs, one actor per CPU, compiling
only (nothing is timed, and the reports say so). Each actor tunes into a
database file of its own; the driver merges every record into ``db`` (keyed
by workload, device and toolchain, as tessera's database always is). A
workload whose actor was lost (the process died, the node went away) is
queued again on a fresh actor, up to ``retries`` times; one that fails
in tessera (a parse error, no candidate survived) is reported, not retried.
Progress across the cluster goes to ``progress`` (or a line on stderr).
See python/DISTRIBUTED.md for running it on a real cluster.
"""
from __future__ import annotations

import fcntl
import os
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence


@dataclass
class WorkloadResult:
    """What became of one workload."""

    name: str
    ok: bool
    #: Where it ran: the actor's node and GPU ("" when it never ran).
    where: str = ""
    #: The tuner's report (tessera.Report as a dict) when ok.
    report: Dict[str, Any] = field(default_factory=dict)
    #: The winner's scheduled TVMScript when ok.
    script: str = ""
    #: Why not, when not ok.
    error: str = ""
    #: How many times it was started (more than one: its actor was lost).
    attempts: int = 0


def _report_dict(report) -> Dict[str, Any]:
    return {
        "target": report.target, "rule": report.rule, "measured": report.measured,
        "why_unmeasured": report.why_unmeasured, "reference": report.reference,
        "candidates": report.candidates, "tune_ms": report.tune_ms,
    }


class _Worker:
    """One actor: tunes workloads with tessera into a database of its own."""

    def __init__(self, gpu: bool):
        import ray  # noqa: F401  (the actor runs in a Ray worker)

        self.gpu = gpu
        self.db = os.path.join(tempfile.mkdtemp(prefix="tessera-actor-"), "tuning.jsonl")

    def where(self) -> str:
        import ray

        ctx = ray.get_runtime_context()
        gpus = ray.get_gpu_ids() if self.gpu else []
        return f"node {ctx.get_node_id()[:8]}, " + (f"GPU {gpus[0]}" if gpus else "CPU")

    def pid(self) -> int:
        return os.getpid()

    def tune(self, workload: Mapping[str, Any], options: Mapping[str, Any]):
        import tessera

        # A test hook: the actor is killed mid-run, once (the marker file says it was).
        marker = workload.get("_test_crash_marker")
        if marker and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)

        start = os.path.getsize(self.db) if os.path.exists(self.db) else 0
        try:
            k = tessera.tune(workload["func"], workload.get("target", options["target"]),
                             dims=dict(workload.get("dims", {})), topk=int(options["topk"]),
                             measure=bool(options["measure"]), db=self.db, name=workload.get("function", ""),
                             progress=False)
        except tessera.Error as e:
            return {"ok": False, "error": f"{type(e).__name__}: {e}", "where": self.where(), "records": ""}
        records = ""
        if os.path.exists(self.db):  # nothing measured: nothing stored
            with open(self.db, "rb") as f:
                f.seek(start)
                records = f.read().decode()
        return {"ok": True, "report": _report_dict(k.report()), "script": k.script, "where": self.where(),
                "records": records}


def _append_records(db: str, text: str) -> None:
    """Appends database lines under an exclusive lock, as tessera's own writers do."""
    if not text:
        return
    os.makedirs(os.path.dirname(os.path.abspath(db)), exist_ok=True)
    with open(db, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            f.write(text if text.endswith("\n") else text + "\n")
            f.flush()
            os.fsync(f.fileno())
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def tune_many(
    workloads: Sequence[Mapping[str, Any]],
    address: Optional[str] = None,
    *,
    db: Optional[str] = None,
    target: str = "auto",
    topk: int = 20,
    measure: bool = True,
    actors: Optional[int] = None,
    retries: int = 2,
    progress: Optional[Callable[[int, int, str], None]] = None,
    on_actor_started: Optional[Callable[[Any], None]] = None,
) -> List[WorkloadResult]:
    """Tunes every workload on the cluster and returns one WorkloadResult each, in order.

    A workload is a dict: ``name``, ``func`` (TVMScript text), ``dims`` (optional),
    ``target`` (optional: this call's ``target``, "auto" meaning each actor's GPU, or its
    CPU-less compile target "h100" when the cluster has no GPU), ``function`` (optional:
    which function of the text). ``address``: a Ray cluster to join (None: the one
    ray.init() made, else a local one). ``actors``: how many (default: one per GPU, else one
    per CPU). ``on_actor_started(handle)`` is for tests (an actor killed mid-run)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    names = [w.get("name") or f"workload {i}" for i, w in enumerate(workloads)]
    for i, w in enumerate(workloads):
        if "func" not in w:
            raise ValueError(f"{names[i]}: a workload needs 'func' (TVMScript text)")
    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    count = actors or (gpus if gpus else max(1, int(resources.get("CPU", 1))))
    count = max(1, min(count, len(workloads))) if workloads else 0
    # No GPU anywhere: compile for a preset, nothing timed.
    options = {"target": target if gpus or target != "auto" else "h100", "topk": topk, "measure": measure and gpus > 0}
    remote = ray.remote(num_gpus=1 if gpus else 0, num_cpus=1 if not gpus else 0, max_restarts=0)(_Worker)

    def start_actor():
        actor = remote.remote(gpus > 0)
        if on_actor_started:
            on_actor_started(actor)
        return actor

    report = progress or (lambda done, total, name: sys.stderr.write(f"\r[tessera] {done}/{total} tuned ({name})"
                                                                      + ("\n" if done == total else "")))
    results = [WorkloadResult(name=n, ok=False) for n in names]
    queue = list(range(len(workloads)))
    idle = [start_actor() for _ in range(count)]
    running: Dict[Any, tuple] = {}  # object ref -> (workload index, actor)
    done = 0
    while queue or running:
        while queue and idle:
            i = queue.pop(0)
            actor = idle.pop()
            results[i].attempts += 1
            running[actor.tune.remote(dict(workloads[i]), options)] = (i, actor)
        ready, _ = ray.wait(list(running), num_returns=1)
        ref = ready[0]
        i, actor = running.pop(ref)
        try:
            out = ray.get(ref)
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as e:
            # The actor is gone: a fresh one takes its place, the workload goes back in line.
            if results[i].attempts <= retries:
                queue.append(i)
            else:
                results[i].error = f"its actor was lost {results[i].attempts} times: {type(e).__name__}"
                done += 1
                report(done, len(workloads), names[i])
            idle.append(start_actor())
            continue
        results[i].ok = out["ok"]
        results[i].where = out["where"]
        if out["ok"]:
            results[i].report = out["report"]
            results[i].script = out["script"]
            if db:
                _append_records(db, out["records"])
        else:
            results[i].error = out["error"]
        done += 1
        report(done, len(workloads), names[i])
        idle.append(actor)
    for actor in idle:
        ray.kill(actor)
    return results
