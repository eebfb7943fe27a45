"""Tutorial style: nothing runs at import; `__main__` runs a perf_report benchmark."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)


def scale(x, factor):
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 512),)](x, out, n, factor, BLOCK=512)
    return out


@triton.testing.perf_report(
    triton.testing.Benchmark(x_names=["size"], x_vals=[2**i for i in range(12, 20)], line_arg="provider",
                             line_vals=["torch", "triton"], line_names=["Torch", "Triton"], ylabel="GB/s",
                             plot_name="scale", args={}))
def benchmark(size, provider):
    x = torch.rand(size, device="cuda", dtype=torch.float16)
    if provider == "torch":
        ms = triton.testing.do_bench(lambda: x * 2.0)
    else:
        ms = triton.testing.do_bench(lambda: scale(x, 2.0))
    return 3 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)


if __name__ == "__main__":
    benchmark.run(print_data=True, show_plots=True)
