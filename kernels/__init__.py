"""The bundled kernels: the gallery the inspector opens first and the benchmark curves are drawn from.

Each `kernels/<name>.py` is plain Python that a user could have written; the inspector and the
benchmark read it through module-level names. Files whose name starts with `_` are not kernels.

The protocol (one file per kernel; `add.py` is the smallest complete example)
------------------------------------------------------------------------------
Module docstring
    A title line, what the kernel computes and how, then "What to look for in the IR:" bullets
    naming stages and instructions exactly as they are printed (`ld.global.v4.b32`,
    `wgmma.mma_async...`, `HGMMA`, `cp.async.bulk.tensor...`, `LDL`/`STL`). Every claim was
    checked by compiling GPU-free (sm_80, sm_90, sm_120, gfx942; Triton 3.6 and 3.9).
TITLE, KERNEL
    A human name, and the name of the main `@triton.jit` function (possibly wrapped by
    `@triton.autotune` / `@triton.heuristics`).
launch(*inputs, **variant, out=None) -> output
    The host wrapper real code would call: allocates the output (or writes into `out`, which the
    checks poison with NaN first), computes the grid and launches with `kernel[grid](...)`, going
    through the autotuner normally. It must also run on `meta` tensors (no `.item()`, no reading
    values, no `torch.cuda` calls unless the tensors are on a CUDA device): that is how the
    inspector records launches.
example(device)
    The inspector's example-call convention, for any user file: build inputs on `device` and
    launch exactly as real code would (normally `return launch(*make_inputs(SIZE, device))`).
    The inspector calls it with the meta device and intercepts `JITFunction.run` / `Autotuner.run`:
    nothing runs; each launch's arguments and grid are recorded and compiled through `warmup`.
make_inputs(size, device, **variant) -> tuple of tensors
    Fresh random inputs (never zeros: they hide unwritten outputs and run faster than real data).
reference(*inputs, **variant) -> output
    The same function in PyTorch, computed in fp32 or fp64 inside where that matters.
baseline(*inputs, **variant) -> output (optional)
    What PyTorch code would write, in the inputs' own dtype: the "eager" line of the benchmarks.
SIZES, TEST_SIZES, SIZE_NAMES
    The benchmark sweep (ints or tuples), small sizes for the CPU interpreter (the whole
    interpreter run of every kernel stays within a minute on two cores), and what each component
    of a size means.
flops(size, **variant), bytes_moved(size, **variant)
    Operations per call and the fewest bytes that must cross device memory (each input read once,
    each output written once): the two numbers of the roofline.
TOLERANCE = dict(atol=..., rtol=...); VARIANT_TOLERANCE = {variant: dict(...)} (optional)
    Elementwise |out - ref| <= atol + rtol * |ref|; NaN never passes.
VARIANTS = {name: {keyword: value}} (optional)
    Each variant is its own sweep (dtypes, causal, head dim, activation, precision...). Its
    keywords go to launch, make_inputs, reference, baseline, flops and bytes_moved; a function
    that does not take one of them is called without it (see `call`).
PAIR = (label_a, label_b) (teaching pairs only)
    `example` makes two launches, the lesson's two halves, in this order; the labels name them,
    as the app's Insight tab compiles them side by side (inspector/ui/pair_panel.py): a kernel
    function of the file ("copy_strided_kernel"), or a constexpr setting before any words in
    brackets ("BLOCK_N=32768 (spills)"). With VARIANTS of two entries, the i-th is the i-th half's
    recorded sweep.
INTERPRETER_SKIP = {variant: reason} (optional)
    Variants Triton's CPU interpreter cannot run (bfloat16 `tl.dot`: triton-lang/triton#11584).
    They are still checked on the GPU.
LANGUAGE = "gluon", CAPABILITY = (major, minor) (Gluon kernels only)
    A kernel written in Gluon: checked and benchmarked only on a GPU of that compute capability,
    never in the interpreter (every variant in INTERPRETER_SKIP). Its launch refuses, saying so
    (" only"), a GPU it cannot run on: another generation where it needs Hopper's features, AMD
    where its layouts name 32 lanes a warp.

The inspector reads these names in one place, `inspector/bench/protocol.py` (the benchmark command,
and `gallery_names`, `load_gallery`, `variants`, `tolerance` and `check` for the tests and the GPU
benchmark that walk the gallery). Nothing here imports the inspector: the gallery is user code.
"""
