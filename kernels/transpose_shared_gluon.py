"""Teaching pair: a transpose through shared memory, with bank conflicts and without.

Each program moves one 64 x 64 fp32 tile of x into out = x^T. It loads the tile a row at a time
(each thread 4 neighbouring columns: coalesced), parks it in shared memory, reads it back a
column at a time (each thread 4 neighbouring rows) and stores it, again coalesced, as a row of
out. Gluon lets the author choose the shared layout, and that is the whole lesson:

- `SWIZZLE=False`: the buffer is plain row-major. A row of 64 fp32 is 256 bytes, two full turns of
  the 32 four-byte banks, so every element of a column sits in the same bank. Reading by columns,
  the 8 lanes of a warp that share a column step down its rows: 8 distinct words in one bank,
  served one after another (8-way conflicts: 8 wavefronts where 1 would do).
- `SWIZZLE=True`: `SwizzledSharedLayout(1, 1, 32, [1, 0])` stores column c of row r at column
  c ^ (r % 32): a column's words fall in 32 different banks, and the same read takes 1 wavefront.

What to look for in the IR (and around it):
- TTGIR: `#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, ...}>` against `maxPhase = 32`;
  `ttg.local_alloc` (the write) and `ttg.local_load` (the read) on the two lines in the middle.
- PTX: the same `st.shared.v4.b32` writes and scalar `ld.shared.b32` reads in both; only the
  address arithmetic differs (the swizzled one XORs the column with the row).
- The memory table's shared rows and the gutter: 8 wavefronts per request on the read line of the
  conflicted half, 1 on the swizzled one; Nsight Compute's `L1 Wavefronts Shared` agrees
  (docs/shared-memory.md).
- The curves: the conflicts cost time only while the transpose is not bound by DRAM. Matrices
  that stay in L2 (up to 2048 a side) run faster swizzled; from 4096 both move data at the
  memory's speed and the two curves meet (docs/kernels-performance.md has the figures).
- Swizzling is a trade: `SwizzledSharedLayout(4, 1, 8, ...)` keeps 128-bit writes but reads 4-way
  conflicted; the inspector's shared rows show each choice's wavefronts before anything runs.
"""

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

TITLE = "Transpose: bank conflicts vs a swizzled shared layout"
KERNEL = "transpose_kernel"
LANGUAGE = "gluon"  # never in the interpreter (kernels/__init__.py)
CAPABILITY = (9, 0)  # checked and timed on sm_90 (where its conflicts were measured); compiles for any NVIDIA GPU
# The two launches `example` makes, in order: the inspector shows them side by side.
PAIR = ("SWIZZLE=False (8-way bank conflicts)", "SWIZZLE=True (swizzled)")
TILE = 64


@gluon.jit
def transpose_kernel(x_ptr, out_ptr, M, N, TILE: gl.constexpr, SWIZZLE: gl.constexpr):
    rows_fast: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])  # a thread: 4 columns of a row
    cols_fast: gl.constexpr = gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1])  # a thread: 4 rows of a column
    if SWIZZLE:
        shared: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 32, [1, 0])
    else:
        shared: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    r = gl.program_id(0) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(1, rows_fast))
    c = gl.program_id(1) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(0, rows_fast))
    tile = gl.load(x_ptr + r[:, None] * N + c[None, :], mask=(r[:, None] < M) & (c[None, :] < N))
    buffer = gl.allocate_shared_memory(gl.float32, [TILE, TILE], shared, tile)
    t = buffer.load(cols_fast)
    r2 = gl.program_id(0) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(1, cols_fast))
    c2 = gl.program_id(1) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(0, cols_fast))
    gl.store(out_ptr + c2[None, :] * M + r2[:, None], t, mask=(r2[:, None] < M) & (c2[None, :] < N))


def launch(x: torch.Tensor, swizzle: bool = True, out: torch.Tensor | None = None) -> torch.Tensor:
    """out = x.T (contiguous) for a contiguous 2-D fp32 x, one program per 64 x 64 tile."""
    assert x.dim() == 2 and x.is_contiguous() and x.dtype == torch.float32
    # On a GPU, or compiling GPU-free for a target (the inspector's stand-in answers as that GPU)
    if torch.cuda.is_available() and torch.version.hip:
        raise RuntimeError("transpose_shared_gluon.py runs on NVIDIA GPUs only: its Gluon layouts name 32 lanes "
                           "a warp, and AMD's wavefronts have 64")
    m, n = x.shape
    out = torch.empty(n, m, device=x.device, dtype=x.dtype) if out is None else out
    grid = (triton.cdiv(m, TILE), triton.cdiv(n, TILE))
    transpose_kernel[grid](x, out, m, n, TILE=TILE, SWIZZLE=swizzle, num_warps=4)
    return out


# ---- the inspector's example call: both halves of the pair ---------------------------------
def example(device):
    """Transpose a 4096 x 4096 matrix both ways."""
    x = make_inputs(4096, device)[0]
    return launch(x, swizzle=False), launch(x, swizzle=True)


# ---- bundled-kernel protocol ---------------------------------------------------------------
SIZES = [2**k for k in range(9, 15)]  # square matrices, 512 .. 16384 a side
TEST_SIZES = [64, 200, 1000]
TOLERANCE = dict(atol=0.0, rtol=0.0)
SIZE_NAMES = ("rows = columns",)
VARIANTS = {"conflicted": {"swizzle": False}, "swizzled": {"swizzle": True}}
INTERPRETER_SKIP = {"conflicted": "Gluon runs on a GPU only", "swizzled": "Gluon runs on a GPU only"}


def make_inputs(size: int, device, swizzle: bool = True) -> tuple[torch.Tensor, ...]:
    """A random `size` x `size` fp32 matrix."""
    return (torch.randn(size, size, device=device),)


def reference(x: torch.Tensor, swizzle: bool = True) -> torch.Tensor:
    return x.t().contiguous()


def baseline(x: torch.Tensor, swizzle: bool = True) -> torch.Tensor:
    """PyTorch's own transposing copy."""
    return x.t().contiguous()


def flops(size: int) -> int:
    return 0


def bytes_moved(size: int) -> int:
    """Every value read once and written once."""
    return 2 * size * size * 4
