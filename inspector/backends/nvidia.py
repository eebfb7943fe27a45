"""NVIDIA: SASS from the cubin with the tools in Triton's wheel, resources from ptxas and the cubin.

The SASS stage is `nvdisasm -g -gi -c -hex -ndf` output (-ndf skips a dataflow analysis that
changes nothing in the listing and costs 70 ms; -gi adds the call sites of inlined functions where
the PTX recorded them), reshaped into one line per instruction with the decoded control bits in
front (the same decoding as `triton.tools.disasm`):

    //## File "/path/add.py", line 8
            /*0090*/  --:-:2:-:1  LDG.E.128 R4, desc[UR4][R2.64] ;

`wait:read:write:yield:stall`: the scoreboard barriers the instruction waits on (hex mask), the
barrier it sets when its operands have been read and when its result is written (`-`: none),
`Y` when the warp scheduler may switch warps after it, and the stall cycles before the next
instruction issues. `//## File` lines carry the source line (ptxas runs with -lineinfo); code
inlined from a helper reads `//## File "/path/h.py", line 43 inlined at "/path/k.py", line 87`,
followed by the call site's own `//## File` line.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from typing import Callable

from ..record import Resources

STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
SASS_LEGEND = (
    "// control bits: wait-barrier mask : read barrier : write barrier : Y = may yield : stall cycles"
)

# ptxas -v, e.g. "ptxas info    : Used 26 registers, used 0 barriers, 576 bytes cmem[0]"
# (Triton 3.9 may run it as "ptxas-blackwell info ...").
PTXAS_USED = re.compile(
    r"Used (?P<regs>\d+) registers(?:, used (?P<bars>\d+) barriers)?(?:, (?P<smem>\d+) bytes smem)?"
    r"(?:, (?P<cmem>\d+) bytes cmem\[0\])?"
)
# "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
PTXAS_FRAME = re.compile(
    r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, (?P<loads>\d+) bytes spill loads"
)
# "ptxas info    : Function properties for add_kernel", one per function in the cubin
PTXAS_FUNCTION = re.compile(r"Function properties for \S+")
# cuobjdump -res-usage: " REG:26 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:576 TEXTURE:0 ..."
RES_USAGE = re.compile(r"REG:(?P<regs>\d+) STACK:(?P<stack>\d+) SHARED:(?P<shared>\d+) LOCAL:(?P<local>\d+)")
# nvdisasm -hex, first line of an instruction: "        /*0090*/   LDG.E.128 R4, desc[UR4][R2.64] ;  /* 0x... */"
SASS_INSTR = re.compile(r"^\s*/\*(?P<addr>[0-9a-f]{4,})\*/\s+(?P<text>.*?;)\s*/\* 0x(?P<lo>[0-9a-f]{16}) \*/\s*$")
# second line of it: "                          /* 0x000fe20000000800 */"
SASS_HI = re.compile(r"^\s*/\* 0x(?P<hi>[0-9a-f]{16}) \*/\s*$")
SASS_KEEP = re.compile(r"^\s*(//##|\.L_|[A-Za-z_][\w.$]*:\s*$)")


def control_bits(hi: int) -> str:
    """Decode the scheduling control bits held in the upper word of a Volta+ instruction."""
    stall = (hi >> 41) & 0xF
    yld = (hi >> 45) & 0x1
    wrtdb = (hi >> 46) & 0x7
    readb = (hi >> 49) & 0x7
    watdb = (hi >> 52) & 0x3F
    return "{}:{}:{}:{}:{:x}".format(
        "--" if watdb == 0 else f"{watdb:02x}",
        "-" if readb == 7 else str(readb),
        "-" if wrtdb == 7 else str(wrtdb),
        "Y" if yld == 0 else "-",
        stall,
    )


def format_sass(nvdisasm_out: str) -> str:
    """Reshape `nvdisasm -g -c -hex` output into the SASS stage text (see module docstring)."""
    out = [SASS_LEGEND]
    lines = nvdisasm_out.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = SASS_INSTR.match(line)
        if m:
            ctrl = "--:-:-:-:0"
            if i + 1 < len(lines) and (h := SASS_HI.match(lines[i + 1])):
                ctrl = control_bits(int(h.group("hi"), 16))
                i += 1
            out.append(f"        /*{m.group('addr')}*/  {ctrl}  {m.group('text')}")
        elif SASS_KEEP.match(line):
            out.append(line.rstrip())
        i += 1
    return "\n".join(out) + "\n"


def _tool(name: str) -> str:
    """Path of a CUDA binary tool bundled with Triton's wheel (cuobjdump, nvdisasm), from Triton's
    knobs (read here, not through triton_compat: that module reads resources through this one)."""
    from triton import knobs

    return getattr(knobs.nvidia, name).path


def disassemble(cubin: bytes) -> str:
    """SASS with line information and control bits, via the nvdisasm bundled with Triton."""
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        path = f.name
    try:
        text = subprocess.run(
            [_tool("nvdisasm"), "-g", "-gi", "-c", "-hex", "-ndf", path],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        os.unlink(path)
    return format_sass(text)


def cubin_resource_usage(cubin: bytes) -> dict[str, int]:
    """REG/STACK/SHARED/LOCAL from `cuobjdump -res-usage`, read from the cubin itself."""
    return start_resource_usage(cubin)()


def start_resource_usage(cubin: bytes) -> Callable[[], dict[str, int]]:
    """Start `cuobjdump -res-usage` on `cubin` (2-3 ms); the function returned waits for it and
    gives what `cubin_resource_usage` gives (raising CalledProcessError if it failed). The cubin
    goes to cuobjdump as an in-memory file: nothing is left to clean up if it is never waited for."""
    fd = os.memfd_create("kernel.cubin")
    try:
        view = memoryview(cubin)
        while view:
            view = view[os.write(fd, view):]
        proc = subprocess.Popen([_tool("cuobjdump"), "-res-usage", f"/proc/self/fd/{fd}"], pass_fds=(fd,),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(fd)  # cuobjdump holds its own copy

    def usage() -> dict[str, int]:
        out, err = proc.communicate()
        if proc.returncode:
            raise subprocess.CalledProcessError(proc.returncode, proc.args, out, err)
        m = RES_USAGE.search(out)
        return {k: int(v) for k, v in m.groupdict().items()} if m else {}

    return usage


def parse_ptxas_log(log: str) -> dict[str, int]:
    """Registers, barriers, stack frame and spill bytes from ptxas's -v output, and how many
    functions it describes (`functions`: a kernel with noinline helpers has several)."""
    out: dict[str, int] = {"functions": len(PTXAS_FUNCTION.findall(log))}
    if m := PTXAS_USED.search(log):
        out["registers"] = int(m.group("regs"))
        if m.group("bars") is not None:
            out["barriers"] = int(m.group("bars"))
        if m.group("cmem") is not None:
            out["constant_bytes"] = int(m.group("cmem"))
    if m := PTXAS_FRAME.search(log):
        out["stack_bytes"] = int(m.group("stack"))
        out["spill_store_bytes"] = int(m.group("stores"))
        out["spill_load_bytes"] = int(m.group("loads"))
    return out


# Stages a compile may leave for later (made from the binary when first asked for).
DEFERRABLE = ("sass",)


def binary(asm: dict) -> bytes:
    """The compiled binary the deferred stages are made from."""
    return asm.get("cubin") or b""


def extra_stages(asm: dict, skip: tuple[str, ...] | list[str] = ()) -> dict[str, str]:
    """The stages made from the binary (SASS), less those in `skip`."""
    cubin = asm.get("cubin")
    return {"sass": disassemble(cubin)} if cubin and "sass" not in skip else {}


def stages_from_binary(data: bytes, stages: list[str]) -> dict[str, str]:
    """Deferred stages made from a binary (`binary(asm)`)."""
    return {"sass": disassemble(data)} if "sass" in stages and data else {}


def resources(asm: dict, metadata: dict, log: str) -> Resources:
    """Resources GPU-free: registers and stack from ptxas's log or the cubin (`start_resources`
    says which), spill bytes and barriers from ptxas."""
    return start_resources(asm, metadata, log)()


def start_resources(asm: dict, metadata: dict, log: str) -> Callable[[], Resources]:
    """`resources`, any tool it needs started now (cuobjdump runs while the caller does other
    work); the function returned waits for it and gives the Resources.

    ptxas's -v log says what ptxas put in the cubin: for a cubin of one function its registers and
    stack frame are the cubin's own (tests/compile/test_compile.py checks every bundled kernel
    against cuobjdump), and cuobjdump is not run (2-3 ms, a twentieth of a small kernel's
    compile). With several functions (noinline helpers, whose frames the kernel's local memory
    includes) or no log, cuobjdump reads the cubin."""
    ptxas = parse_ptxas_log(log)
    from_log = ptxas["functions"] == 1 and "registers" in ptxas and "stack_bytes" in ptxas
    pending = start_resource_usage(asm["cubin"]) if asm.get("cubin") and not from_log else (lambda: {})

    def finish() -> Resources:
        r = Resources.from_metadata(metadata)
        usage = pending()
        r.registers = usage.get("regs", ptxas.get("registers"))
        # Local memory per thread is the ABI stack frame (where spills go) plus any non-stack local
        # arrays; the driver reports their sum as CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES.
        if usage:
            r.local_bytes = usage.get("stack", 0) + usage.get("local", 0)
        else:
            r.local_bytes = ptxas.get("stack_bytes")
        r.spills = r.local_bytes // 4 if r.local_bytes is not None else None  # Triton's n_spills
        r.spill_store_bytes = ptxas.get("spill_store_bytes")
        r.spill_load_bytes = ptxas.get("spill_load_bytes")
        r.barriers = ptxas.get("barriers")
        r.constant_bytes = ptxas.get("constant_bytes")
        logged = "registers" in ptxas or "stack_bytes" in ptxas
        r.source = "cubin+ptxas" if usage and logged else ("cubin" if usage else "ptxas")
        return r

    return finish
