"""Instructions of each stage, one class each, for the instruction mix and the memory analysis.

Classes (the same names in every stage, so stages and inspections compare):

    global_load  global_store  global_atomic   memory through the L1/L2 caches to DRAM
    shared_load  shared_store  shared_atomic   shared memory (LDS on AMD), ldmatrix/stmatrix
    local_load   local_store                   local memory: register spills (scratch on AMD)
    async_copy                                 cp.async / LDGSTS / buffer loads into LDS
    tma                                        bulk tensor copies (cp.async.bulk, UTMALDG/UTMASTG)
    tensor_core                                mma / wgmma / tcgen05 / HMMA / HGMMA / MFMA / WMMA
    fp  int                                    floating-point and integer (address, logic) ALU
    special                                    transcendental / special-function unit (MUFU)
    conversion                                 type conversions (cvt, F2FP, v_cvt)
    shuffle                                    cross-lane moves (shfl, ds_bpermute, DPP)
    barrier                                    barriers, fences, memory waits, async-copy groups
    branch                                     branches, calls, exits; scf.for/if in the IRs
    move                                       register moves, special-register reads
    constant                                   kernel-argument / constant-bank loads
    layout  shape  reduce                      IR only: convert_layout; splat/broadcast/...; reduce/scan
    nop                                        padding (not counted in the mix)
    other
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable

CLASSES = (
    "global_load", "global_store", "global_atomic", "shared_load", "shared_store", "shared_atomic",
    "local_load", "local_store", "async_copy", "tma", "tensor_core", "fp", "int", "special", "conversion",
    "shuffle", "barrier", "branch", "move", "constant", "layout", "shape", "reduce", "other",
)
MEMORY_CLASSES = frozenset({
    "global_load", "global_store", "global_atomic", "shared_load", "shared_store", "shared_atomic",
    "local_load", "local_store", "async_copy", "tma",
})


@dataclass(slots=True)
class Instruction:
    """One machine instruction (PTX, SASS or AMDGCN) as printed on its stage line."""

    opcode: str  # with its qualifiers: "ld.global.v4.b32", "LDG.E.128", "buffer_load_dwordx4"
    cls: str  # one of CLASSES
    predicate: str | None  # "@%p1", "@!P0"; None when unpredicated
    text: str  # the instruction without predicate, address or control bits


# ---- PTX ------------------------------------------------------------------------------------------------
# `	@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];`, `	add.s64 	%rd1, %rd7, %rd10;`,
# `	@!complete bra.uni waitLoop;`
PTX_INSTRUCTION = re.compile(r"^\s*(@!?[%\w]+\s+)?([a-z][a-z0-9_]*(?:\.[\w:]+)*)(?=[\s;]|$)")
_PTX_FP_TYPES = (".f32", ".f16", ".bf16", ".f64", ".f16x2", ".bf16x2", ".ftz", ".rn", ".rz", ".approx")
_PTX_SPECIAL = ("ex2", "lg2", "rcp", "sqrt", "rsqrt", "sin", "cos", "tanh")
_PTX_BARRIER = ("bar", "barrier", "membar", "fence", "mbarrier", "griddepcontrol")
_PTX_BRANCH = ("bra", "brx", "ret", "exit", "call", "trap")


@functools.lru_cache(maxsize=4096)
def _ptx_class(op: str) -> str:
    parts = op.split(".")
    head = parts[0]
    quals = set(parts[1:])
    if head in ("ld", "ldu"):
        if "shared" in quals or any(q.startswith("shared::") for q in quals):
            return "shared_load"
        if "local" in quals:
            return "local_load"
        if "param" in quals or "const" in quals:
            return "constant"
        return "global_load"
    if head == "st":
        if "shared" in quals or any(q.startswith("shared::") for q in quals):
            return "shared_store"
        if "local" in quals:
            return "local_store"
        return "global_store"
    if head in ("atom", "red"):
        return "shared_atomic" if any(q.startswith("shared") for q in quals) else "global_atomic"
    if head in ("cp", "cp.async") or op.startswith("cp."):
        if "wait_group" in quals or "commit_group" in quals or "wait_all" in quals:
            return "barrier"
        if "bulk" in quals or op.startswith("cp.reduce.async.bulk"):
            return "tma"
        return "async_copy"
    if head == "ldmatrix":
        return "shared_load"
    if head == "stmatrix":
        return "shared_store"
    if head in ("mma", "wmma"):
        return "tensor_core"
    if head == "wgmma":
        return "tensor_core" if "mma_async" in quals else "barrier"
    if head == "tcgen05":
        return "barrier" if quals & {"fence", "wait", "commit"} else "tensor_core"
    if head in _PTX_SPECIAL:
        return "special"
    if head == "div":
        return "special" if ("full" in quals or "approx" in quals) else ("fp" if quals & {"f32", "f64"} else "int")
    if head == "cvt":
        return "conversion"
    if head == "shfl":
        return "shuffle"
    if head in _PTX_BARRIER:
        return "barrier"
    if head in _PTX_BRANCH:
        return "branch"
    if head == "mov":
        return "move"
    if head in ("tensormap", "prefetch", "prefetchu", "createpolicy", "applypriority", "discard"):
        return "other"
    if any(op.endswith(t) or (t + ".") in op for t in _PTX_FP_TYPES) and head not in ("cvta",):
        return "fp"
    return "int"


def ptx_class(line: str) -> str | None:
    """The class of the instruction on a PTX line, or None (no Instruction built: the fast path)."""
    s = line.strip()
    if not s or s[0] in ".{}/$)(" or s.endswith(":"):
        return None
    m = PTX_INSTRUCTION.match(s)
    return _ptx_class(m.group(2)) if m else None


def _guarded(m: re.Match[str], classify: Callable[[str], str], text: str) -> Instruction:
    """A PTX or SASS instruction from its line's match: the opcode is group 2, the guard predicate
    (`@p`, `@!P0`) group 1 where there is one."""
    op = m.group(2)
    return Instruction(op, classify(op), m.group(1).strip() if m.group(1) else None, text)


def ptx_instruction(line: str) -> Instruction | None:
    """The instruction on a PTX line; None for directives, labels, comments and braces."""
    s = line.strip()
    if not s or s[0] in ".{}/$)(" or s.endswith(":"):
        return None
    m = PTX_INSTRUCTION.match(s)
    return _guarded(m, _ptx_class, s[m.start(2):].rstrip()) if m else None


# ---- SASS -----------------------------------------------------------------------------------------------
# `        /*0180*/  --:-:2:-:4  @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;` (control bits as the SASS stage prints them)
SASS_INSTRUCTION = re.compile(
    r"^\s*/\*[0-9a-f]+\*/\s+(?:[0-9a-f-]{2}:[0-9-]:[0-9-]:[Y-]:[0-9a-f]\s+)?(@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_.]*)(.*?);?\s*$"
)
_SASS_CLASS = {
    "LDG": "global_load", "LD": "global_load", "STG": "global_store", "ST": "global_store",
    "ATOMG": "global_atomic", "ATOM": "global_atomic", "RED": "global_atomic", "REDG": "global_atomic",
    "ATOMS": "shared_atomic", "REDS": "shared_atomic",
    "LDS": "shared_load", "LDSM": "shared_load", "STS": "shared_store", "STSM": "shared_store",
    "LDL": "local_load", "STL": "local_store", "LDGSTS": "async_copy",
    "UTMALDG": "tma", "UTMASTG": "tma", "UTMAREDG": "tma", "UBLKCP": "tma", "UBLKRED": "tma", "UTMAPF": "tma",
    "UTMACCTL": "tma", "UTMACMDFLUSH": "tma", "UBLKPF": "tma",
    "MUFU": "special",
    "F2F": "conversion", "F2I": "conversion", "I2F": "conversion", "F2FP": "conversion", "I2FP": "conversion",
    "F2IP": "conversion", "FRND": "conversion", "I2I": "conversion",
    "SHFL": "shuffle",
    "BAR": "barrier", "MEMBAR": "barrier", "WARPSYNC": "barrier", "DEPBAR": "barrier", "SYNCS": "barrier",
    "ERRBAR": "barrier", "FENCE": "barrier", "WARPGROUP": "barrier", "ARRIVES": "barrier", "CCTL": "barrier",
    "LDGDEPBAR": "barrier", "CGAERRBAR": "barrier", "UCGABAR_ARV": "barrier", "UCGABAR_WAIT": "barrier",
    "BRA": "branch", "BRX": "branch", "JMP": "branch", "JMX": "branch", "EXIT": "branch", "RET": "branch",
    "CALL": "branch", "BSSY": "branch", "BSYNC": "branch", "BREAK": "branch", "BPT": "branch", "YIELD": "branch",
    "KILL": "branch", "NANOSLEEP": "branch", "BMOV": "branch",
    "MOV": "move", "UMOV": "move", "CS2R": "move", "S2R": "move", "S2UR": "move", "R2UR": "move", "UR2R": "move",
    "P2R": "move", "R2P": "move", "UP2UR": "move", "MOV32I": "move",
    "LDC": "constant", "ULDC": "constant", "LDCU": "constant",
    "NOP": "nop",
}
_SASS_TENSOR = re.compile(r"^(H|I|D|Q|O|B|U?TC[A-Z]*|F)?G?MMA$|^[HIDQBO]GMMA$|^UTC[A-Z]*MMA$")
_SASS_FP = {"FFMA", "FADD", "FMUL", "FMNMX", "FSETP", "FSEL", "FCHK", "FSET", "FSWZADD", "FMNMX3", "FADD2",
            "FFMA2", "FMUL2", "HADD2", "HMUL2", "HFMA2", "HSETP2", "HMNMX2", "HSET2", "DADD", "DMUL", "DFMA",
            "DSETP", "DMNMX"}


@functools.lru_cache(maxsize=4096)
def _sass_class(op: str) -> str:
    base = op.split(".", 1)[0]
    if base in _SASS_CLASS:
        return _SASS_CLASS[base]
    if base.endswith("MMA") and _SASS_TENSOR.match(base):
        return "tensor_core"
    if base in _SASS_FP:
        # HFMA2.MMA is an FP16 FMA issued on the tensor pipe, often just a register zeroing
        return "move" if op == "HFMA2.MMA" else "fp"
    if op.startswith("IMAD.MOV"):
        return "move"
    return "int"


def sass_class(line: str) -> str | None:
    """The class of the instruction on a SASS stage line, or None (the fast path)."""
    if "/*" not in line:
        return None
    m = SASS_INSTRUCTION.match(line)
    return _sass_class(m.group(2)) if m else None


def sass_instruction(line: str) -> Instruction | None:
    """The instruction on a SASS stage line; None for `//##` line info, labels and the legend."""
    if "/*" not in line:
        return None
    m = SASS_INSTRUCTION.match(line)
    return _guarded(m, _sass_class, (m.group(2) + m.group(3)).strip()) if m else None


# ---- AMDGCN --------------------------------------------------------------------------------------------
# `	buffer_load_dwordx4 v[0:3], v8, s[0:3], 0 offen`, `	v_pk_add_f32 v[0:1], v[0:1], v[4:5]`
AMDGCN_INSTRUCTION = re.compile(r"^\s+([a-z][a-z0-9_]*)(?:\s+(.*?))?\s*(?:;.*)?$")
_AMD_SPECIAL = ("v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_")
_AMD_FP = re.compile(r"_(f16|f32|f64|bf16)(_|$)|^v_(pk_)?(fma|fmac|mac|mad)_|^v_dot")


def _amdgcn_class(op: str, operands: str) -> str:
    if op.startswith(("global_load", "buffer_load", "flat_load")):
        return "async_copy" if re.search(r"(^|\s)lds(\s|$)", operands) else "global_load"
    if op.startswith(("global_store", "buffer_store", "flat_store")):
        return "global_store"
    if op.startswith(("global_atomic", "buffer_atomic", "flat_atomic")):
        return "global_atomic"
    if op.startswith("scratch_load"):
        return "local_load"
    if op.startswith("scratch_store"):
        return "local_store"
    if op.startswith(("ds_read", "ds_load")):
        return "shared_load"
    if op.startswith(("ds_write", "ds_store")):
        return "shared_store"
    if op.startswith(("ds_bpermute", "ds_permute", "ds_swizzle", "v_readlane", "v_readfirstlane", "v_writelane", "v_permlane")) or op.endswith("_dpp"):
        return "shuffle"
    if op.startswith("ds_"):
        return "shared_atomic"
    if op.startswith(("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")):
        return "tensor_core"
    if op.startswith(("s_load", "s_buffer_load")):
        return "constant"
    if op.startswith(_AMD_SPECIAL):
        return "special"
    if op.startswith(("v_cvt", "v_pack")):
        return "conversion"
    if op in ("s_barrier", "s_waitcnt", "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_inv", "s_sleep",
              "s_dcache_wb", "s_barrier_signal", "s_barrier_wait") or op.startswith("s_waitcnt"):
        return "barrier"
    if op.startswith(("s_branch", "s_cbranch", "s_endpgm", "s_setpc", "s_swappc", "s_getpc", "s_call", "s_trap")):
        return "branch"
    if op in ("s_nop",):
        return "nop"
    if op.startswith(("v_mov", "s_mov", "v_accvgpr", "s_movk", "s_cmov", "v_cndmask")):
        return "move"
    if _AMD_FP.search(op):
        return "fp"
    return "int"


def amdgcn_class(line: str) -> str | None:
    """The class of the instruction on an AMDGCN line, or None."""
    ins = amdgcn_instruction(line)
    return ins.cls if ins else None


def amdgcn_instruction(line: str) -> Instruction | None:
    """The instruction on an AMDGCN line; None for directives, labels and comments."""
    if not line[:1].isspace():
        return None
    s = line.strip()
    if not s or s[0] in ".;" or s.endswith(":") or s.startswith("//"):
        return None
    m = AMDGCN_INSTRUCTION.match(line)
    if not m:
        return None
    op = m.group(1)
    if not re.match(r"^(v|s|ds|buffer|global|flat|scratch|exp|image|tbuffer)_", op):
        return None
    return Instruction(op, _amdgcn_class(op, m.group(2) or ""), None, s.split(";", 1)[0].strip())


# ---- LLVM IR --------------------------------------------------------------------------------------------
# `  %20 = tail call { i32, i32, i32, i32 } asm sideeffect "mov.u32 $0, 0x0;\0A\09@$5 ld.global.v4.b32 ...", ...`
LLVM_ASM_STRING = re.compile(r'asm (?:sideeffect |inteldialect |alignstack )*"((?:[^"\\]|\\.)*)"')
# `  %60 = fadd float %25, %45, !dbg !21`, `  store i32 %x, ptr addrspace(3) %p`, `  br label %7`
LLVM_OP = re.compile(r"^\s+(?:%[\w.]+ = )?(?:(?:tail|musttail|notail) )?([a-z][a-z0-9_]*)\b(.*)$")
LLVM_CALLEE = re.compile(r"@(llvm\.[\w.]+|__[\w.]+)")
_LLVM_FP = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fcmp"}
_LLVM_CONV = {"sitofp", "uitofp", "fptosi", "fptoui", "fptrunc", "fpext", "inttoptr", "ptrtoint", "addrspacecast"}
_LLVM_MOVE = {"extractvalue", "insertvalue", "extractelement", "insertelement", "shufflevector", "bitcast", "phi",
              "freeze", "alloca"}
_LLVM_BRANCH = {"br", "ret", "switch", "unreachable", "indirectbr"}
_CLASS_PRIORITY = ("tma", "async_copy", "tensor_core", "global_atomic", "shared_atomic", "global_load",
                   "global_store", "shared_load", "shared_store", "local_load", "local_store", "barrier",
                   "shuffle", "special", "conversion", "fp", "int", "branch", "constant", "move", "other")


def _asm_class(asm: str) -> str:
    """The most telling class among an inline-asm string's PTX instructions."""
    best = "other"
    for part in asm.replace("\\0A", "\n").replace("\\09", " ").split("\n"):
        part = part.strip().rstrip(";")
        if not part or part.startswith(("{", "}", ".reg", "//")) or part.endswith(":"):
            continue
        ins = ptx_instruction(part.replace("$", "%"))
        if ins and _CLASS_PRIORITY.index(ins.cls) < _CLASS_PRIORITY.index(best):
            best = ins.cls
    return best


