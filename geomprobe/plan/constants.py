"""The planner's fixed figures: bytes per dtype, achieved / peak efficiencies, the assumed disk, PCIe,
start-up and per-call rates, the memory margin, the batch limits, the process's own RAM and the
GPU table. Kept in one place so that every assumption the estimates rest on can be read together."""

from __future__ import annotations

GiB = 2**30
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
CUDA_EFFICIENCY = 0.35  # achieved / peak dense throughput of a forward pass on a GPU
CPU_EFFICIENCY = 0.7  # achieved / measured big-matmul rate of a forward pass on a CPU
QUANT_SLOWDOWN = {None: 1.0, "4bit": 0.5, "8bit": 0.25}  # bitsandbytes kernels against dense ones (assumed)
MARGIN_FRACTION, MARGIN_MIN = 0.10, 1 * GiB
BLOCK_4BIT = 64  # bitsandbytes nf4 block size; one float32 absmax per block (no double quantisation)
DISK_BYTES_PER_S = (0.5e9, 2e9)  # loading weights from local disk (assumed range)
PCIE_BYTES_PER_S = 10e9  # host -> GPU copies (offloaded layers, null models built on the CPU)
OVERHEAD_S_PER_LAYER_BATCH = 1e-3  # python, hooks and small kernels, per layer and forward call (upper end)
# A run's fixed start before its first forward: Python, torch, transformers and geomprobe imported,
# the preflight plan, the run directory and manifest written. The imports alone took 5.8-6.7 s of
# wall time on this project's 2-core machine under load (4.0-4.4 s of CPU); benchmarks/RESULTS.md
STARTUP_S = (3.0, 10.0)
MAX_BATCH = 64
# The process itself on a CPU run: Python 3.11, torch 2.13, transformers 5.24 with the model's
# modeling code imported, the tokenizer and geomprobe: 439-456 MiB of RSS on Linux x86-64 before any
# weight is read (benchmarks/null_memory.py measures it as its baseline)
PROCESS_BYTES = 450 * 2**20
CPU_DEFAULT_BATCH = 8

# name fragment (lowercase, first match wins) -> (dense bf16 TFLOP/s, fp32 TFLOP/s, fp16 TFLOP/s, memory GB/s).
# PyTorch keeps TF32 off for float32 matmuls by default, so float32 runs at the fp32 rate. Cards without
# bfloat16 tensor cores (T4, V100) run bfloat16 at about their fp32 rate.
GPU_TABLE = (
    ("h200", 989.0, 67.0, 989.0, 4800.0),
    ("h100 pcie", 756.0, 51.0, 756.0, 2000.0),
    ("h100", 989.0, 67.0, 989.0, 3350.0),  # SXM (H100 80GB HBM3)
    ("a100-sxm4-80gb", 312.0, 19.5, 312.0, 2039.0),
    ("a100 80gb", 312.0, 19.5, 312.0, 1935.0),
    ("a100", 312.0, 19.5, 312.0, 1555.0),
    ("l40s", 362.0, 91.6, 362.0, 864.0),
    ("a10g", 125.0, 31.2, 125.0, 600.0),
    ("a10", 125.0, 31.2, 125.0, 600.0),
    ("4090", 165.0, 82.6, 165.0, 1008.0),
    ("3090", 71.0, 35.6, 71.0, 936.0),
    ("a6000", 155.0, 38.7, 155.0, 768.0),
    ("l4", 121.0, 30.3, 121.0, 300.0),
    ("t4", 8.1, 8.1, 65.0, 320.0),
    ("v100", 15.7, 15.7, 125.0, 900.0),
)
UNKNOWN_GPU = (100.0, 20.0, 100.0, 1000.0)
