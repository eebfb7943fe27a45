"""The command line: `python -m inspector compile|targets|...`, human output or --json.

Exit status: 0 on success, 1 when the kernel did not compile (or would not launch), 2 on usage
errors. Diagnostics go to stderr so that stage text on stdout can be piped.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from typing import Any, Sequence

from .record import STAGE_TITLES, Inspection
from .hardware.targets import DEFAULT_TARGET


def _pairs(values: list[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values or []:
        if "=" not in item:
            raise SystemExit(f"error: {flag} expects NAME=VALUE, got {item!r}")
        name, value = item.split("=", 1)
        out[name.strip()] = value.strip()
    return out


def add_compile_options(p: argparse.ArgumentParser) -> None:
    """The options every command that compiles a kernel shares (compile, explain, diff, ...)."""
    p.add_argument("file", nargs="?", help="a Python file with @triton.jit kernels, or an importable module's name "
                                          "(liger_kernel.ops.rms_norm); not needed with --run")
    p.add_argument("--run", metavar="COMMAND",
                   help="open the kernel through the code that really calls it: run COMMAND (a pytest node id, "
                        "'pytest ...', 'python script.py ...') GPU-free under Triton's interpreter (natively "
                        "with --target native), record its launches and compile --kernel's (default: the kernel "
                        "launched most) with its real arguments")
    p.add_argument("--root", metavar="DIR",
                   help="the project folder the file belongs to, when no __init__.py chain or pyproject.toml "
                        "shows it (its package imports then work)")
    p.add_argument("--kernel", help="which kernel of the file (default: the one example() launches, or the first)")
    p.add_argument("--target", default=DEFAULT_TARGET,
                   help=f"sm_80, sm_90, sm_120, gfx942, ... or native (default {DEFAULT_TARGET})")
    p.add_argument("--num-warps", type=int, help="compile option num_warps")
    p.add_argument("--num-stages", type=int, help="compile option num_stages")
    p.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="any other compile option (maxnreg=128, num_ctas=2, enable_fp_fusion=false)")
    p.add_argument("--const", action="append", metavar="NAME=VALUE", help="set a constexpr (BLOCK=512)")
    p.add_argument("--arg", action="append", metavar="NAME=VALUE",
                   help="set an argument: a dtype for a pointer (x_ptr=fp16), a number for a scalar (n=4095)")
    p.add_argument("--autotune-config", type=int, metavar="I", help="inspect config I of an autotuned kernel")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds before the worker is stopped (default $TRITON_INSPECTOR_TIMEOUT, else 60)")
    p.add_argument("--no-cache", action="store_true", help="compile again even if the result is cached (the new result is stored)")
    p.add_argument("--triton", metavar="VERSION",
                   help="compile with this Triton release (default: the installed one); others come from side "
                        "environments: python -m inspector versions add 3.6.0")


def inspect_from(ns: argparse.Namespace, **extra: Any) -> Inspection:
    """The record the parsed options ask for: through `--run` (a program's real launch) or the file."""
    if getattr(ns, "run", None):
        from .capture.by_running import open_by_running

        req = compile_request(ns, **extra)
        for key in ("file", "kernel", "target", "root", "autotune_index"):
            req.pop(key, None)
        return open_by_running(ns.run, kernel=ns.kernel, target=ns.target, **req)
    if not ns.file:
        raise SystemExit("error: give a kernel file (or module), or --run COMMAND to open it through the code "
                         "that calls it")
    from .compile.api import inspect_kernel

    return inspect_kernel(**compile_request(ns, **extra))


def compile_request(ns: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    """Keyword arguments for `inspector.compile.api.inspect_kernel` from parsed compile options."""
    options = _pairs(ns.option, "--option")
    if ns.num_warps is not None:
        options["num_warps"] = str(ns.num_warps)
    if ns.num_stages is not None:
        options["num_stages"] = str(ns.num_stages)
    return dict(
        file=ns.file,
        kernel=ns.kernel,
        target=ns.target,
        args=_pairs(ns.arg, "--arg"),
        consts=_pairs(ns.const, "--const"),
        options=options,
        autotune_index=ns.autotune_config,
        timeout=ns.timeout,
        use_cache=not ns.no_cache,
        root=ns.root,
        triton=getattr(ns, "triton", None),
        **extra,
    )


def write_stage(rec: Inspection, stage: str | None) -> bool:
    """Print a stage's text (the target's assembly by default) to stdout; False, with an error on
    stderr naming the stages there are, when the record has no such stage."""
    stage = stage or ("amdgcn" if rec.backend == "hip" else "ptx")
    if stage in rec.deferred:
        from .compile.api import complete

        complete(rec, [stage])
    if stage not in rec.stages:
        print(f"error: no {stage} stage for {rec.target}; stages: {', '.join([*rec.stages, *rec.deferred])}", file=sys.stderr)
        return False
    sys.stdout.write(rec.stages[stage])
    return True


def report_error(rec: Inspection) -> None:
    """The error (or why the kernel cannot launch) on stderr, with the file and line, and the
    command-line form of what is missing."""
    err = rec.error
    if err is None:
        problem = rec.launch_problem()
        if problem:
            print(f"{rec.file}: error: {problem}", file=sys.stderr)
        return
    where = ""
    if err.file:
        where = f"{err.file}:{err.line}: " if err.line else f"{err.file}: "
    print(f"{where}error ({err.kind}): {err.message}", file=sys.stderr)
    missing = err.details.get("missing") or []
    if missing:
        flags = " ".join(f"--{'const' if m.get('kind') == 'constexpr' else 'arg'} {m['name']}="
                         f"{m.get('suggested') or 'VALUE'}" for m in missing)
        print(f"  on the command line: {flags}", file=sys.stderr)
    if rec.stopped:
        st = rec.stopped
        print(f"  note: the file's code stopped at line {st.get('line')}: {st.get('message')}", file=sys.stderr)
    if err.kind in ("missing_constexpr", "bad_argument", "compilation", "import") \
            and not rec.call_origin.startswith("run:"):
        kernel = rec.kernel or (err.details.get("kernel") if err.details else None) or "KERNEL"
        print(f"  or open it through the code that really calls it (a test, a benchmark, a script): "
              f"python -m inspector compile --run \"pytest tests/test_x.py::test_y\" --kernel {kernel}",
              file=sys.stderr)
    if rec.parameters:  # what the failed compile tried, so the values can be checked and changed
        call = ", ".join(f"{p.name}={p.value}" for p in rec.parameters)
        origin = f" ({rec.call_origin})" if rec.call_origin else ""
        print(f"  tried{origin}: {rec.kernel}[{rec.grid or '?'}]({call})", file=sys.stderr)


def summary_line(rec: Inspection) -> str:
    r = rec.resources
    if rec.backend == "hip":
        res = f"vgprs {r.vgprs}, agprs {r.agprs}, sgprs {r.sgprs}, lds {r.lds_bytes} B, scratch {r.scratch_bytes} B"
    else:
        res = (f"registers {r.registers}, spills {r.spill_store_bytes} B stored, local {r.local_bytes} B, "
               f"shared {r.shared_bytes} B")
    occ = ""
    if rec.occupancy and rec.occupancy.get("blocks_per_sm") is not None:
        occ = f", {rec.occupancy['blocks_per_sm']} blocks/SM ({rec.occupancy.get('occupancy', 0) * 100:.0f}%)"
    cached = " (cached)" if rec.cached else ""
    return (f"{rec.kernel} on {rec.target} [{rec.mode}]: num_warps {r.num_warps}, num_stages {r.num_stages}, "
            f"{res}{occ}; compiled in {rec.compile_seconds:.2f} s{cached}")


def write_out_dir(rec: Inspection, out: str) -> list[str]:
    """Every stage as <kernel>.<stage>, the record as <kernel>.json, passes under passes/."""
    os.makedirs(out, exist_ok=True)
    written = []
    for stage, text in rec.stages.items():
        path = os.path.join(out, f"{rec.kernel}.{stage}")
        with open(path, "w") as f:
            f.write(text)
        written.append(path)
    path = os.path.join(out, f"{rec.kernel}.json")
    with open(path, "w") as f:
        json.dump(rec.to_dict(), f, indent=1)
    written.append(path)
    if rec.passes:
        pdir = os.path.join(out, "passes")
        os.makedirs(pdir, exist_ok=True)
        for s in rec.passes:
            if not s.changed:
                continue
            ext = {"mlir": "mlir", "llvm": "ll", "mir": "mir"}[s.dialect]
            safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in s.name)
            p = os.path.join(pdir, f"{s.index:04d}-{safe}.{ext}")
            with open(p, "w") as f:
                f.write(s.ir)
            written.append(p)
    return written


def cmd_compile(ns: argparse.Namespace) -> int:
    # SASS is made only when this call prints or writes it (nvdisasm costs ~0.2 s on any kernel).
    needs_sass = ns.json or ns.out or ns.stage == "sass"
    rec = inspect_from(ns, passes=ns.passes, defer=() if needs_sass else ("sass",))
    if ns.out and rec.stages:
        write_out_dir(rec, ns.out)
    status = 1 if rec.launch_problem() else 0
    if ns.reproduce:
        if not rec.reproducer:
            report_error(rec)
            return 1
        with open(ns.reproduce, "w") as f:
            f.write(rec.reproducer)
        print(f"wrote {ns.reproduce}: {rec.kernel} with an example() that reproduces this compile", file=sys.stderr)
    if ns.json:
        print(rec.to_json(indent=None if ns.compact else 1))
        return status
    if ns.list_configs:
        for i, cfg in enumerate(rec.autotune_configs):
            mark = "*" if i == rec.autotune_index else " "
            print(f"{mark} {i}: " + ", ".join(f"{k}={v}" for k, v in cfg.items()))
        if not rec.autotune_configs:
            print(f"{rec.kernel or ns.file} is not autotuned", file=sys.stderr)
        return status
    if rec.error and not rec.stages:
        report_error(rec)
        return 1
    if ns.passes and rec.passes is not None:
        for s in rec.passes:
            print(f"{s.index:4d}  {s.dialect:4s}  {'changed' if s.changed else '       '}  {s.name}  [{s.scope}]")
    else:
        if not write_stage(rec, ns.stage):
            return 2
    print(summary_line(rec), file=sys.stderr)
    if rec.stopped and not rec.error:
        st = rec.stopped
        print(f"note: the file's own code stopped at line {st.get('line')} ({st.get('message')}); the launch "
              f"recorded before it was compiled", file=sys.stderr)
    if status:
        report_error(rec)
    return status


def cmd_targets(ns: argparse.Namespace) -> int:
    from .compile.api import list_targets

    info = list_targets()
    if ns.json:
        print(json.dumps(info, indent=1))
        return 0
    print(f"Triton {info['triton_version']} builds: {', '.join(info['buildable'])}")
    if info["native"]:
        print(f"native: {info['native']} ({info['native_device']})")
    else:
        print("native: none (no GPU found); every target above compiles GPU-free")
    for name, why in info["failed"].items():
        print(f"  not buildable: {name}: {why}")
    return 0


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m inspector",
        description="Triton Kernel Inspector: compile Triton kernels GPU-free or natively and see what the "
                    "compiler made of them.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("compile", help="compile a kernel and print a stage, or the whole record as JSON")
    add_compile_options(p)
    p.add_argument("--stage", choices=[s for s in STAGE_TITLES if s != "source"],
                   help="which stage to print (default: ptx on NVIDIA, amdgcn on AMD)")
    p.add_argument("--passes", action="store_true", help="capture the IR after every compiler pass")
    p.add_argument("--json", action="store_true", help="print the inspection record as one JSON object")
    p.add_argument("--compact", action="store_true", help="with --json: no indentation")
    p.add_argument("--out", metavar="DIR", help="also write every stage (and passes) to DIR")
    p.add_argument("--list-configs", action="store_true", help="list an autotuned kernel's configs")
    p.add_argument("--reproduce", metavar="OUT.py",
                   help="also write a standalone file (the kernel and an example() with the recorded launch) "
                        "that reproduces this compile")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("targets", help="list the targets this Triton builds and the native GPU")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_targets)

    from .commands import COMMANDS

    # `compile` and `targets` need none of the other commands' modules (analysis, bench, guard:
    # about 70 ms of imports): a cache hit's whole process is a few hundred ms.
    first = next((a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")), None)
    wanted = [] if first in ("compile", "targets") else COMMANDS
    for name in wanted:
        try:
            module = importlib.import_module(f".commands.{name}", __package__)
        except ImportError as e:
            # never dropped silently: the command is listed, and says why it cannot run
            _unavailable(sub, name, e)
            continue
        module.register(sub)
    return parser


def _unavailable(sub: Any, name: str, error: ImportError) -> None:
    why = f"{type(error).__name__}: {error}"

    def run(ns: argparse.Namespace) -> int:
        print(f"error: the {name} command cannot load ({why}); scripts/install.sh installs what it needs",
              file=sys.stderr)
        return 2

    p = sub.add_parser(name, help=f"(cannot load here: {why})", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
    ns = parser.parse_args(argv)
    # One request per run: warming the worker pool up would cost more than it saves.
    os.environ.setdefault("TRITON_INSPECTOR_PREWARM", "0")
    try:
        return int(ns.func(ns) or 0)
    except KeyboardInterrupt:
        return 130