def _llvm_intrinsic_class(name: str) -> str:
    n = name.lower()
    if any(k in n for k in ("wgmma", ".mma", "mfma", "wmma", "tcgen05.mma")):
        return "tensor_core"
    if "cp.async.bulk" in n or "tma" in n:
        return "tma"
    if "cp.async" in n or "global.load.lds" in n:
        return "async_copy"
    if any(k in n for k in ("barrier", "fence", "membar", "waitcnt", "mbarrier", "sched")):
        return "barrier"
    if any(k in n for k in ("shfl", "bpermute", "permlane", "readlane", "readfirstlane", "dpp", "ballot", "vote")):
        return "shuffle"
    if "buffer.load" in n or "global.load" in n:
        return "global_load"
    if "buffer.store" in n:
        return "global_store"
    if any(k in n for k in ("ex2", "exp2", ".exp", "lg2", "log", "rcp", "sqrt", "rsq", ".sin", ".cos", "tanh")):
        return "special"
    if any(k in n for k in ("fma", "fmuladd", "maxnum", "minnum", "maximum", "minimum", "fabs", "copysign")):
        return "fp"
    if any(k in n for k in ("sreg", "read.register", "workitem", "workgroup")):
        return "move"
    if any(k in n for k in ("smax", "smin", "umax", "umin", "abs", "ctlz", "cttz", "ctpop", "fshl", "fshr")):
        return "int"
    return "other"


