"""Generated bad inputs for the robustness suite: each a kernel file (or call) and the outcome
a user must see. Shared by the library, CLI and app tests.

A case's `line` is the file line the error must name, or None where no line exists (a crash, a
timeout). `kinds` lists acceptable error kinds (some inputs fail one way on one Triton version and
another way on the next; each is still a clear, located error).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOOD = (REPO / "kernels" / "add.py").read_text()
GOOD_LINES = GOOD.splitlines()


@dataclass
class Case:
    name: str
    source: str | bytes
    kinds: tuple[str, ...]
    line: int | None = None
    consts: dict[str, str] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    target: str = "sm_90"
    kernel: str | None = None
    autotune_index: int | None = None
    timeout: float = 60.0
    memory: int | None = None
    message: str = ""  # a substring the message must contain


def _line_of(text: str, needle: str) -> int:
    return next(i for i, l in enumerate(text.splitlines(), 1) if needle in l)


def _replace(needle: str, new: str) -> tuple[str, int]:
    return GOOD.replace(needle, new, 1), _line_of(GOOD, needle)


def syntax_cases() -> list[Case]:
    """Four guaranteed syntax errors on each code line of the add kernel file."""
    cases = []
    code_lines = [i for i, l in enumerate(GOOD_LINES, 1)
                  if l.strip() and not l.strip().startswith("#") and not _in_docstring(i) and '"""' not in l][:20]
    mutations = [
        ("unbalanced", lambda l: l + " )"),
        ("dollar", lambda l: l + " $"),
        ("keyword", lambda l: l.replace(l.strip(), "def = " + l.strip(), 1)),
        ("colon", lambda l: l + " : :"),
    ]
    for line in code_lines:
        for mname, mutate in mutations:
            lines = list(GOOD_LINES)
            lines[line - 1] = mutate(lines[line - 1])
            cases.append(Case(f"syntax-{mname}-L{line}", "\n".join(lines) + "\n", ("syntax",), line))
    return cases


def _in_docstring(line: int) -> bool:
    quotes = 0
    for l in GOOD_LINES[: line - 1]:
        quotes += l.count('"""')
    return quotes % 2 == 1


IMPORT_RAISES = [
    ("value", "raise ValueError('bad value at import')", "ValueError"),
    ("runtime", "raise RuntimeError('boom')", "RuntimeError"),
    ("key", "{}['missing']", "KeyError"),
    ("zero", "1 / 0", "ZeroDivisionError"),
    ("module", "import a_module_that_does_not_exist", "ModuleNotFoundError"),
    ("name", "undefined_name + 1", "NameError"),
    ("attr", "triton.no_such_attribute", "AttributeError"),
    ("type", "len(5)", "TypeError"),
    ("assert", "assert False, 'asserted at import'", "AssertionError"),
    ("exit", "import sys; sys.exit(3)", "SystemExit"),
    ("recursion", "def r(n): return r(n + 1)\nr(0)", "RecursionError"),
]


def import_cases() -> list[Case]:
    """Exceptions raised by module-level code, at four places in the file."""
    anchors = ["import triton.language as tl", 'KERNEL = "add_kernel"', "def launch(", "SIZES = "]
    cases = []
    for anchor in anchors:
        at = _line_of(GOOD, anchor)
        for name, stmt, exc in IMPORT_RAISES:
            lines = list(GOOD_LINES)
            insert_at = at - 1 if anchor.startswith("def") else at  # before a def, after a statement
            lines[insert_at:insert_at] = stmt.splitlines()
            line = insert_at + len(stmt.splitlines())
            if name == "recursion":
                line = insert_at + 1  # the recursing function's own line is the deepest user frame
            # A module this machine lacks is the GPU-free run's limit, not the file's error: it stands
            # in (worker/absent_modules.py), the file runs on, and the record names it and its line.
            kinds = ("stood_in",) if name == "module" else ("import",)
            cases.append(Case(f"import-{name}-L{line}", "\n".join(lines) + "\n", kinds, line, message=exc))
    return cases


