"""The device: its memory (free GPU memory, available RAM, both under --device-map) and its throughput
(the GPU table, or this CPU's recorded matmul rate), as DeviceInfo."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from .constants import CPU_EFFICIENCY, CUDA_EFFICIENCY, GPU_TABLE, UNKNOWN_GPU


@dataclass
class DeviceInfo:
    kind: str  # cpu | cuda | mps
    name: str
    memory: int | None  # bytes the model may use (free GPU memory, or available RAM; a device map: both)
    host_memory: int | None  # available CPU RAM
    flops: float  # achievable FLOP/s in the run's dtype (efficiency applied)
    bandwidth: float  # bytes/s
    how: str  # how memory and throughput were found
    gpu_memory: int | None = None  # the GPUs' share of `memory` under a device map


def host_memory_available() -> int | None:
    """Available RAM in bytes: /proc/meminfo MemAvailable, else psutil when installed, else None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # noqa: BLE001 - psutil is optional
        return None


@functools.cache
def cpu_benchmark(dtype: str = "float32") -> tuple[float, float]:
    """(matmul FLOP/s in `dtype`, memory bandwidth bytes/s) of this CPU: the machine's recorded
    figures (geomprobe.timing: measured once, about a second, the first time a plan needs them, and
    read from the cache from then on), not a momentary benchmark that moves with the load."""
    from geomprobe.timing import cpu_rates

    rates = cpu_rates(dtype)
    return rates["flops"], rates["bandwidth"]


def cpu_rates_how(dtype: str = "float32") -> str:
    """Where the CPU figures came from, for the plan's 'how'."""
    from geomprobe.timing import cpu_rates

    rates = cpu_rates(dtype)
    when = "measured now" if rates.get("new") else f"recorded {rates['measured'][:10]}"
    return (f"this machine's {dtype} matmul rate ({when}; `geomprobe plan --recalibrate` measures again), "
            f"{rates['flops'] / 1e9:.0f} GFLOP/s")


def gpu_rates(name: str, dtype: str) -> tuple[float, float, str]:
    """(peak TFLOP/s in dtype, memory GB/s, which table row) for a CUDA device name."""
    lower = name.lower()
    for fragment, bf16, fp32, fp16, bandwidth in GPU_TABLE:
        if fragment in lower:
            peak = {"bfloat16": bf16, "float16": fp16, "float32": fp32}[dtype]
            return peak, bandwidth, f"'{fragment}' in the table"
    bf16, fp32, fp16, bandwidth = UNKNOWN_GPU
    return ({"bfloat16": bf16, "float16": fp16, "float32": fp32}[dtype], bandwidth,
            "not in the table: assumed")


def device_info(device: str, dtype: str, device_map: str | None = None, device_memory: int | None = None,
                host_memory: int | None = None, device_name: str | None = None) -> DeviceInfo:
    """The device's memory and throughput. CUDA figures come from torch unless device_memory and
    device_name are given (planning another machine); a CPU's throughput is measured."""
    host = host_memory if host_memory is not None else host_memory_available()
    kind = "cuda" if device.startswith("cuda") else "mps" if device == "mps" else "cpu"
    if kind == "cpu":
        measured_flops, bandwidth = cpu_benchmark(dtype)
        threads = _cpu_threads()
        memory = device_memory if device_memory is not None else host
        how = (f"memory: {'given' if device_memory is not None else 'MemAvailable'}; throughput: "
               f"{cpu_rates_how(dtype)} x {CPU_EFFICIENCY} efficiency, copy bandwidth "
               f"{bandwidth / 1e9:.0f} GB/s")
        return DeviceInfo("cpu", device_name or f"cpu ({threads} threads)", memory, host,
                          measured_flops * CPU_EFFICIENCY, bandwidth, how)
    if kind == "mps":
        bf16, fp32, fp16, bandwidth = 10.0, 5.0, 10.0, 200.0
        peak = {"bfloat16": bf16, "float16": fp16, "float32": fp32}[dtype]
        return DeviceInfo("mps", device_name or "mps", device_memory if device_memory is not None else host, host,
                          peak * 1e12 * CUDA_EFFICIENCY, bandwidth * 1e9,
                          "Apple GPU: unified memory (MemAvailable), throughput assumed")
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    names, free = [], []
    if device_name is None or device_memory is None:
        try:
            import torch

            if torch.cuda.is_available():
                visible = range(torch.cuda.device_count()) if device_map is not None else [index]
                for i in visible:
                    names.append(torch.cuda.get_device_name(i))
                    free.append(torch.cuda.mem_get_info(i)[0])
        except Exception:  # noqa: BLE001 - no usable CUDA: the figures stay unknown
            names, free = [], []
    name = device_name or (names[0] if names else "unknown GPU")
    peak, bandwidth, row = gpu_rates(name, dtype)
    if device_memory is not None:
        gpu_memory, memory_how = int(device_memory), "given"
    elif free:
        gpu_memory = int(sum(free))
        memory_how = f"free memory of {len(free)} GPU{'s' if len(free) > 1 else ''} (torch.cuda.mem_get_info)"
    else:
        gpu_memory, memory_how = None, "unknown (no CUDA device here: pass the memory to plan for one)"
    memory = gpu_memory
    if device_map is not None and gpu_memory is not None and host is not None:
        memory = gpu_memory + host
        memory_how += " + available CPU RAM (--device-map offloads to the CPU)"
    how = (f"memory: {memory_how}; throughput: {name}: {peak:g} TFLOP/s dense {dtype} ({row}) x {CUDA_EFFICIENCY} "
           f"efficiency, memory bandwidth {bandwidth:g} GB/s")
    return DeviceInfo("cuda", name, memory, host, peak * 1e12 * CUDA_EFFICIENCY, bandwidth * 1e9, how,
                      gpu_memory=gpu_memory)


def _cpu_threads() -> int:
    try:
        import torch

        return torch.get_num_threads()
    except Exception:  # noqa: BLE001
        return os.cpu_count() or 1