def llvm_class(line: str) -> str | None:
    """The class of an LLVM IR instruction line; None for anything that is not an instruction."""
    m = LLVM_OP.match(line)
    if not m or not line.startswith("  "):
        return None
    op, rest = m.group(1), m.group(2)
    if op in ("load", "store", "atomicrmw", "cmpxchg"):
        space = re.search(r"addrspace\((\d+)\)", rest)
        sp = space.group(1) if space else "0"
        kind = "load" if op == "load" else ("store" if op == "store" else "atomic")
        region = {"3": "shared", "5": "local"}.get(sp, "global")
        if region == "local" and kind == "atomic":
            region = "global"
        return f"{region}_{kind}"
    if op == "call":
        if a := LLVM_ASM_STRING.search(rest):
            return _asm_class(a.group(1))
        if c := LLVM_CALLEE.search(rest):
            return _llvm_intrinsic_class(c.group(1))
        return "branch"
    if op in _LLVM_FP:
        return "fp"
    if op in _LLVM_CONV:
        return "conversion"
    if op in _LLVM_MOVE:
        return "move"
    if op in _LLVM_BRANCH:
        return "branch"
    if op == "select":
        return "fp" if re.match(r"\s*i1 [^,]+, (?:<\d+ x )?(float|half|bfloat|double)", rest) else "int"
    if op in ("fence",):
        return "barrier"
    return "int"