def example_cases() -> list[Case]:
    """The example() call is wrong."""
    call = "    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)"
    site = _line_of(GOOD, call)
    out = []
    for name, new, kinds, msg in [
        ("too-many", "    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, n, BLOCK=BLOCK)", ("bad_argument",),
         ""),
        ("too-few", "    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, BLOCK=BLOCK)", ("bad_argument",), "n"),
        ("bad-kwarg", "    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK, BLOCKK=3)",
         ("bad_argument",), "BLOCKK"),
        ("no-constexpr", "    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n)", ("missing_constexpr",), "BLOCK"),
        ("item", "    n = int(x.sum().item())\n" + call, ("example",), ""),
        ("raise", "    raise RuntimeError('example failed')\n" + call, ("example",), "example failed"),
        ("list-arg", "    add_kernel[(triton.cdiv(n, BLOCK),)]([1, 2], y, out, n, BLOCK=BLOCK)",
         ("bad_argument", "compilation"), ""),
    ]:
        src = GOOD.replace(call, new, 1)
        line = site if name not in ("item", "raise") else site
        out.append(Case(f"example-{name}", src, kinds, line, message=msg))
    return out


COMPILE_ERRORS = [
    ("undefined-op", "    tl.store(out_ptr + offs, x + y, mask=mask)",
     "    tl.store(out_ptr + offs, tl.no_such_op(x) + y, mask=mask)"),
    ("sqrt-int", "    tl.store(out_ptr + offs, x + y, mask=mask)",
     "    tl.store(out_ptr + offs, tl.sqrt(offs) + y, mask=mask)"),
    ("arange-non-pow2", "    offs = pid * BLOCK + tl.arange(0, BLOCK)", "    offs = pid * BLOCK + tl.arange(0, 1000)"),
    ("static-assert", "    mask = offs < n", "    tl.static_assert(BLOCK < 16, 'block too big')\n    mask = offs < n"),
    ("load-int", "    x = tl.load(x_ptr + offs, mask=mask)", "    x = tl.load(n + offs, mask=mask)"),
    ("python-list", "    y = tl.load(y_ptr + offs, mask=mask)", "    y = [1, 2, 3]",
     "tl.store(out_ptr + offs, x + y, mask=mask)"),  # a list is fine until it is used as a tensor
    ("non-jit-call", "    y = tl.load(y_ptr + offs, mask=mask)", "    y = print_function(offs)"),
    ("shape-mismatch", "    tl.store(out_ptr + offs, x + y, mask=mask)",
     "    tl.store(out_ptr + offs, x + tl.zeros((BLOCK, 2), tl.float32), mask=mask)"),
    ("return-value", "    tl.store(out_ptr + offs, x + y, mask=mask)", "    return x + y"),
    ("bad-dtype-cast", "    y = tl.load(y_ptr + offs, mask=mask)", "    y = tl.load(y_ptr + offs, mask=mask).to(tl.nope)"),
    ("dot-1d", "    tl.store(out_ptr + offs, x + y, mask=mask)",
     "    tl.store(out_ptr + offs, tl.dot(x, y), mask=mask)"),
    ("wrong-axis", "    tl.store(out_ptr + offs, x + y, mask=mask)",
     "    tl.store(out_ptr + offs, x + tl.sum(y, axis=3), mask=mask)"),
    ("while-tensor", "    mask = offs < n", "    while offs:\n        pass\n    mask = offs < n"),
    ("store-to-int", "    tl.store(out_ptr + offs, x + y, mask=mask)", "    tl.store(n, x + y, mask=mask)"),
    ("undefined-var", "    tl.store(out_ptr + offs, x + y, mask=mask)",
     "    tl.store(out_ptr + offs, x + zz, mask=mask)"),
]


