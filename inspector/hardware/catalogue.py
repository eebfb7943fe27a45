"""A catalogue of GPUs: architecture, SMs/CUs, L2, memory, bandwidth and peak throughput.

Figures come from the vendors' datasheets and architecture whitepapers, cited per entry. Peak
BF16 is the dense tensor-core / matrix-core rate (half the "with sparsity" headline) at FP32
accumulate; GeForce parts run FP32-accumulate at half their FP16-accumulate rate. None means the
part has no BF16 tensor cores (Volta, Turing). A figure the vendor does not state is listed in
the entry's `estimates` and explained in `notes`.

Where a GPU is present, `gpu_from_properties` builds its record from the device's own properties
(SM count, L2, memory size and, given memory clock and bus width, bandwidth): those win over the
catalogue, which then only supplies the peak rates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from inspector.hardware.targets import parse_arch

KiB, MiB = 1024, 1024 * 1024
GB, TB = 10**9, 10**12
TFLOPS = 10**12


@dataclass(frozen=True)
class GPU:
    """One GPU model. Rates are per second (bytes/s, FLOP/s); sizes in bytes."""

    name: str
    vendor: str  # "nvidia" or "amd"
    arch: str  # Triton's target name: sm_90, gfx942
    sm_count: int  # SMs (NVIDIA) or compute units (AMD)
    l2_bytes: int
    memory_bytes: int
    memory_bandwidth: float
    peak_fp32: float  # non-tensor FP32 (FMA = 2 FLOP)
    peak_bf16: float | None  # dense BF16 tensor/matrix rate
    boost_clock_mhz: int | None
    source: str
    aliases: tuple[str, ...] = ()
    notes: str = ""
    estimates: tuple[str, ...] = ()  # fields whose figure the vendor does not state
    native: bool = False  # built from a present device's properties

    @property
    def backend(self) -> str:
        return "cuda" if self.vendor == "nvidia" else "hip"


GPUS: dict[str, GPU] = {
    g.name: g
    for g in (
        # NVIDIA Tesla V100 datasheet (SXM2: 15.7 TFLOPS FP32, 125 TFLOPS tensor FP16, 900 GB/s,
        # 32 GB HBM2); Volta whitepaper (80 SMs, 6144 KB L2).
        GPU("V100", "nvidia", "sm_70", 80, 6 * MiB, 32 * GB, 900 * GB, 15.7 * TFLOPS, None, 1530,
            "NVIDIA Tesla V100 datasheet (SXM2); NVIDIA Tesla V100 (Volta) architecture whitepaper",
            aliases=("Tesla V100",), notes="no BF16 tensor cores; FP16 tensor: 125 TFLOPS"),
        # NVIDIA T4 datasheet (8.1 TFLOPS FP32, 65 TFLOPS FP16 mixed precision, 320 GB/s, 16 GB);
        # Turing whitepaper (TU104: 40 SMs on T4, 4096 KB L2).
        GPU("T4", "nvidia", "sm_75", 40, 4 * MiB, 16 * GB, 320 * GB, 8.1 * TFLOPS, None, 1590,
            "NVIDIA T4 datasheet; NVIDIA Turing architecture whitepaper",
            aliases=("Tesla T4",), notes="no BF16 tensor cores; FP16 tensor: 65 TFLOPS"),
        # NVIDIA A100 datasheet (SXM4 80GB: 19.5 TFLOPS FP32, 312 TFLOPS BF16 dense, 2039 GB/s);
        # Ampere GA100 whitepaper (108 SMs, 40 MB L2).
        GPU("A100", "nvidia", "sm_80", 108, 40 * MiB, 80 * GB, 2039 * GB, 19.5 * TFLOPS, 312 * TFLOPS, 1410,
            "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB); NVIDIA A100 (Ampere) architecture whitepaper",
            aliases=("A100-SXM4-80GB", "A100 SXM4")),
        # NVIDIA A10 datasheet (31.2 TFLOPS FP32, BF16 tensor 125 | 250* TFLOPS, 600 GB/s, 24 GB);
        # GA102 whitepaper (72 SMs on A10; 6144 KB L2 on GA102).
        GPU("A10", "nvidia", "sm_86", 72, 6 * MiB, 24 * GB, 600 * GB, 31.2 * TFLOPS, 125 * TFLOPS, 1695,
            "NVIDIA A10 Tensor Core GPU datasheet; NVIDIA Ampere GA102 GPU architecture whitepaper"),
        # GA102 whitepaper, GeForce RTX 3090 column (82 SMs, 6144 KB L2, 936 GB/s, 35.6 TFLOPS FP32,
        # peak BF16 tensor with FP32 accumulate 71/142 TFLOPS).
        GPU("RTX 3090", "nvidia", "sm_86", 82, 6 * MiB, 24 * GB, 936 * GB, 35.6 * TFLOPS, 71 * TFLOPS, 1695,
            "NVIDIA Ampere GA102 GPU architecture whitepaper (GeForce RTX 3090)",
            aliases=("GeForce RTX 3090",)),
        # NVIDIA L4 datasheet (30.3 TFLOPS FP32, BF16 tensor 242* TFLOPS with sparsity, 300 GB/s,
        # 24 GB); Ada whitepaper (AD104: 58 SMs on L4, 48 MB L2).
        GPU("L4", "nvidia", "sm_89", 58, 48 * MiB, 24 * GB, 300 * GB, 30.3 * TFLOPS, 121 * TFLOPS, 2040,
            "NVIDIA L4 Tensor Core GPU datasheet; NVIDIA Ada GPU architecture whitepaper",
            notes="BF16: the datasheet's 242 TFLOPS is with sparsity; dense is half"),
        # Ada whitepaper, GeForce RTX 4090 column (128 SMs, 73728 KB L2, 1008 GB/s, 82.6 TFLOPS FP32,
        # peak BF16 tensor with FP32 accumulate 165.2/330.4 TFLOPS).
        GPU("RTX 4090", "nvidia", "sm_89", 128, 72 * MiB, 24 * GB, 1008 * GB, 82.6 * TFLOPS, 165.2 * TFLOPS, 2520,
            "NVIDIA Ada GPU architecture whitepaper (GeForce RTX 4090)", aliases=("GeForce RTX 4090",)),
        # NVIDIA H100 datasheet (SXM5: 67 TFLOPS FP32, BF16 1979* TFLOPS with sparsity, 3.35 TB/s,
        # 80 GB); Hopper whitepaper (132 SMs on H100 SXM5, 50 MB L2).
        GPU("H100", "nvidia", "sm_90", 132, 50 * MiB, 80 * GB, 3.35 * TB, 67 * TFLOPS, 989.4 * TFLOPS, 1980,
            "NVIDIA H100 Tensor Core GPU datasheet (SXM5); NVIDIA H100 (Hopper) architecture whitepaper",
            aliases=("H100 SXM", "H100 80GB HBM3")),
        # NVIDIA H200 datasheet (SXM: 67 TFLOPS FP32, BF16 1979* TFLOPS with sparsity, 4.8 TB/s,
        # 141 GB); 132 SMs and 60 MiB L2 read from the device properties of an H200.
        GPU("H200", "nvidia", "sm_90", 132, 60 * MiB, 141 * GB, 4.8 * TB, 67 * TFLOPS, 989.4 * TFLOPS, 1980,
            "NVIDIA H200 Tensor Core GPU datasheet (SXM); SM count and L2 from an H200's device properties",
            notes="measured on an H200: device-to-device copy ~4.3 TB/s, bf16 matmul ~790 TFLOPS"),
        # NVIDIA HGX B200 datasheet figures at 1000 W (FP32 80 TFLOPS, BF16 4.5* PFLOPS with
        # sparsity, 8 TB/s, 180 GB HBM3e per GPU).
        GPU("B200", "nvidia", "sm_100", 148, int(126.5 * MiB), 180 * GB, 8 * TB, 80 * TFLOPS, 2250 * TFLOPS, None,
            "NVIDIA HGX B200 / DGX B200 datasheets (per GPU, 1000 W)",
            aliases=("NVIDIA B200",), estimates=("sm_count", "l2_bytes"),
            notes="SM count and L2 are not in NVIDIA's datasheets: 148 SMs and 126.5 MiB L2 as B200 systems "
                  "report them; boost clock not published"),
        # NVIDIA RTX Blackwell GPU architecture whitepaper, GeForce RTX 5090 column (170 SMs,
        # 98304 KB L2, 1792 GB/s, 104.8 TFLOPS FP32, peak FP16/BF16 tensor with FP32 accumulate
        # 209.5/419 TFLOPS, 32 GB GDDR7).
        GPU("RTX 5090", "nvidia", "sm_120", 170, 96 * MiB, 32 * GB, 1792 * GB, 104.8 * TFLOPS, 209.5 * TFLOPS, 2407,
            "NVIDIA RTX Blackwell GPU architecture whitepaper (GeForce RTX 5090)",
            aliases=("GeForce RTX 5090",)),
        # AMD Instinct MI300X datasheet (304 CUs, 2100 MHz peak engine clock, 192 GB HBM3, 5.3 TB/s,
        # FP32 vector 81.7 TFLOPS, BF16 1307.4 TFLOPS dense); AMD CDNA 3 whitepaper (4 MB L2 per
        # XCD, 8 XCDs; 256 MB Infinity Cache).
        GPU("MI300X", "amd", "gfx942", 304, 32 * MiB, 192 * GB, 5.3 * TB, 81.7 * TFLOPS, 1307.4 * TFLOPS, 2100,
            "AMD Instinct MI300X datasheet; AMD CDNA 3 architecture whitepaper",
            aliases=("AMD Instinct MI300X", "Instinct MI300X"),
            notes="L2 is 8 x 4 MB (one per XCD); a 256 MB Infinity Cache sits behind it"),
        # AMD Instinct MI355X product page (256 CUs, 2400 MHz peak engine clock, 288 GB HBM3E,
        # 8 TB/s, FP32 vector 157.3 TFLOPS, BF16 2.5 PFLOPS dense); AMD CDNA 4 whitepaper (4 MB L2
        # per XCD, 8 XCDs; 256 MB Infinity Cache; 160 KB LDS per CU).
        GPU("MI355X", "amd", "gfx950", 256, 32 * MiB, 288 * GB, 8 * TB, 157.3 * TFLOPS, 2516.6 * TFLOPS, 2400,
            "AMD Instinct MI355X product specifications; AMD CDNA 4 architecture whitepaper",
            aliases=("AMD Instinct MI355X", "Instinct MI355X"),
            notes="BF16: AMD states 2.5 PFLOPS; 2516.6 = 256 CUs x 4096 FLOP/clock x 2.4 GHz. "
                  "L2 is 8 x 4 MB (one per XCD); a 256 MB Infinity Cache sits behind it"),
    )
}

# A representative GPU per architecture, for questions asked without a GPU named: the most
# common data-centre part of each (H100 over H200 for sm_90: same SMs and per-SM limits, and the
# more widely deployed). Architectures without an entry (sm_87 Jetson Orin, sm_103) get None.
REPRESENTATIVE: dict[str, str] = {
    "sm_70": "V100", "sm_75": "T4", "sm_80": "A100", "sm_86": "A10", "sm_89": "L4", "sm_90": "H100",
    "sm_100": "B200", "sm_120": "RTX 5090", "gfx942": "MI300X", "gfx950": "MI355X",
}

# FP32 lanes per SM (NVIDIA) / FP32 FLOP per clock per CU (AMD), for peaks of GPUs not in the
# catalogue: CUDA C Programming Guide, "Arithmetic Instructions" throughput table.
_FP32_LANES_PER_SM = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128, (9, 0): 128,
                      (10, 0): 128, (10, 3): 128, (12, 0): 128}


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def find_gpu(name: str) -> GPU:
    """A catalogue GPU by name or alias, case- and punctuation-insensitive ('h100', 'NVIDIA H100
    80GB HBM3', 'AMD Instinct MI300X'). Matches whole words, so 'A10G' is not the A10 and 'L40S'
    is not the L4. Raises KeyError when nothing matches."""
    text = f" {_norm(name)} "
    best: tuple[int, GPU] | None = None
    for gpu in GPUS.values():
        for alias in (gpu.name, *gpu.aliases):
            key = f" {_norm(alias)} "
            if key in text and (best is None or len(key) > best[0]):
                best = (len(key), gpu)
    if best is None:
        raise KeyError(f"no GPU named {name!r} in the catalogue ({', '.join(GPUS)})")
    return best[1]


def gpu_for_target(target: object, native: GPU | None = None) -> GPU | None:
    """The GPU to assume for a target: the native one when it has that architecture, otherwise
    the representative catalogue part (see REPRESENTATIVE), or None if there is none."""
    arch = parse_arch(target).name
    if native is not None and native.arch == arch:
        return native
    name = REPRESENTATIVE.get(arch)
    return GPUS[name] if name else None


def gpu_from_properties(props: dict) -> GPU:
    """Build a GPU record from a present device's properties (torch.cuda.get_device_properties
    style: name, major, minor, multi_processor_count, L2_cache_size, total_memory, and optionally
    memory_clock_rate in kHz, memory_bus_width in bits, clock_rate in kHz, gcnArchName on ROCm).

    The device's figures win. Peak rates come from the catalogue entry of the same model, scaled by
    the SM-count ratio when the device has a different number of SMs (a PCIe variant, say); a GPU
    not in the catalogue gets a FP32 peak from SMs x lanes x clock where the clock is known.
    """
    name = str(props.get("name", "unknown GPU"))
    gcn = props.get("gcnArchName") or props.get("gcn_arch_name")
    if gcn:
        arch, vendor = str(gcn).split(":")[0], "amd"
    else:
        arch, vendor = f"sm_{int(props['major'])}{int(props['minor'])}", "nvidia"
    sms = int(props.get("multi_processor_count") or props.get("sm_count") or 0)
    mem_clock_khz = props.get("memory_clock_rate")
    bus_bits = props.get("memory_bus_width")
    clock_khz = props.get("clock_rate")
    notes = ["properties read from the device"]
    try:
        base: GPU | None = find_gpu(name)
    except KeyError:
        base = None
    if base is not None and base.arch != arch:
        base = None
    bandwidth = base.memory_bandwidth if base else 0.0
    if mem_clock_khz and bus_bits:
        # Double data rate: two transfers per memory clock over the whole bus.
        bandwidth = 2 * float(mem_clock_khz) * 1e3 * int(bus_bits) / 8
        notes.append("memory bandwidth = 2 x memory clock x bus width")
    fp32: float = base.peak_fp32 if base else 0.0
    bf16 = base.peak_bf16 if base else None
    if base and sms and sms != base.sm_count:
        scale = sms / base.sm_count
        fp32 *= scale
        bf16 = None if bf16 is None else bf16 * scale
        notes.append(f"peak rates scaled from the {base.name} entry by SM count ({sms}/{base.sm_count})")
    elif base is None and clock_khz and vendor == "nvidia":
        cc = (int(props["major"]), int(props["minor"]))
        lanes = _FP32_LANES_PER_SM.get(cc)
        if lanes:
            fp32 = sms * lanes * 2 * float(clock_khz) * 1e3
            notes.append("peak FP32 = SMs x FP32 lanes x 2 x clock; peak BF16 unknown")
    return GPU(
        name=name, vendor=vendor, arch=arch, sm_count=sms,
        l2_bytes=int(props.get("L2_cache_size") or props.get("l2_cache_size") or (base.l2_bytes if base else 0)),
        memory_bytes=int(props.get("total_memory") or (base.memory_bytes if base else 0)),
        memory_bandwidth=bandwidth, peak_fp32=fp32, peak_bf16=bf16,
        boost_clock_mhz=int(float(clock_khz) / 1e3) if clock_khz else (base.boost_clock_mhz if base else None),
        source=f"device properties{'; rates: ' + base.source if base else ''}",
        aliases=(), notes="; ".join(notes), estimates=(), native=True,
    )


def native_gpu(device: int = 0) -> GPU | None:
    """The present CUDA/ROCm device as a GPU record, or None without one (imports torch lazily)."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    p = torch.cuda.get_device_properties(device)
    props = {k: getattr(p, k) for k in ("name", "major", "minor", "multi_processor_count", "L2_cache_size",
                                        "total_memory", "memory_clock_rate", "memory_bus_width", "clock_rate",
                                        "gcnArchName") if hasattr(p, k)}
    return gpu_from_properties(props)


def with_overrides(gpu: GPU, **fields: object) -> GPU:
    """A copy of `gpu` with some fields replaced (for what-if questions about a custom part)."""
    return replace(gpu, **fields)  # type: ignore[arg-type]


__all__ = ["GPU", "GPUS", "REPRESENTATIVE", "find_gpu", "gpu_for_target", "gpu_from_properties", "native_gpu",
           "with_overrides"]