# ---- MLIR (TTIR, TTGIR) ----------------------------------------------------------------------------------
# `    %x_6 = tt.load %x_5, %mask_4 : tensor<1024x!tt.ptr<f32>> loc(#loc21)`, `    tt.store %1, %2 ...`,
# `      %acc_23:3 = ttng.warp_group_dot_wait ...`, `    %0:2 = "tt.reduce"(%x) <{axis = 0 : i32}> ({`
MLIR_OP = re.compile(r'^\s*(?:%[\w#:,\s%]+?\s=\s)?"?([a-z_][\w]*\.[\w.]+)"?')
_MLIR_CLASS = {
    "tt.load": "global_load", "tt.store": "global_store", "tt.atomic_rmw": "global_atomic",
    "tt.atomic_cas": "global_atomic", "tt.descriptor_load": "global_load", "tt.descriptor_store": "global_store",
    "tt.descriptor_gather": "global_load", "tt.descriptor_scatter": "global_store",
    "tt.descriptor_reduce": "global_atomic",
    "ttg.async_copy_global_to_local": "async_copy", "amdgpu.buffer_load_to_local": "async_copy",
    "ttng.async_tma_copy_global_to_local": "tma", "ttng.async_tma_copy_local_to_global": "tma",
    "ttng.async_tma_gather": "tma", "ttng.async_tma_scatter": "tma", "ttng.async_tma_reduce": "tma",
    "ttg.local_load": "shared_load", "ttg.local_store": "shared_store", "ttng.tmem_load": "tensor_core",
    "ttng.tmem_store": "tensor_core", "amdgpu.buffer_load": "global_load", "amdgpu.buffer_store": "global_store",
    "amdgpu.buffer_atomic_rmw": "global_atomic",
    "tt.dot": "tensor_core", "tt.dot_scaled": "tensor_core", "ttng.warp_group_dot": "tensor_core",
    "ttng.tc_gen5_mma": "tensor_core", "ttng.tc_gen5_mma_scaled": "tensor_core",
    "ttg.convert_layout": "layout",
    "tt.reduce": "reduce", "tt.scan": "reduce", "tt.reduce.return": "reduce", "tt.scan.return": "reduce",
    "arith.constant": "constant",
    "tt.extern_elementwise": "special", "tt.precise_sqrt": "special", "tt.precise_divf": "fp",
    "tt.fp_to_fp": "conversion", "tt.bitcast": "move", "tt.addptr": "int", "tt.int_to_ptr": "conversion",
    "tt.ptr_to_int": "conversion", "tt.mulhiui": "int", "tt.clampf": "fp",
    "tt.return": "branch", "tt.call": "branch", "scf.for": "branch", "scf.if": "branch", "scf.while": "branch",
    "scf.yield": "branch", "scf.condition": "branch", "tt.get_program_id": "move", "tt.get_num_programs": "move",
    "gpu.barrier": "barrier", "ttg.barrier": "barrier",
}
# The result encoding of a TTGIR dot: `-> tensor<128x64xf32, #mma>` (tensor cores) or `#blocked` (FMA)
MLIR_DOT_RESULT = re.compile(r"-> tensor<[^,>]+, (#[\w.]+)")
_MLIR_SHAPE = {"tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.make_range", "tt.trans", "tt.join",
               "tt.split", "tt.cat", "tt.histogram", "tt.gather", "ttg.memdesc_index", "ttg.memdesc_subview",
               "ttg.memdesc_trans", "ttg.memdesc_reshape", "ttg.memdesc_subslice", "ttg.memdesc_reinterpret",
               "tt.unsplat"}