def compile_cases() -> list[Case]:
    out = []
    for name, old, new, *where in COMPILE_ERRORS:
        src = GOOD.replace(old, new, 1)
        line = _line_of(src, where[0] if where else new.splitlines()[0].strip())
        out.append(Case(f"compile-{name}", src, ("compilation",), line))
    return out


def block_size_cases() -> list[Case]:
    load = _line_of(GOOD, "offs = pid * BLOCK + tl.arange(0, BLOCK)")
    return [Case(f"block-{v}", GOOD, ("compilation",), load, consts={"BLOCK": v})
            for v in ("1073741824", "16777216", "2097152", "1000", "0", "-1")]


TILE = '''import triton
import triton.language as tl


@triton.jit
def tile(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
'''


def resource_cases() -> list[Case]:
    # over every target's shared memory with 4 stages (393-524 KB) in a tile that compiles in seconds:
    # the K depth buys the bytes, not a 256 x 256 accumulator (15 s a compile on sm_86)
    big = {"BM": "64", "BN": "64", "BK": "512"}
    fp16 = {"a_ptr": "fp16", "b_ptr": "fp16"}
    out = [Case(f"smem-{t}", TILE, ("out_of_resources",), 6, consts=big, args=fp16, options={"num_stages": "4"},
                target=t) for t in ("sm_80", "sm_86", "sm_89", "sm_90", "sm_120", "gfx942")]
    # fp8 dot needs sm_89+: on sm_80 it is a compile error, not a crash
    fp8 = {"a_ptr": "fp8e4nv", "b_ptr": "fp8e4nv"}
    small = {"BM": "64", "BN": "64", "BK": "64"}
    out.append(Case("dtype-fp8-sm80", TILE, ("compilation",), None, consts=small, args=fp8, target="sm_80"))
    out.append(Case("dtype-fp64-dot-gfx942", TILE, ("compilation",), None, consts=small,
                    args={"a_ptr": "fp64", "b_ptr": "fp64"}, target="gfx942"))
    out.append(Case("dtype-mixed-dot", TILE, ("compilation",), 14, consts=small,
                    args={"a_ptr": "fp16", "b_ptr": "fp32"}))
    out.append(Case("dtype-int8-to-fp16-store", TILE, ("compilation",), None, consts=small,
                    args={"a_ptr": "i8", "b_ptr": "fp16"}))
    return out


def argument_cases() -> list[Case]:
    """Overrides naming things that do not exist, or values that make no sense."""
    def_line = _line_of(GOOD, "def add_kernel(")
    out = [Case(f"arg-unknown-{n}", GOOD, ("bad_argument",), def_line, args={n: "3"}, message=n)
           for n in ("m", "N", "x", "block", "out")]
    out += [Case(f"const-unknown-{n}", GOOD, ("bad_argument",), def_line, consts={n: "64"}, message=n)
            for n in ("BLOCK_SIZE", "ROWS", "num_warps_")]
    out.append(Case("arg-bad-dtype", GOOD, ("bad_argument", "compilation"), None, args={"x_ptr": "fp99"}))
    out.append(Case("option-unknown", GOOD, ("bad_argument",), None, options={"bogus_option": "1"},
                    message="bogus_option"))
    out.append(Case("kernel-unknown", GOOD, ("bad_argument",), None, kernel="no_such_kernel",
                    message="no_such_kernel"))
    out.append(Case("target-unknown", GOOD, ("unknown_target",), None, target="sm_9x"))
    return out


def no_kernel_cases() -> list[Case]:
    return [
        Case("empty", "", ("no_kernel",)),
        Case("blank", "\n\n   \n", ("no_kernel",)),
        Case("comments", "# just a comment\n# another\n", ("no_kernel",)),
        Case("plain-python", "def f(x):\n    return x + 1\n\nclass A:\n    pass\n", ("no_kernel",)),
        Case("torch-only", "import torch\n\ndef f(x):\n    return torch.relu(x)\n", ("no_kernel",)),
        Case("jit-removed", GOOD.replace("@triton.jit\n", ""), ("no_kernel",)),
    ]


