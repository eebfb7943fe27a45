"""Made-up calls that Triton and the wrapper correct. A pointer's dtype follows Triton's own type
errors (inspector/worker/retyping.py): each fixture kernel uses one pointer's data in a way fp32
cannot be, and must compile from its signature alone with the dtype the error and the code name; a
user's own call is never changed. A wrapper's arguments follow its own checks
(inspector/worker/wrapper_repairs.py)."""

from __future__ import annotations

import re

import pytest

from inspector.compile.api import inspect_kernel
from paths import REPO

FIXTURES = REPO / "tests" / "fixtures" / "made_up_dtypes"

# file -> (constexprs, the parameter Triton refused as fp32/fp16, the pointer type it compiles with)
CASES = {
    "moe_count.py": ({"BLOCK": "128", "NUM_EXPERTS": "8"}, "topk_ids_ptr", "*i32"),
    "ptr_table.py": ({"BLOCK": "128"}, "row_ptrs_ptr", "*i64"),
    "u8_assert.py": ({"BLOCK": "128"}, "packed_ptr", "*u8"),
    "fp8_bytes.py": ({"BLOCK": "128"}, "q_ptr", "*fp8e4nv"),
    "dot_mixed.py": ({"BLOCK": "32"}, "a_ptr", "*bf16"),
    "int8_dot.py": ({"BLOCK_M": "32", "BLOCK_N": "32", "BLOCK_K": "32"}, "a_ptr", "*i8"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_type_error_retypes_the_pointers_that_reach_it(name, sandbox):
    consts, pointer, compiled_as = CASES[name]
    rec = inspect_kernel(FIXTURES / name, target="sm_90", consts=consts, sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.call_origin == "signature"
    types = {p.name: p.type for p in rec.parameters}
    assert types[pointer] == compiled_as, types
    note = next(line for line in rec.log.splitlines() if "from Triton's own type errors" in line)
    assert f"{pointer}" in note and "Triton stopped at line" in note, note
    if name == "int8_dot.py":  # both tiles, not the ids that only pick their rows
        assert types["b_ptr"] == "*i8" and types["row_ids_ptr"] != "*i8", types


def test_indices_read_as_a_pair_and_split_make_their_pointer_an_index_pointer(sandbox):
    """`start, end = tl.load(ranges + 2 * i + tl.arange(0, 2)).split()`: each half is loaded data, so
    the pointer whose loads give the next load's offsets holds integers (as fp32 it stopped at the
    load that adds them to a pointer, and the other pointer was retyped instead)."""
    rec = inspect_kernel(FIXTURES / "split_ranges.py", target="sm_90", consts={"BLOCK": "64"}, sandbox=sandbox,
                         use_cache=False, defer=("sass",))
    assert rec.error is None, rec.error and rec.error.short()
    types = {p.name: p.type for p in rec.parameters}
    assert types["ranges_ptr"] in ("*i32", "*i64") and types["values_ptr"] == "*fp32", types


def test_the_users_own_call_is_compiled_as_given(sandbox):
    rec = inspect_kernel(FIXTURES / "example_call.py", target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.call_origin == "example"
    assert rec.error is not None and "Must be uint8" in rec.error.message, rec.error
    assert "type errors" not in rec.log


def test_an_error_not_about_types_is_not_retried(tmp_path, sandbox):
    path = tmp_path / "shape.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, BLOCK: tl.constexpr):\n"
        "    x = tl.load(x_ptr + tl.arange(0, BLOCK))\n"
        "    tl.store(x_ptr + tl.arange(0, 2 * BLOCK), x)\n")
    rec = inspect_kernel(path, target="sm_90", consts={"BLOCK": "64"}, sandbox=sandbox, use_cache=False)
    assert rec.error is not None
    assert "type errors" not in rec.log


def test_the_oldest_supported_release_is_retyped_from_its_own_words():
    """Triton 3.6 words its errors differently ("histogram only supports integer input")."""
    from side_releases import missing, ready

    if not ready("3.6.0"):
        missing("Triton 3.6.0's side environment is not installed (python -m inspector versions add 3.6.0)")
    consts, pointer, compiled_as = CASES["moe_count.py"]
    rec = inspect_kernel(FIXTURES / "moe_count.py", target="sm_90", consts=consts, triton="3.6.0", use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert {p.name: p.type for p in rec.parameters}[pointer] == compiled_as
    assert "histogram only supports integer input" in rec.log


# colossalai's flash decoding, reduced: a block pointer whose shape is a length loaded from a table
BLOCK_POINTER_FROM_A_LOADED_LENGTH = """import triton
import triton.language as tl


@triton.jit
def decode(V, lengths, out, stride_v, q_len, HEAD: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    seq = token // q_len
    length = tl.load(lengths + seq) + (token % q_len) - q_len + 1
    start = tl.program_id(1)
    if start * BLOCK >= length:
        return
    rows = tl.where((start + 1) * BLOCK <= length, BLOCK, length - start * BLOCK)
    v_ptr = tl.make_block_ptr(base=V, shape=(rows, HEAD), strides=(stride_v, 1), offsets=(0, 0),
                              block_shape=(BLOCK, HEAD), order=(1, 0))
    v = tl.load(v_ptr)
    tl.store(out + tl.arange(0, HEAD), tl.sum(v, 0))
"""


def test_a_block_pointer_removed_from_the_release_opens_in_the_side_release_with_its_lengths_retyped(
        tmp_path, sandbox):
    """Triton 3.9 removed block pointers: its refusal ("Block pointers have been removed in favor
    of...") names a pointer but no dtype brings them back, so no retyping is tried there; the
    side release compiles the made-up call, whose float32 length ("Expected an integer scalar type
    in shape/strides/offsets") becomes an integer, the block's base staying float32."""
    from side_releases import missing, ready

    if not ready("3.6.0"):
        missing("Triton 3.6.0's side environment is not installed (python -m inspector versions add 3.6.0)")
    rec = _opened(tmp_path / "decode.py", BLOCK_POINTER_FROM_A_LOADED_LENGTH, "sm_90", sandbox)
    assert rec.triton_version == "3.6.0"
    types = {p.name: p.type for p in rec.parameters}
    assert types["lengths"] in ("*i32", "*i64") and types["V"] == "*fp32", types
    if rec.refused_by:  # the installed release refused it (3.9 and later) for what it removed
        assert "Block pointers have been removed" in rec.refused_by["message"], rec.refused_by


# A grouped-scale GEMM as AWQ and a16w4 wrappers write it: the group (a `tl.dot` side) is a ratio of
# two tensors' dimensions, which made-up shapes make 1 to 4 where real ones make 128
GROUP_FROM_A_RATIO_OF_SHAPES = """
import torch
import triton
import triton.language as tl


@triton.jit
def grouped_mm(a_ptr, w_ptr, s_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               GROUP: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, GROUP)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for g in range(0, K // GROUP):
        a = tl.load(a_ptr + rm[:, None] * K + g * GROUP + rk[None, :])
        w = tl.load(w_ptr + (g * GROUP + rk[:, None]) * N + rn[None, :])
        s = tl.load(s_ptr + g * N + rn)
        acc += tl.dot(a, w) * s[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def grouped_matmul(a, w, scales):
    M, K = a.shape
    N = w.shape[1]
    group = K // scales.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    grouped_mm[grid](a, w, scales, c, M, N, K, BLOCK_M=64, BLOCK_N=64, GROUP=group)
    return c
"""


def test_a_dot_side_the_wrapper_derives_from_made_up_shapes_is_raised_to_the_least_triton_takes(tmp_path, sandbox):
    """`group = K // scales.shape[0]` is 1 to 4 for every made-up shape family (a ratio survives halving
    every dimension; halving one tensor's shows it follows the shapes): `tl.dot` refuses so small
    a side, so that side alone is raised to the least Triton names, and the wrapper's own tiles stay."""
    rec = _opened(tmp_path / "grouped.py", GROUP_FROM_A_RATIO_OF_SHAPES, "sm_90", sandbox)
    assert rec.call_origin == "grouped_matmul"
    values = {p.name: p.value for p in rec.parameters}
    assert values["GROUP"] in (8, 16) and values["BLOCK_M"] == 64 and values["BLOCK_N"] == 64, values
    note = next(line for line in rec.log.splitlines() if "from Triton's own type errors" in line)
    assert re.search(r"GROUP: \d+ \(the wrapper computed [1-4] from made-up shapes\)", note), note


# Attention scores through a helper whose dot asks for fp32's full precision (adasplash writes
# `input_precision="ieee"` on every dot, its inputs bf16 in real use)
IEEE_DOT_IN_A_HELPER = """
import torch
import triton
import triton.language as tl


@triton.jit
def scores(q, k):
    return tl.dot(q, tl.trans(k), input_precision="ieee")


@triton.jit
def row_max_kernel(Q, K, OUT, stride, BLOCK: tl.constexpr, D: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, D)
    q = tl.load(Q + rows[:, None] * stride + cols[None, :])
    k = tl.load(K + rows[:, None] * stride + cols[None, :])
    tl.store(OUT + rows, tl.max(scores(q, k), 1))


def row_max(q, k):
    out = torch.empty(q.shape[0], device=q.device, dtype=torch.float32)
    row_max_kernel[(q.shape[0] // 64,)](q, k, out, q.stride(0), BLOCK=64, D=q.shape[1])
    return out
"""


def test_a_made_up_wrapper_call_gives_an_ieee_dot_half_precision_first(tmp_path, sandbox):
    """fp32 tiles in a full-precision dot compile to FMA loops (adasplash's took over 4 GiB and
    minutes); the wrapper's made-up tensors are bf16 first for such a kernel, its dot in a helper."""
    rec = _opened(tmp_path / "row_max.py", IEEE_DOT_IN_A_HELPER, "sm_90", sandbox)
    assert rec.call_origin == "row_max"
    types = {p.name: p.type for p in rec.parameters}
    assert types["Q"] == "*bf16" and types["K"] == "*bf16", types


# A GEMM wrapper with one fixed tile: 128 x 128 x 64 in three stages needs 128 KiB of fp32 tiles,
# twice what gfx942 has per block, and 64 KiB of bf16 ones
FIXED_TILE_GEMM = """
import torch
import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + k + rk[None, :])
        b = tl.load(b_ptr + (k + rk[:, None]) * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
    mm_kernel[grid](a, b, c, M, N, K, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_stages=3)
    return c
"""


def test_a_made_up_call_over_the_shared_memory_with_fp32_tiles_takes_half_precision(tmp_path, sandbox):
    """The wrapper's own tile stays (it is what a real launch asks); the made-up float32 tensors,
    the tool's guess, become bfloat16, and the log says what fp32 needed."""
    rec = _opened(tmp_path / "mm.py", FIXED_TILE_GEMM, "gfx942", sandbox)
    values = {p.name: p.value for p in rec.parameters}
    types = {p.name: p.type for p in rec.parameters}
    assert (values["BLOCK_M"], values["BLOCK_N"], values["BLOCK_K"]) == (128, 128, 64), values
    assert types["a_ptr"] == "*bf16" and types["b_ptr"] == "*bf16", types
    assert rec.resources.shared_bytes <= 65536
    assert "with float32, the kernel needed 131072 B of shared memory" in rec.log, rec.log
    assert "warning: with float32 data (a_ptr, b_ptr, c_ptr) this launch needs 131072 B" in rec.log, rec.log


# A wrapper number passed both as a run-time bound and as a block side (fairchem's `channels`)
CHANNELS_AS_BLOCK = """
import torch
import triton
import triton.language as tl


@triton.jit
def channel_sum_kernel(x_ptr, out_ptr, C, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    x = tl.load(x_ptr + row * C + c, mask=c < C, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, 0))


def channel_sum(x, channels):
    out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
    channel_sum_kernel[(x.shape[0],)](x, out, channels, BLOCK_C=channels)
    return out
"""


def test_a_wrapper_number_the_kernel_takes_as_a_block_side_is_made_up_as_one(tmp_path, sandbox):
    """`kernel[grid](x, out, channels, BLOCK_C=channels)`: a block side, whatever else it is passed
    as, is made up as a block (64), not as a count of 1 (a one-wide block) or a flag's 0 (an empty
    `tl.arange`, which no shape family gets past)."""
    rec = _opened(tmp_path / "chan.py", CHANNELS_AS_BLOCK, "sm_90", sandbox)
    values = {p.name: p.value for p in rec.parameters}
    assert rec.call_origin == "channel_sum" and values["BLOCK_C"] == values["C"] == 64, values


def test_a_wrapper_that_checks_its_inputs_gets_arguments_its_checks_accept(sandbox):
    """`masked_bias_add` refuses a made-up call four ways before it launches (one-element integer
    count, a 2-D x, a bias the width of x, an eager path below 64 rows): its own checks say what
    to change, and the launch is the wrapper's, with the values it computed."""
    path = REPO / "tests" / "fixtures" / "kernel_file_forms" / "checked_wrapper.py"
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.call_origin == "masked_bias_add"
    values = {p.name: p.value for p in rec.parameters}
    assert values["count_ptr"].startswith("int64 tensor [1]"), values
    assert rec.grid[0] >= 64 and values["BLOCK"] >= values["n_cols"]


def test_a_bare_kernels_missing_values_are_offered_checked(tmp_path, sandbox):
    """Nothing launches it: the error offers a value for each missing constexpr from how the code
    uses it (`dtype=ACC_TYPE` a dtype, `ACTIVATION == "relu"` a string, `static_range(W)` small),
    and compiles with them first (inspector/worker/suggestions.py), changing the one a refusal
    names (`tl.static_assert(GROUPS == 1)`) until they compile."""
    path = tmp_path / "bare.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr, ACC_TYPE: tl.constexpr, ACTIVATION: tl.constexpr,\n"
        "      W: tl.constexpr, GROUPS: tl.constexpr):\n"
        "    tl.static_assert(GROUPS == 1, 'one group only')\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    acc = tl.zeros((BLOCK,), dtype=ACC_TYPE)\n"
        "    for i in tl.static_range(W):\n"
        "        acc += tl.load(x_ptr + offs * W + i, mask=offs < n, other=0.0).to(ACC_TYPE)\n"
        "    if ACTIVATION == 'relu':\n"
        "        acc = tl.maximum(acc, 0.0)\n"
        "    tl.store(out_ptr + offs, acc, mask=offs < n)\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False, make_up=False)
    assert rec.error is not None and rec.error.kind == "missing_constexpr"
    offered = {m["name"]: m["suggested"] for m in rec.error.details["missing"]}
    assert offered["ACC_TYPE"] == "float32" and offered["ACTIVATION"] == "relu" and offered["W"] == "4", offered
    assert offered["GROUPS"] == "1" and rec.error.details["checked"] is True, rec.error.details
    assert "The values offered compile (checked)" in rec.error.message
    again = inspect_kernel(path, target="sm_90", consts=offered, sandbox=sandbox, use_cache=False)
    assert again.error is None, again.error and again.error.short()
    # by default the kernel opens with those values, the record naming each as made up
    opened = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert opened.error is None and {m["name"]: m["suggested"] for m in opened.made_up} == offered
    assert opened.stages["ptx"] == again.stages["ptx"]


def test_a_made_up_size_too_large_for_a_block_is_shrunk_until_it_compiles(tmp_path, sandbox):
    """Three sizes that multiply into one block (aqlm's codebook gemv): as offered (256 each), the
    block is 16M elements, over Triton's limit, and shrunk only under that limit it compiled for
    minutes: the largest is halved before any compile until the block is about 64K elements
    (`suggestions.fitted`)."""
    path = tmp_path / "codes.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, out_ptr, in_group_size: tl.constexpr, out_group_size: tl.constexpr,\n"
        "      codebook_size: tl.constexpr):\n"
        "    i = tl.arange(0, in_group_size)[:, None, None]\n"
        "    o = tl.arange(0, out_group_size)[None, :, None]\n"
        "    c = tl.arange(0, codebook_size)[None, None, :]\n"
        "    v = tl.load(x_ptr + (i * out_group_size + o) * codebook_size + c)\n"
        "    tl.store(out_ptr + tl.arange(0, in_group_size), tl.sum(tl.sum(v, axis=2), axis=1))\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    sizes = {m["name"]: int(m["suggested"]) for m in rec.made_up}
    assert sizes["in_group_size"] * sizes["out_group_size"] * sizes["codebook_size"] <= 2 ** 16, sizes
    assert min(sizes.values()) >= 16, sizes


def test_numbers_and_packed_words_reach_a_kernel_through_forward_and_its_wrapper(sandbox):
    """`forward` hands its parameters to the wrapper that launches: their roles come through that
    call (`bits`, `maxq` numbers; `qweight` int32 words), and the kernel compiles as written."""
    rec = inspect_kernel(FIXTURES / "packed_bits.py", target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    params = {p.name: p for p in rec.parameters}
    assert params["w_ptr"].type == "*i32" and params["bits"].kind == "scalar" and params["maxq"].kind == "scalar"


def test_a_tensor_in_arithmetic_no_pointer_takes_becomes_a_number(tmp_path, sandbox):
    """A wrapper that launches with `*args` computed (not one literal that
    `wrapper_source.launch_arguments` opens up) hides each argument's role, so its made-up `bits` and
    `maxq` are tensors; `32 // bits` on a pointer is refused ("invalid operands of type
    pointer<fp32> and int32"): each becomes a number, and the packed words int32 after that."""
    path = tmp_path / "star.py"
    text = (FIXTURES / "packed_bits.py").read_text()
    path.write_text(text[:text.index("def dequant_matvec(")] + (
        "def dequant_star(x, qweight, scales, bits, maxq):\n"
        "    K, N = x.shape[0], qweight.shape[1]\n"
        "    out = torch.empty(N, device=x.device, dtype=torch.float32)\n"
        "    args = (x, qweight, scales, out) + (K, N, bits, maxq)\n"
        "    dequant_matvec_kernel[(triton.cdiv(N, 64),)](*args, BLOCK_K=32, BLOCK_N=64)\n"
        "    return out\n"))
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    note = next((line for line in rec.log.splitlines() if "from Triton's own type errors" in line), "")
    assert rec.error is None, (rec.error and rec.error.short(), note)
    assert "bits: a number, 1" in note and "maxq: a number, 1" in note, note
    params = {p.name: p for p in rec.parameters}
    assert params["bits"].kind == "scalar" and params["w_ptr"].type == "*i32", params


def test_a_tensor_the_wrapper_takes_the_len_of_stays_a_tensor_when_the_kernel_loads_from_it(tmp_path, sandbox):
    """`nnz = len(row_indices)` reads like a shape list (`normalized_shape`), but the kernel loads
    block rows from it (a block-sparse matmul, as in stanford-stk): an index tensor, not [4096]."""
    path = tmp_path / "sparse_rows.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def gather_rows_kernel(x_ptr, out_ptr, row_indices, N, BLOCK: tl.constexpr):\n"
        "    pid = tl.program_id(0)\n"
        "    row = tl.load(row_indices + pid)\n"
        "    cols = tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + pid * N + cols, tl.load(x_ptr + row * N + cols, mask=cols < N), mask=cols < N)\n\n\n"
        "def gather_rows(x, row_indices):\n"
        "    nnz = len(row_indices)\n"
        "    out = torch.empty((nnz, x.shape[1]), device=x.device, dtype=x.dtype)\n"
        "    gather_rows_kernel[(nnz,)](x, out, row_indices, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))\n"
        "    return out\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert {p.name: p.type for p in rec.parameters}["row_indices"] == "*i64"


def test_a_size_read_from_a_made_up_tensors_values_is_a_made_up_count(tmp_path, sandbox):
    """`torch.empty((cu_seqlens[-1], heads))` (varlen attention's output, as in SageAttention):
    torch's own parser asks the meta tensor for its value, which it does not have; the made-up
    call reads it as a count instead of stopping."""
    path = tmp_path / "varlen.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def scale_rows_kernel(x_ptr, out_ptr, cu_seqlens, H: tl.constexpr):\n"
        "    row = tl.program_id(0)\n"
        "    start = tl.load(cu_seqlens + row)\n"
        "    h = tl.arange(0, H)\n"
        "    tl.store(out_ptr + row * H + h, tl.load(x_ptr + start * H + h) * 2.0)\n\n\n"
        "def scale_rows(x, cu_seqlens):\n"
        "    heads = x.shape[-1]\n"
        "    out = torch.empty((cu_seqlens[-1], heads), device=x.device, dtype=x.dtype)\n"
        "    scale_rows_kernel[(cu_seqlens.shape[0] - 1,)](x, out, cu_seqlens, H=heads)\n"
        "    return out\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.call_origin not in ("", "signature"), rec.call_origin  # the wrapper launched it


def test_packed_words_unpacked_two_helpers_down_are_retyped(tmp_path, sandbox):
    """lmdeploy's AWQ kernel loads packed words and unpacks them in a helper that calls another
    (`_unpack_weight` -> `_dequant_s4_to_f16x2`: `weight >> 8`): Triton's refusal is two calls
    down, where no parameter is the kernel's; the pointers whose loads reach the kernel's own call
    of the chain are retyped (`retyping.TypeClash.outer`)."""
    path = tmp_path / "packed.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef _shift(w, by: tl.constexpr):\n    return (w >> by) & 0xF\n\n\n"
        "@triton.jit\ndef _unpack(w):\n    return _shift(w, 4) + _shift(w, 0)\n\n\n"
        "@triton.jit\ndef k(qw_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    qw = tl.load(qw_ptr + offs, mask=offs < n)\n"
        "    tl.store(out_ptr + offs, _unpack(qw).to(tl.float16), mask=offs < n)\n\n\n"
        "def unpack(qweight):\n"
        "    out = torch.empty(qweight.shape, dtype=torch.float16, device=qweight.device)\n"
        "    k[(1,)](qweight, out, qweight.numel(), BLOCK=1024)\n"
        "    return out\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert {p.name: p.type for p in rec.parameters}["qw_ptr"] in ("*i32", "*i64", "*i16", "*i8"), rec.parameters
    assert "qw_ptr" in rec.log


def test_a_made_up_zero_triton_divides_by_is_made_nonzero(tmp_path, sandbox):
    """auto-round's dequant wrapper hands its made-up `bits` to the kernel, where `32 // bits`
    was a division by zero: a made-up 0 that Triton divides by becomes a number it can."""
    path = tmp_path / "dequant.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef k(q_ptr, out_ptr, n, maxq: tl.constexpr, bits: tl.constexpr, BLOCK: tl.constexpr):\n"
        "    per_word: tl.constexpr = 32 // bits\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    w = tl.load(q_ptr + offs // per_word, mask=offs < n)\n"
        "    tl.store(out_ptr + offs, ((w >> ((offs % per_word) * bits)) & maxq).to(tl.float16), mask=offs < n)\n\n\n"
        "def dequant(qweight, bits, maxq=None):\n"
        "    maxq = 2**bits - 1 if maxq is None else maxq\n"
        "    out = torch.empty(qweight.numel() * 8, dtype=torch.float16, device=qweight.device)\n"
        "    k[(1,)](qweight, out, out.numel(), maxq=maxq, bits=bits, BLOCK=1024)\n"
        "    return out\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert {p.name: p.value for p in rec.parameters}["bits"] != 0


def test_a_made_up_size_that_makes_a_block_too_large_shrinks(tmp_path, sandbox):
    """auto-round's Hadamard kernel: the wrapper passes `x.shape[-1]` (a made-up 4096) as both
    sides of a matrix block, over Triton's element limit ("numel ... exceeds"): that size shrinks
    so the block is about 64K elements, and the note says so."""
    path = tmp_path / "hadamard.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef k(x_ptr, h_ptr, out_ptr, dim: tl.constexpr):\n"
        "    offs = tl.arange(0, dim)\n"
        "    h = tl.load(h_ptr + offs[:, None] * dim + offs[None, :])\n"
        "    x = tl.load(x_ptr + tl.program_id(0) * dim + offs)\n"
        "    tl.store(out_ptr + tl.program_id(0) * dim + offs, tl.sum(h * x[None, :], axis=1))\n\n\n"
        "def rotate(x, hadamard):\n"
        "    out = torch.empty_like(x)\n"
        "    k[(x.shape[0],)](x, hadamard, out, dim=x.shape[-1])\n"
        "    return out\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    dim = {p.name: p.value for p in rec.parameters}["dim"]
    assert 16 <= dim and dim * dim <= 1 << 16, dim
    assert "a block over Triton's limit" in rec.log


def test_a_wrapper_whose_made_up_shapes_broadcast_to_a_huge_block_is_called_smaller(tmp_path, sandbox):
    """aqlm's gemv: the wrapper derives four block sides from made-up shapes (groups, codebooks,
    out group, in group) that the kernel broadcasts into one 4-D block, 4096 x 2 x 256 x 128 in the
    first shape family and no smaller in the others: it compiled for over 5 minutes. The block's
    four largest sides count (`made_up_sizes.block_rank`), and the wrapper is called again with
    the largest made-up dimensions smaller until the block is about 64K elements."""
    path = tmp_path / "gemv.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef k(x_ptr, codes_ptr, books_ptr, out_ptr, G: tl.constexpr, C: tl.constexpr,\n"
        "      O: tl.constexpr, I: tl.constexpr):\n"
        "    g = tl.arange(0, G)[:, None, None, None]\n"
        "    c = tl.arange(0, C)[None, :, None, None]\n"
        "    o = tl.arange(0, O)[None, None, :, None]\n"
        "    i = tl.arange(0, I)[None, None, None, :]\n"
        "    code = tl.load(codes_ptr + g * C + c)\n"
        "    w = tl.load(books_ptr + code * O * I + o * I + i)\n"
        "    x = tl.load(x_ptr + g * I + i)\n"
        "    tl.store(out_ptr + tl.program_id(0), tl.sum(w * x))\n\n\n"
        "def gemv(x, codes, codebooks):\n"
        "    C, size, O, I = codebooks.shape\n"
        "    out = torch.empty(codes.shape[0], device=x.device, dtype=x.dtype)\n"
        "    k[(codes.shape[0],)](x, codes, codebooks, out, codes.shape[1], C, O, I)\n"
        "    return out\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False, timeout=120)
    assert rec.error is None, rec.error and rec.error.short()
    sides = {p.name: p.value for p in rec.parameters if p.name in "GCOI"}
    assert sides["G"] * sides["C"] * sides["O"] * sides["I"] <= 1 << 16, sides
    assert min(sides.values()) >= 1 and max(sides.values()) >= 16, sides


def test_a_made_up_call_over_the_targets_shared_memory_is_made_smaller(tmp_path, sandbox):
    """lmdeploy's index kernel: the wrapper's made-up shapes give `tl.dot` tiles of 256 heads by a
    128-wide head by a 256-long block, in fp32 262,144 B of shared memory, over sm_90's 232,448
    and gfx942's 65,536: a real call never asks that. The made-up extents shrink until the kernel
    fits the target (`retyping.sizes_for_shared`), and the log names each change."""
    path = tmp_path / "index.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef k(q_ptr, k_ptr, out_ptr, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr,\n"
        "      BLOCK_D: tl.constexpr):\n"
        "    h = tl.arange(0, BLOCK_H)\n    n = tl.arange(0, BLOCK_N)\n    d = tl.arange(0, BLOCK_D)\n"
        "    q = tl.load(q_ptr + h[:, None] * BLOCK_D + d[None, :])\n"
        "    kk = tl.load(k_ptr + d[:, None] + n[None, :] * BLOCK_D)\n"
        "    tl.store(out_ptr + h[:, None] * BLOCK_N + n[None, :], tl.dot(q, kk))\n\n\n"
        "def index(q, k_cache):\n"
        "    assert q.dim() == 3 and k_cache.dim() == 3\n"
        "    _, heads, dim = q.shape\n"
        "    out = q.new_empty((heads, k_cache.size(1)))\n"
        "    k[(1,)](q, k_cache, out, BLOCK_H=heads, BLOCK_N=k_cache.size(1), BLOCK_D=dim)\n"
        "    return out\n")
    for target, limit in (("sm_90", 232448), ("gfx942", 65536)):
        rec = inspect_kernel(path, target=target, sandbox=sandbox, use_cache=False)
        assert rec.error is None, rec.error and rec.error.short()
        assert 0 < rec.resources.shared_bytes <= limit, (target, rec.resources.shared_bytes)
        assert "over the" in rec.log and "B a block may have" in rec.log, rec.log


def test_a_wrappers_own_tile_over_the_targets_shared_memory_is_reported_not_shrunk(tmp_path, sandbox):
    """The same kernel, its wrapper choosing the tile itself (`BLOCK_H=256`, not a made-up shape):
    what a real launch would ask, so on gfx942 the error is reported as a launch would raise it
    (`made_up_sizes.mark_derived` tells the two apart by calling the wrapper with other shapes),
    once even half-precision data (the made-up dtype's other guess) leaves it over."""
    path = tmp_path / "fixed.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef k(q_ptr, k_ptr, out_ptr, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr,\n"
        "      BLOCK_D: tl.constexpr):\n"
        "    h = tl.arange(0, BLOCK_H)\n    n = tl.arange(0, BLOCK_N)\n    d = tl.arange(0, BLOCK_D)\n"
        "    q = tl.load(q_ptr + h[:, None] * BLOCK_D + d[None, :])\n"
        "    kk = tl.load(k_ptr + d[:, None] + n[None, :] * BLOCK_D)\n"
        "    tl.store(out_ptr + h[:, None] * BLOCK_N + n[None, :], tl.dot(q, kk))\n\n\n"
        "def index(q, k_cache):\n"
        "    out = q.new_empty((256, 512))\n"
        "    k[(q.shape[0],)](q, k_cache, out, BLOCK_H=256, BLOCK_N=512, BLOCK_D=128)\n"
        "    return out\n")
    rec = inspect_kernel(path, target="gfx942", sandbox=sandbox, use_cache=False)
    assert rec.error is not None and rec.error.kind == "out_of_resources", rec.error and rec.error.short()
    assert {p.name: p.value for p in rec.parameters}["BLOCK_H"] == 256


def test_a_tensor_given_to_a_constexpr_does_not_break_the_made_up_call(tmp_path, sandbox):
    """modelopt's attention `forward` passes made-up tensors where the kernel takes constexprs:
    telling which constexprs follow the shapes compares values, and a tensor compared with `!=` is
    an elementwise op that raised ("Attempting to broadcast", reported as the file's own error).
    The compile is reached and reports what Triton says."""
    path = tmp_path / "odd.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef k(x_ptr, MODE: tl.constexpr, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)\n\n\n"
        "def double(x, scale):\n"
        "    k[(1,)](x, scale * x, BLOCK=x.shape[-1])\n"
        "    return x\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None or rec.error.kind != "example", rec.error.short()


def test_a_bare_kernel_takes_the_values_its_code_says(tmp_path, sandbox):
    """transformer-engine's mHC projection: nothing in the file launches it, and its code says what
    some constexprs are. `input_precision=precision` takes a string Triton knows (a flag `True`
    was offered and refused), `tl.assume(BLOCK_N == 32)` and `tl.assume(stride_k == 1)` give
    their values, which outrank what a name or an arange suggests; `if bits == 3:` is a branch,
    and taking it made gptqmodel's dequant kernel refuse the made-up sizes."""
    path = tmp_path / "proj.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, w_ptr, out_ptr, stride_k: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,\n"
        "      precision: tl.constexpr, bits: tl.constexpr):\n"
        "    tl.assume(stride_k == 1)\n    tl.assume(BLOCK_N == 32)\n"
        "    if bits == 3:\n        tl.static_assert(BLOCK_M % 3 == 0, 'three-bit words')\n"
        "    m = tl.arange(0, BLOCK_M)\n    n = tl.arange(0, BLOCK_N)\n    kk = tl.arange(0, 32)\n"
        "    x = tl.load(x_ptr + m[:, None] * 32 + kk[None, :] * stride_k)\n"
        "    w = tl.load(w_ptr + kk[:, None] * BLOCK_N + n[None, :])\n"
        "    tl.store(out_ptr + m[:, None] * BLOCK_N + n[None, :], tl.dot(x, w, input_precision=precision))\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    made = {m["name"]: m["suggested"] for m in rec.made_up}
    assert made["precision"] == "ieee" and made["BLOCK_N"] == "32" and made["stride_k"] == "1", made
    assert made["bits"] != "3", made  # a branch on a value (gptqmodel's `if bits == 3:`) is not what it is


def test_a_wrappers_typed_tensor_annotations_give_the_made_up_dtypes(tmp_path, sandbox):
    """lmdeploy's rejection sampler annotates its token tensors `torch.LongTensor`: the made-up
    call passes int64 tensors there (fp32 made `draft_ptr + ... ` fail inside a loop, where no
    retyping reached), and fp16 where `torch.HalfTensor` says so."""
    path = tmp_path / "typed.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef k(ids_ptr, scores_ptr, out_ptr, n):\n"
        "    i = tl.program_id(0)\n"
        "    tl.store(out_ptr + i, tl.load(scores_ptr + i) + tl.load(ids_ptr + i))\n\n\n"
        "def gather(ids: torch.LongTensor, scores: torch.HalfTensor) -> torch.Tensor:\n"
        "    out = torch.empty_like(scores)\n"
        "    k[(ids.numel(),)](ids, scores, out, ids.numel())\n"
        "    return out\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    types = {p.name: p.type for p in rec.parameters}
    assert types["ids_ptr"] == "*i64" and types["scores_ptr"] == "*fp16", types


def test_a_made_up_side_too_small_for_tl_dot_is_raised_to_what_dot_takes(tmp_path, sandbox):
    """mlstm's dQ kernel: `siz_b_DHQK` shapes only `tl.zeros` and block pointers, so its name gave
    1, and Triton refused the dot ("K >= 16") at a node that names no constexpr. Every made-up side
    of a block under what `tl.dot` takes is raised to it; the others stay."""
    path = tmp_path / "chunk_dot.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def chunk_dot(a_ptr, b_ptr, c_ptr, siz_b_M: tl.constexpr, siz_b_K: tl.constexpr, siz_b_N: tl.constexpr):\n"
        "    rm = tl.arange(0, siz_b_M)\n    rn = tl.arange(0, siz_b_N)\n"
        "    a = tl.zeros([siz_b_M, siz_b_K], dtype=tl.float16) + tl.load(a_ptr)\n"
        "    b = tl.zeros([siz_b_K, siz_b_N], dtype=tl.float16) + tl.load(b_ptr)\n"
        "    tl.store(c_ptr + rm[:, None] * siz_b_N + rn[None, :], tl.dot(a, b))\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    made = {m["name"]: m["suggested"] for m in rec.made_up}
    assert made["siz_b_K"] == "16" and made["siz_b_M"] == made["siz_b_N"] == "64", made


PARTIAL_ROTARY = '''
import torch
import triton
import triton.language as tl


@triton.jit
def rope_tail_kernel(x_ptr, cos_ptr, out_ptr, D: tl.constexpr, HALF: tl.constexpr, BLOCK_PASS: tl.constexpr):
    row = tl.program_id(0)
    passed = tl.arange(0, BLOCK_PASS)  # the leading channels the rotation leaves alone
    keep = passed < D - 2 * HALF
    tl.store(out_ptr + row * D + passed, tl.load(x_ptr + row * D + passed, mask=keep), mask=keep)
    i = tl.arange(0, HALF)
    c = tl.load(cos_ptr + i)
    even = D - 2 * HALF + 2 * i
    tl.store(out_ptr + row * D + even, tl.load(x_ptr + row * D + even) * c)


def rope_tail(x, cos):
    """x: [batch, heads, seqlen, head_dim]; cos: [batch, seqlen, rotated // 2]."""
    b, h, s, d = x.shape
    half = cos.shape[-1]
    out = torch.empty_like(x)
    rope_tail_kernel[(b * h * s,)](x, cos, out, D=d, HALF=half, BLOCK_PASS=triton.next_power_of_2(d - 2 * half))
    return out
'''


def test_a_wrapper_call_the_compiler_refuses_is_made_again_with_the_next_shape_family(tmp_path, sandbox):
    """The first made-up shapes give the wrapper a rotated part wider than the head (an empty
    `tl.arange`); the wrapper is called again with other shapes until its call compiles."""
    rec = _opened(tmp_path / "rope_tail.py", PARTIAL_ROTARY, "sm_90", sandbox)
    assert rec.call_origin == "rope_tail"  # its own wrapper made the call
    values = {p.name: p.value for p in rec.parameters}
    assert values["D"] > 2 * values["HALF"] and values["BLOCK_PASS"] > 0, values
    notes = [line for line in rec.log.splitlines() if "did not compile" in line]
    assert notes and "arange" in notes[0] and "called again with family" in notes[-1], rec.log


def test_a_wrapper_call_no_shape_family_makes_compile_reports_the_first_refusal(tmp_path, sandbox):
    path = tmp_path / "never.py"
    path.write_text(PARTIAL_ROTARY.replace("BLOCK_PASS=triton.next_power_of_2(d - 2 * half)", "BLOCK_PASS=0"))
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is not None and rec.error.kind == "compilation" and "arange" in rec.error.message
    # the call shown is the first one tried (the first family's head dim and table)
    values = {p.name: p.value for p in rec.parameters}
    assert values["HALF"] == 4096, values


def test_a_package_modules_wrapper_call_is_made_again_too(tmp_path, sandbox):
    """The kernel in one module, its wrapper in another module of the package that imports it."""
    kernel, _, wrapper = PARTIAL_ROTARY.partition("\n\ndef rope_tail(")
    pkg = tmp_path / "proj" / "ropes"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kern.py").write_text(kernel)
    (pkg / "ops.py").write_text("import torch\nimport triton\n\nfrom .kern import rope_tail_kernel\n\n\n"
                                "def rope_tail(" + wrapper)
    rec = inspect_kernel(pkg / "kern.py", target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.call_origin == "ropes.ops.rope_tail"
    values = {p.name: p.value for p in rec.parameters}
    assert values["D"] > 2 * values["HALF"] and values["BLOCK_PASS"] > 0, values
    assert "called again with family" in rec.log


# fp4/int4 unpacking as quantization kernels write it (modelopt's fp4_dequantize_kernel): four bytes
# of one 32-bit register per asm call, so its argument must be 8-bit; a float32 one is an LLVM
# assertion that kills the compile, with no type error for retyping to read
UNPACK_BYTES = '''import torch
import triton
import triton.language as tl


@triton.jit
def unpack_kernel(packed_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    packed = tl.load(packed_ptr + offs, mask=offs < n, other=0)
    wide = tl.inline_asm_elementwise(
        asm="""
        {
            .reg .b8 a, b, c, d;
            mov.b32 {a, b, c, d}, $4;
            cvt.u32.u8 $0, a;
            cvt.u32.u8 $1, b;
            cvt.u32.u8 $2, c;
            cvt.u32.u8 $3, d;
        }
        """,
        constraints="=r,=r,=r,=r,r", args=[packed], dtype=tl.int32, is_pure=True, pack=4)
    tl.store(out_ptr + offs, wide.to(tl.float32), mask=offs < n)
'''


@pytest.mark.parametrize("through", ["signature", "wrapper"])
def test_data_inline_assembly_packs_four_to_a_register_is_made_up_as_bytes(tmp_path, sandbox, through):
    text = UNPACK_BYTES
    if through == "wrapper":
        text += ("\n\ndef unpack(packed: torch.Tensor) -> torch.Tensor:\n"
                 "    out = torch.empty(packed.shape, dtype=torch.float32, device=packed.device)\n"
                 "    unpack_kernel[(triton.cdiv(packed.numel(), 1024),)](packed, out, packed.numel(), BLOCK=1024)\n"
                 "    return out\n")
    path = tmp_path / "unpack_bytes.py"
    path.write_text(text)
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False,
                         consts={} if through == "wrapper" else {"BLOCK": "1024"})
    assert rec.error is None, rec.error and rec.error.short()
    types = {p.name: p.type for p in rec.parameters}
    assert types["packed_ptr"] == "*u8" and types["out_ptr"] == "*fp32", types


def test_a_wrappers_arguments_built_as_a_tuple_and_a_dict_keep_their_roles(tmp_path, sandbox):
    """modelopt's attention forward builds its launch as `_attn_fwd[grid](*fwd_args, **fwd_kwargs)`
    (40 arguments): read through those literals, a wrapper parameter that becomes a constexpr gets
    a number, not a made-up tensor, and one whose values the kernel gathers by gets indices."""
    path = tmp_path / "packed_args.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef gather_kernel(x_ptr, idx_ptr, out_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    rows = tl.load(idx_ptr + offs, mask=offs < n, other=0)\n"
        "    x = tl.load(x_ptr + rows + SHIFT, mask=offs < n)\n"
        "    tl.store(out_ptr + offs, x, mask=offs < n)\n\n\n"
        "def gather(x, idx, shift):\n"
        "    out = torch.empty(idx.shape, dtype=x.dtype, device=x.device)\n"
        "    fwd_args = (x, idx, out, idx.numel())\n"
        "    fwd_kwargs = {\"SHIFT\": shift, \"BLOCK\": 1024}\n"
        "    gather_kernel[(triton.cdiv(idx.numel(), 1024),)](*fwd_args, **fwd_kwargs)\n"
        "    return out\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    values = {p.name: (p.type, p.value) for p in rec.parameters}
    assert values["idx_ptr"][0] == "*i64", values
    assert isinstance(values["SHIFT"][1], int), values


def test_the_block_sides_an_autotuner_sets_count_in_a_made_up_tile(tmp_path, sandbox):
    """modelopt's attention: the wrapper gives `BLOCK_D` from the made-up head (4096 in the first
    shape family) and the autotuner gives `BLOCK_M`; counted without the autotuner's side, the
    tile looked small and gfx942's compile ran past its 300 s limit. The first config's sides
    count, so a smaller family is taken."""
    path = tmp_path / "rows.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.autotune(configs=[triton.Config({'BLOCK_M': 128}, num_warps=4)], key=['n'])\n"
        "@triton.jit\ndef rows_kernel(x_ptr, out_ptr, n, d, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr):\n"
        "    r = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]\n"
        "    c = tl.arange(0, BLOCK_D)[None, :]\n"
        "    x = tl.load(x_ptr + r * d + c, mask=(r < n) & (c < d), other=0.0)\n"
        "    tl.store(out_ptr + r * d + c, x * 2, mask=(r < n) & (c < d))\n\n\n"
        "def double(x):\n"
        "    out = torch.empty_like(x)\n"
        "    n, d = x.shape[0] * x.shape[1], x.shape[-1]\n"
        "    rows_kernel[lambda meta: (triton.cdiv(n, meta['BLOCK_M']),)](x, out, n, d,\n"
        "                                                                  BLOCK_D=triton.next_power_of_2(d))\n"
        "    return out\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False, timeout=120)
    assert rec.error is None, rec.error and rec.error.short()
    sides = {p.name: p.value for p in rec.parameters if p.name.startswith("BLOCK_")}
    assert sides["BLOCK_M"] * sides["BLOCK_D"] <= 1 << 16, sides


def test_a_bit_width_the_wrapper_takes_is_made_up_a_few_bits(tmp_path, sandbox):
    """lmcache's turboquant store: `n_centroids = 2**mse_bits` from an `int` parameter made up as
    64 overflowed int32 in every shape family; a bit width is made up as 4."""
    path = tmp_path / "levels.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef quantize_kernel(x_ptr, out_ptr, n, levels, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    tl.store(out_ptr + offs, (x * levels).to(tl.int32), mask=offs < n)\n\n\n"
        "def quantize(x: torch.Tensor, mse_bits: int) -> torch.Tensor:\n"
        "    out = torch.empty(x.shape, dtype=torch.int32, device=x.device)\n"
        "    quantize_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), 2**mse_bits, BLOCK=1024)\n"
        "    return out\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert {p.name: p.value for p in rec.parameters}["levels"] == 16


def _opened(path, text: str, target: str, sandbox):
    """The record of `text`, written to `path`, compiled for `target` with nothing given; it compiled."""
    path.write_text(text)
    rec = inspect_kernel(path, target=target, sandbox=sandbox, use_cache=False, defer=("sass",))
    assert rec.error is None, rec.error and rec.error.short()
    return rec