def mlir_class(op: str, line: str = "") -> str:
    """The class of a TTIR/TTGIR op by name (`tt.dot` in TTGIR counts as `fp` when its result has
    no mma encoding: the FMA fallback)."""
    if op in _MLIR_CLASS:
        cls = _MLIR_CLASS[op]
        if op == "tt.dot" and (r := MLIR_DOT_RESULT.search(line)) and "mma" not in r.group(1) and "wmma" not in r.group(1):
            return "fp"
        return cls
    if op in _MLIR_SHAPE:
        return "shape"
    if op == "ttg.local_alloc":
        return "shared_store" if re.search(r"local_alloc %", line) else "other"
    dialect, _, name = op.partition(".")
    if dialect == "math":
        return "fp" if name in ("fma", "absf", "copysign", "floor", "ceil", "round", "trunc", "fpowi") else "special"
    if dialect == "arith":
        if name in ("extf", "truncf", "sitofp", "uitofp", "fptosi", "fptoui", "bitcast", "scaling_extf",
                    "scaling_truncf"):
            return "conversion"
        if name.endswith("f") or name in ("maxnumf", "minnumf", "maximumf", "minimumf", "cmpf", "negf"):
            return "fp"
        return "int"
    if dialect in ("scf", "cf"):
        return "branch"
    if any(k in op for k in ("barrier", "fence", "wait", "commit_group", "arrive", "expect")):
        return "barrier"
    return "other"


def mlir_op(line: str) -> str | None:
    """The op name on a TTIR/TTGIR line, or None."""
    m = MLIR_OP.match(line)
    return m.group(1) if m else None