def garbage_cases() -> list[Case]:
    out = []
    for seed in range(5):
        rng = random.Random(seed)
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(100, 5000)))
        out.append(Case(f"garbage-{seed}", data, ("syntax", "import")))
    rng = random.Random(9)
    text = "".join(rng.choice("abc(){}[]:;=+ \n\t") for _ in range(1 << 20))
    out.append(Case("megabyte-garbage", text, ("syntax",)))
    return out


def megabyte_ok() -> str:
    """A valid 1 MB kernel file: the add kernel after a megabyte of comments."""
    return "\n".join("# " + "x" * 98 for _ in range(10_500)) + "\n" + GOOD


def process_cases() -> list[Case]:
    """Files that end their own process or make it misbehave."""
    out = []
    for name, stmt, words in [
        ("exit0", "import os; os._exit(0)", ""),
        ("exit1", "import os; os._exit(1)", ""),
        # a worker that dies of a signal is reported by it (SIGKILL took no handler: a traceback once)
        ("kill", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "killed by SIGKILL"),
        ("segv", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "killed by SIGSEGV"),
        ("term", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)", "killed by SIGTERM"),
        ("abort", "import os; os.abort()", "killed by SIGABRT"),
    ]:
        src = GOOD.replace("KERNEL = \"add_kernel\"", f"KERNEL = \"add_kernel\"\n{stmt}", 1)
        out.append(Case(f"process-import-{name}", src, ("crashed",), message=words))
        src = GOOD.replace('    return launch(*make_inputs(4096, device))', f"    {stmt}", 1)
        out.append(Case(f"process-example-{name}", src, ("crashed",), message=words))
    return out


def hang_cases() -> list[Case]:
    """Never-ending work: the worker must be stopped (with everything it started) at the timeout."""
    t = 4.0
    return [
        Case("hang-import-loop", GOOD + "\nwhile True:\n    pass\n", ("timeout",), timeout=t),
        Case("hang-import-sleep", GOOD + "\nimport time\ntime.sleep(10**6)\n", ("timeout",), timeout=t),
        Case("hang-example-loop", GOOD.replace('    return launch(*make_inputs(4096, device))',
                                               "    while True:\n        pass", 1), ("timeout",), timeout=t),
        Case("hang-heuristic", GOOD.replace("@triton.jit\ndef add_kernel",
                                            "@triton.heuristics({'BLOCK': lambda a: [0 for _ in iter(int, 1)]})\n"
                                            "@triton.jit\ndef add_kernel", 1),
             ("timeout",), timeout=t),
        Case("hang-constexpr-unroll", GOOD.replace(
            "    tl.store(out_ptr + offs, x + y, mask=mask)",
            "    for i in tl.static_range(10**9):\n        x = x + i\n    tl.store(out_ptr + offs, x + y, mask=mask)", 1),
            ("timeout", "memory"), timeout=t),
        Case("hang-child-process", GOOD + "\nimport subprocess, time\nCHILD = subprocess.Popen(['sleep', '1000'])\n"
                                          "time.sleep(10**6)\n", ("timeout",), timeout=t),
    ]


def memory_cases() -> list[Case]:
    cap = 1 << 30
    return [
        Case("memory-import", GOOD + "\nhog = []\nwhile True:\n    hog.append(bytearray(10**7))\n", ("memory",),
             memory=cap, timeout=30),
        Case("memory-example", GOOD.replace('    return launch(*make_inputs(4096, device))',
                                            "    import torch\n    hog = torch.ones(10**10, device='cpu')", 1),
             ("memory", "example"), memory=cap, timeout=30),
    ]


def all_cases() -> list[Case]:
    return (syntax_cases() + import_cases() + example_cases() + compile_cases() + block_size_cases()
            + resource_cases() + argument_cases() + no_kernel_cases() + garbage_cases() + process_cases()
            + hang_cases() + memory_cases())
