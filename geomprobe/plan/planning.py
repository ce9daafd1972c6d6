"""The plan: plan() runs each suite's planner and assembles the Plan (weights, the activation peak,
the memory phases and whether each fits, the time, the notes); recommend_batch_size and the
runner's preflight read it."""

from __future__ import annotations

import functools
import time
from dataclasses import asdict, dataclass, field, replace
from typing import NamedTuple

from geomprobe.errors import ConfigError

from .activations import _fmt_bytes, _fmt_n, _fmt_range, _fmt_time, activation_per_prompt, sweep_flops
from .architecture import Architecture
from .constants import (
    CPU_DEFAULT_BATCH,
    CPU_EFFICIENCY,
    DISK_BYTES_PER_S,
    DTYPE_BYTES,
    MARGIN_FRACTION,
    MARGIN_MIN,
    MAX_BATCH,
    OVERHEAD_S_PER_LAYER_BATCH,
    PCIE_BYTES_PER_S,
    PROCESS_BYTES,
    QUANT_SLOWDOWN,
    STARTUP_S,
)
from .context import Load, PlanContext, SuitePlan, planners
from .device import DeviceInfo, cpu_benchmark, device_info
from .target import ModelTarget, cached_tokenizer, resolve_target
from .tokens import TokenCounter
from .weights import _experts_quantised, weights_bytes


@dataclass
class Phase:
    name: str
    device_bytes: int  # weights + activations resident on the device (or the pool under a device map)
    host_bytes: int  # CPU RAM needed beside it, when the device is a GPU
    weights_bytes: int
    activation_bytes: int
    process_bytes: int = 0  # on a CPU: the Python process itself (PROCESS_BYTES), in device_bytes


@dataclass
class Plan:
    model: str
    source: str
    arch: Architecture | None
    dtype: str = "float32"
    quantize: str | None = None
    device: str = "cpu"
    device_map: str | None = None
    backend: str = "hf"
    batch_size: int = 8
    device_info: DeviceInfo | None = None
    weights_bytes: int = 0
    weights_how: str = ""
    activation_bytes: int = 0  # peak of one batch, the largest over the sweeps
    activation_per_prompt: int = 0  # per prompt, over the sweeps that run at the run's batch size (they scale with it)
    activation_fixed: int = 0  # the peak of sweeps with a batch size of their own (wind-tunnel scoring)
    activation_batch: int = 8  # the batch size of the peak sweep
    activation_how: str = ""
    activation_where: str = ""
    suites: list[SuitePlan] = field(default_factory=list)
    flops: float = 0.0
    time_s: tuple[float, float] = (0.0, 0.0)
    load_s: tuple[float, float] = (0.0, 0.0)
    time_how: str = ""
    phases: list[Phase] = field(default_factory=list)
    fits: bool = True
    why: str = ""
    notes: list[str] = field(default_factory=list)
    tokens_how: str = ""

    @property
    def n_params(self) -> int:
        return self.arch.n_params if self.arch else 0

    @property
    def n_params_active(self) -> int:
        return self.arch.n_params_active if self.arch else 0

    @property
    def n_passes(self) -> int:
        return sum(s.n_passes for s in self.suites)

    @property
    def n_prompts(self) -> int:
        return sum(s.n_prompts for s in self.suites)

    @property
    def n_batches(self) -> int:
        return sum(s.n_batches for s in self.suites)

    @property
    def tokens(self) -> float:
        return sum(s.tokens for s in self.suites)

    @property
    def n_loads(self) -> int:
        return 1 + sum(len(s.loads) for s in self.suites)

    def suite(self, name: str) -> SuitePlan:
        for entry in self.suites:
            if entry.name == name:
                return entry
        raise KeyError(name)

    @classmethod
    def unavailable(cls, model: str, error: str) -> Plan:
        """A plan that could not be made (preflight never raises): it claims to fit, and says why not known."""
        return cls(model=model, source="", arch=None, fits=True, why=f"no plan: {error}")

    def to_dict(self) -> dict:
        info = self.device_info
        return {
            "model": self.model, "source": self.source, "shape": self.arch.shape() if self.arch else None,
            "n_params": self.n_params, "n_params_active": self.n_params_active, "dtype": self.dtype,
            "quantize": self.quantize, "device": self.device, "device_map": self.device_map, "backend": self.backend,
            "batch_size": self.batch_size,
            "device_info": None if info is None else {"kind": info.kind, "name": info.name, "memory": info.memory,
                                                      "host_memory": info.host_memory, "flops": info.flops,
                                                      "bandwidth": info.bandwidth, "how": info.how},
            "weights_bytes": self.weights_bytes, "weights_how": self.weights_how,
            "activation_bytes": self.activation_bytes, "activation_per_prompt": self.activation_per_prompt,
            "activation_fixed": self.activation_fixed,
            "activation_how": self.activation_how, "activation_where": self.activation_where,
            "suites": [s.to_dict() for s in self.suites], "n_passes": self.n_passes, "n_prompts": self.n_prompts,
            "n_batches": self.n_batches, "tokens": round(self.tokens), "tokens_how": self.tokens_how,
            "n_loads": self.n_loads, "flops": self.flops, "time_s": list(self.time_s), "load_s": list(self.load_s),
            "time_how": self.time_how, "phases": [asdict(p) for p in self.phases], "fits": self.fits, "why": self.why,
            "recommended_batch_size": recommend_batch_size(self) if self.arch else None, "notes": self.notes,
        }

    def lines(self) -> list[str]:
        """The plan as aligned lines: label, figure, how it was computed."""
        if self.arch is None:
            return [f"plan      {self.model}: {self.why}"]
        a, info = self.arch, self.device_info
        rows: list[tuple[str, str, str]] = []
        quant = f", --quantize {self.quantize}" if self.quantize else ""
        dmap = f", --device-map {self.device_map}" if self.device_map else ""
        rows.append(("model", self.model, f"{a.model_type}: {a.n_layers} layers, {a.n_heads} heads ({a.n_kv_heads} kv) "
                     f"x {a.d_head}, width {a.d_model}, MLP {a.d_ff}{' gated' if a.gated else ''}, vocab {a.vocab}"
                     + (f", {a.n_experts} experts ({a.experts_per_token} per token)" if a.n_experts else "")
                     + f"; from the {self.source}"))
        active = (f"; {self.n_params_active:,} active per token ({a.experts_per_token} of {a.n_experts} experts)"
                  if a.n_experts else "")
        rows.append(("params", f"{self.n_params / 1e9:.3g}B" if self.n_params >= 1e9 else f"{self.n_params / 1e6:.3g}M",
                     f"{self.n_params:,}{active}"))
        rows.append(("device", info.name if info else self.device,
                     f"{self.device}, {self.dtype}{quant}{dmap}, backend {self.backend}, batch {self.batch_size}; "
                     + (info.how if info else "")))
        rows.append(("weights", _fmt_bytes(self.weights_bytes), self.weights_how))
        rows.append(("activations", _fmt_bytes(self.activation_bytes),
                     f"one batch at the peak ({self.activation_where}): {self.activation_batch} x ({self.activation_how})"))
        for suite in self.suites:
            if suite.skipped:
                rows.append((suite.name, "skipped", suite.skipped))
                continue
            rows.append((suite.name, f"{suite.n_passes:,} pass{'' if suite.n_passes == 1 else 'es'}",
                         f"{_fmt_n(suite.n_prompts)} prompts x passes, {suite.n_batches:,} forward calls, "
                         f"{_fmt_n(suite.tokens)} tokens"
                         + (f"; {len(suite.loads)} extra model load{'s' if len(suite.loads) > 1 else ''}"
                            if suite.loads else "")))
            for sweep in suite.sweeps:
                times = f"{sweep.repeat} x " if sweep.repeat > 1 else ""
                rows.append(("", f"{times}{sweep.lengths.n:,}",
                             f"{sweep.what}: {sweep.lengths.mean:.0f} tokens mean, {sweep.lengths.max} max, batch "
                             f"{sweep.batch_size}" + (" [untrained copy]" if sweep.on == "null" else "")))
            for load in suite.loads:
                rows.append(("", "load", f"{load.what}: {_fmt_bytes(load.bytes)} on the {load.where} ({load.note})"))
            for note in suite.notes:
                rows.append(("", "note", note))
        rows.append(("total", f"{self.n_passes:,} passes",
                     f"{_fmt_n(self.n_prompts)} prompts x passes, {self.n_batches:,} forward calls, "
                     f"{_fmt_n(self.tokens)} tokens ({self.tokens_how}); {self.n_loads} model load"
                     f"{'s' if self.n_loads > 1 else ''}"))
        rows.append(("compute", f"{self.flops:.3g} FLOP",
                     "2 x active matmul params x tokens + 2 x vocab x d_model per prompt + attention"))
        low, high = self.time_s
        rows.append(("time", _fmt_range(low, high), self.time_how))
        for phase in self.phases:
            rows.append(("memory", _fmt_bytes(phase.device_bytes + _margin(phase.device_bytes)),
                         f"{phase.name}: weights {_fmt_bytes(phase.weights_bytes)} + activations "
                         f"{_fmt_bytes(phase.activation_bytes)}"
                         + (f" + the process {_fmt_bytes(phase.process_bytes)} (Python, torch, transformers)"
                            if phase.process_bytes else "") + " + margin max(10%, 1 GiB)"
                         + (f"; CPU RAM {_fmt_bytes(phase.host_bytes)}" if phase.host_bytes else "")))
        memory = info.memory if info else None
        rows.append(("fits", "yes" if self.fits else "NO", self.why or f"{_fmt_bytes(memory)} available"))
        if self.fits and info is not None and info.memory is not None:
            rows.append(("batch size", str(recommend_batch_size(self)),
                         "recommended: the largest power of two <= 64 whose activations fit beside the weights"
                         if info.kind == "cuda" else "on a CPU: 8 (the default)"))
        for note in self.notes:
            rows.append(("note", "", note))
        width = max(len(r[0]) for r in rows)
        figure = max(len(r[1]) for r in rows)
        return [f"{label:<{width}}  {value:>{figure}}  {how}".rstrip() for label, value, how in rows]


def _margin(need: float) -> int:
    return int(max(MARGIN_FRACTION * need, MARGIN_MIN))


def _phase_need(phase: Phase, batch: int, per_prompt: int, fixed: int = 0) -> int:
    return phase.device_bytes - phase.activation_bytes + max(batch * per_prompt, fixed)


def recommend_batch_size(p: Plan) -> int:
    """The largest power of two <= 64 whose activation peak fits in the memory left after the weights
    (with the margin) in every phase, on CUDA; 8 on a CPU (today's default). 1 when none fits."""
    info = p.device_info
    if info is None or info.kind != "cuda" or info.memory is None:
        return CPU_DEFAULT_BATCH
    batch = MAX_BATCH
    while batch > 1:
        if all(_fits(_phase_need(phase, batch, p.activation_per_prompt, p.activation_fixed), info.memory)
               for phase in p.phases):
            return batch
        batch //= 2
    return 1


def _fits(need: int, memory: int | None) -> bool:
    return memory is None or need + _margin(need) <= memory


def _configs(suites, suite_options: dict):
    """Suite configs from names / configs, with the options that each one has applied to those built
    from names; an option no chosen suite has is an error."""
    from geomprobe.options import fields_of
    from geomprobe.suites import SUITES, SuiteConfig, get_suite, parse_suites

    items = [suites] if isinstance(suites, (str, SuiteConfig)) else list(suites)
    configs, explicit_all = {}, False
    used = set()
    for item in items:
        if isinstance(item, SuiteConfig):
            configs[item.suite] = item
        elif isinstance(item, str):
            explicit_all = explicit_all or "all" in [s.strip() for s in item.split(",")]
            for name in parse_suites(item):
                cls = get_suite(name).config
                names = {f.name for f, _ in fields_of(cls)}
                given = {k: v for k, v in suite_options.items() if k in names}
                used |= set(given)
                configs.setdefault(name, cls(**given))
        else:
            raise ConfigError(f"a suite is a name or a suite config, not {type(item).__name__}")
    for name in sorted(set(suite_options) - used):
        owners = [s for s, spec in SUITES.items() if name in {f.name for f, _ in fields_of(spec.config)}]
        flag = "--" + name.replace("_", "-")
        if not owners:
            raise ConfigError(f"{flag} is not an option of any suite")
        raise ConfigError(f"{flag} is an option of the {', '.join(owners)} suite{'s' if len(owners) > 1 else ''}, "
                          f"not of {', '.join(configs) or '(none)'}")
    if not configs:
        raise ConfigError("no suite to plan: give a suite name, e.g. 'sula'")
    return [configs[name] for name in SUITES if name in configs], explicit_all


def recommended_batch(**plan_arguments) -> int:
    """recommend_batch_size(plan(**plan_arguments)): the planner as the runner hands it to a suite
    (SuiteContext.batch_planner), for the ablation suite's stacked conditions on CUDA."""
    return recommend_batch_size(plan(**plan_arguments))


def plan(model_spec: str | None = None, suites="sula", run_config=None, device: str | None = None,
         batch_size: int | None = None, *, dtype: str | None = None, quantize: str | None = None,
         device_map: str | None = None, backend: str | None = None, device_memory: int | None = None,
         host_memory: int | None = None, device_name: str | None = None, tokenizer=None,
         **suite_options) -> Plan:
    """The memory and time plan of running `suites` on `model_spec` (see the geomprobe.plan docstring).

    suites: a name, "a,b", "all", suite configs, or a list of these; suite_options (n_per_k=100,
    n_random=5, ...) apply to the suites built from names that have them. run_config: a RunConfig
    (dtype, quantisation, device map, batch size, layers, prompts, ...); the keyword arguments
    override it. device: auto | cpu | cuda[:N] | mps (default: the run config's, auto = cuda when
    torch sees one). device_memory / host_memory (bytes) and device_name plan for another machine
    (e.g. device="cuda", device_name="NVIDIA A100-SXM4-80GB", device_memory=80 * 2**30).
    tokenizer: count prompt tokens with it (else estimated; wind tunnels are exact).
    Raises ConfigError for an unknown model, suite or option."""
    from geomprobe.config import RunConfig

    run = run_config if run_config is not None else RunConfig(model=model_spec or RunConfig().model)
    if not isinstance(run, RunConfig):
        raise ConfigError(f"run_config must be a RunConfig, not {type(run).__name__}")
    overrides = {k: v for k, v in dict(dtype=dtype, quantize=quantize, device_map=device_map, backend=backend,
                                       batch_size=batch_size, device=device).items() if v is not None}
    if model_spec is not None:
        overrides["model"] = model_spec
    if overrides:
        run = replace(run, **overrides)  # validated again: a bad value is a one-line ConfigError
    if run.batch_size is None or run.batch_size == "auto":  # planned at the CPU default; recommend_batch_size: a GPU's
        run = replace(run, batch_size=CPU_DEFAULT_BATCH)
    configs, explicit_all = _configs(suites, suite_options)
    from geomprobe.suites.base import limited_configs

    configs = limited_configs(configs, run)
    target = resolve_target(run.model)
    device = run.device
    if device == "auto":
        device = _auto_device()
    counter = TokenCounter(target, tokenizer, run.max_tokens)
    ctx = PlanContext(target, run, counter, tokenizer, configs)
    registry, suite_plans = planners(), []
    for config in configs:
        name = config.suite
        planner = registry.get(name)
        if planner is None:
            suite_plans.append(SuitePlan(name, skipped="not planned: no cost model (a plug-in suite without "
                                                        "geomprobe.plan.register_planner); its passes are not in the "
                                                        "totals"))
            continue
        entry = planner(ctx, config)
        if entry.skipped and not explicit_all:
            entry.skipped += " (named on its own the run refuses it; --suite all skips it)"
        elif name in ctx.null_notes:
            entry.notes.append(ctx.null_notes[name])
        suite_plans.append(entry)
    return _assemble(target, run, device, suite_plans, device_memory, host_memory, device_name, counter)


def _auto_device() -> str:
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except Exception:  # noqa: BLE001
        return "cpu"


def _assemble(target: ModelTarget, run, device: str, suite_plans: list[SuitePlan], device_memory, host_memory,
              device_name, counter: TokenCounter) -> Plan:
    """The Plan of these suite plans: the weights, the activation peak, the memory phases and
    whether each fits, the time of the sweeps and the loads, and the notes."""
    arch = target.arch
    info = device_info(device, run.dtype, run.device_map, device_memory, host_memory, device_name)
    weights, weights_how = weights_bytes(arch, run.dtype, run.quantize)
    if run.backend == "tl":
        weights_how += "; x 2 while the tl backend runs (its own copy of the model)"
    peak = _activation_peak(arch, run, info, suite_plans)
    loads = [load for suite in suite_plans for load in suite.loads]
    phases = _phases(arch, run, info, weights, peak.bytes, loads)
    fits, why = _check_fits(phases, info)
    sweeps = _sweep_time(arch, run, info, suite_plans, weights)
    init_rate = _init_rate()
    load_low, load_high = _load_time(weights, loads, info, init_rate)
    load_low, load_high = load_low + STARTUP_S[0], load_high + STARTUP_S[1]
    time_how = _time_how(run, suite_plans, sweeps, (load_low, load_high), init_rate)
    time_s = (sweeps.low + load_low, sweeps.high + load_high)
    if arch is not None:
        calibrated = _calibrate(arch, run, info, suite_plans, weights, init_rate)
        if calibrated is not None:
            model_load = _load_time(weights, [], info, init_rate)
            time_s = (calibrated[0] + model_load[0] + STARTUP_S[0], calibrated[1] + model_load[1] + STARTUP_S[1])
            time_how = calibrated[2] + "; before calibration: " + time_how
        else:
            time_how = ("uncalibrated: no run of these suites on a model of about this size has finished on this "
                        "machine yet (each finished suite is recorded and calibrates the next plan); " + time_how)
    return Plan(model=target.spec, source=target.arch.source, arch=arch, dtype=run.dtype, quantize=run.quantize,
                device=device, device_map=run.device_map, backend=run.backend, batch_size=run.batch_size,
                device_info=info, weights_bytes=weights, weights_how=weights_how, activation_bytes=peak.bytes,
                activation_per_prompt=peak.per_prompt, activation_fixed=peak.fixed, activation_batch=peak.batch,
                activation_how=peak.how, activation_where=peak.where, suites=suite_plans, flops=sweeps.flops,
                time_s=time_s, load_s=(load_low, load_high),
                time_how=time_how, phases=phases, fits=fits, why=why, notes=_plan_notes(target, run, info, weights),
                tokens_how=counter.how)


class _Peak(NamedTuple):
    """The activation peak of one batch over the model's sweeps (null sweeps share the same shape)."""

    bytes: int  # the largest batch x per-prompt activations
    per_prompt: int  # per prompt, over the sweeps at the run's batch size (recommend_batch_size scales it)
    fixed: int  # the largest batch of the sweeps at a batch size of their own
    how: str  # the peak's formula
    where: str  # the suite, sweep and length that set it
    batch: int  # its batch


def _activation_peak(arch: Architecture, run, info: DeviceInfo, suite_plans: list[SuitePlan]) -> _Peak:
    peak, per_prompt, fixed, how, where, peak_batch = 0, 0, 0, "", "no sweep", run.batch_size
    for suite in suite_plans:
        for sweep in suite.sweeps:
            if not sweep.lengths.n:
                continue
            kind = info.kind if sweep.on == "model" or run.device_map is None else "cpu"
            one, formula = activation_per_prompt(arch, sweep.lengths.max, run.dtype, kind, sweep.layers,
                                                 sweep.readout_width, run.backend, sweep.full_logits)
            batch = min(sweep.batch_size, sweep.lengths.n)
            if sweep.batch_size == run.batch_size:
                per_prompt = max(per_prompt, one)
            else:
                fixed = max(fixed, batch * one)
            if batch * one > peak:
                peak, how, peak_batch = batch * one, formula, batch
                where = f"{suite.name}, {sweep.what.split(':')[0]}, {sweep.lengths.max} tokens"
    return _Peak(peak, max(per_prompt, 1), fixed, how, where, peak_batch)


def _phases(arch: Architecture, run, info: DeviceInfo, weights: int, peak: int, loads: list[Load]) -> list[Phase]:
    """The memory phases: the model alone; with each kind of load beside it. On a CPU each phase
    also holds the process itself (PROCESS_BYTES): the run's RAM is all of it."""
    phases = _device_phases(arch, run, info, weights, peak, loads)
    if info.kind != "cpu":
        return phases
    return [replace(phase, device_bytes=phase.device_bytes + PROCESS_BYTES, process_bytes=PROCESS_BYTES)
            for phase in phases]


def _device_phases(arch: Architecture, run, info: DeviceInfo, weights: int, peak: int,
                   loads: list[Load]) -> list[Phase]:
    tl_factor = 2 if run.backend == "tl" else 1
    null_weights = arch.n_params * DTYPE_BYTES[run.dtype]
    phases = [Phase("the model", weights * tl_factor + peak, 0, weights * tl_factor, peak)]
    if any(load.kind in ("init", "checkpoint") and load.what.startswith("null") for load in loads):
        if run.device_map is None:
            host = null_weights if info.kind == "cuda" else 0
            phases.append(Phase("with an untrained null copy beside it (unquantised, one at a time)",
                                weights + null_weights + peak, host, weights + null_weights, peak))
        else:
            phases.append(Phase("with an untrained null copy on the CPU (--device-map)", weights + null_weights + peak,
                                null_weights + peak, weights + null_weights, peak))
    step0 = [load for load in loads if load.what.startswith("step0")]
    if step0:
        if info.kind == "cpu":
            phases.append(Phase("with the step0 key baseline (float32)", weights + step0[0].bytes + peak, 0,
                                weights + step0[0].bytes, peak))
        else:
            phases.append(Phase("with the step0 key baseline (float32, CPU)", weights + peak, step0[0].bytes,
                                weights, peak))
    return phases


def _check_fits(phases: list[Phase], info: DeviceInfo) -> tuple[bool, str]:
    """(fits, why): the first phase that does not fit the device's memory, or the CPU RAM a copy is
    built in, says why."""
    for phase in phases:
        need = phase.device_bytes
        if info.memory is not None and not _fits(need, info.memory):
            return False, (f"{phase.name}: needs {_fmt_bytes(need + _margin(need))} (weights "
                           f"{_fmt_bytes(phase.weights_bytes)} + activations {_fmt_bytes(phase.activation_bytes)} + "
                           + (f"the process {_fmt_bytes(phase.process_bytes)} + " if phase.process_bytes else "")
                           + f"margin {_fmt_bytes(_margin(need))}) but {info.name} has {_fmt_bytes(info.memory)}")
        host_limit = info.host_memory
        if phase.host_bytes and host_limit is not None and info.kind != "cpu" and \
                phase.host_bytes + MARGIN_MIN > host_limit:
            return False, (f"{phase.name}: needs {_fmt_bytes(phase.host_bytes + MARGIN_MIN)} of CPU RAM (the copy is "
                           f"built there, + 1 GiB) but {_fmt_bytes(host_limit)} is available")
    if info.memory is None:
        return True, "device memory unknown: not checked (pass the memory to plan for a GPU that is not here)"
    return True, ""


@dataclass
class _SweepTime:
    """The time of the sweeps: compute, weight reads and per-call overhead, in seconds."""

    flops: float
    compute_s: float
    memory_s: float
    overhead_s: float
    streamed: int  # the model's weights read per forward call (on the GPUs, x 2 under the tl backend)
    offloaded: int  # weights offloaded to the CPU under --device-map, copied over PCIe per call

    @property
    def low(self) -> float:
        return max(self.compute_s, self.memory_s)

    @property
    def high(self) -> float:
        return 2 * (self.compute_s + self.memory_s) + self.overhead_s


def _sweep_time(arch: Architecture, run, info: DeviceInfo, suite_plans: list[SuitePlan], weights: int) -> _SweepTime:
    tl_factor = 2 if run.backend == "tl" else 1
    null_weights = arch.n_params * DTYPE_BYTES[run.dtype]
    gpu_weights = weights
    offloaded = 0
    if run.device_map is not None and info.kind == "cuda" and info.gpu_memory is not None:
        offloaded = max(0, weights - info.gpu_memory)
        gpu_weights = weights - offloaded
    cpu_rate = None
    slow = QUANT_SLOWDOWN.get(run.quantize, 1.0)
    flops_total, compute_s, memory_s, overhead_s = 0.0, 0.0, 0.0, 0.0
    for suite in suite_plans:
        for sweep in suite.sweeps:
            flops = sweep_flops(arch, sweep)
            flops_total += flops
            on_cpu_null = sweep.on == "null" and run.device_map is not None
            if on_cpu_null or info.kind == "cpu":
                if cpu_rate is None:
                    rate, bandwidth = cpu_benchmark(run.dtype)
                    cpu_rate = (rate * CPU_EFFICIENCY, bandwidth)
                rate, bandwidth = cpu_rate if on_cpu_null else (info.flops, info.bandwidth)
            else:
                rate, bandwidth = info.flops, info.bandwidth
            streamed = null_weights if sweep.on == "null" else gpu_weights * tl_factor
            quant = 1.0 if sweep.on == "null" else slow
            compute_s += flops / (rate * quant)
            memory_s += sweep.n_batches * streamed * sweep.blocks / bandwidth
            if sweep.on == "model" and offloaded:
                memory_s += sweep.n_batches * offloaded / PCIE_BYTES_PER_S
            overhead_s += sweep.n_batches * arch.n_layers * sweep.blocks * OVERHEAD_S_PER_LAYER_BATCH
    return _SweepTime(flops_total, compute_s, memory_s, overhead_s, gpu_weights * tl_factor, offloaded)


def _calibrate(arch: Architecture, run, info: DeviceInfo, suite_plans: list[SuitePlan], weights: int,
               init_rate: float) -> tuple[float, float, str] | None:
    """Each suite's own estimate, and where this machine has finished runs of it on a model of about
    this size (geomprobe.timing), the estimate times their median measured / estimated ratio. Returns
    (low, high, how) of the suites' time, None when no suite is calibrated."""
    from geomprobe.timing import SPREAD, calibration

    device_name = info.name if info.kind != "cpu" else None
    low = high = 0.0
    said, uncalibrated = [], []
    for suite in suite_plans:
        if suite.skipped:
            continue
        sweeps = _sweep_time(arch, run, info, [suite], weights)
        loads = _load_time(0, suite.loads, info, init_rate)
        suite.estimate_s = (sweeps.low + loads[0], sweeps.high + loads[1])
        found = calibration(suite.name, arch.n_params, device_name)
        if found is None:
            uncalibrated.append(suite.name)
            low, high = low + suite.estimate_s[0], high + suite.estimate_s[1]
            continue
        middle = found["ratio"] * suite.estimate_s[1]
        suite.calibrated = {**found, "time_s": (middle / SPREAD, middle * SPREAD)}
        low, high = low + middle / SPREAD, high + middle * SPREAD
        said.append(f"{suite.name} {found['ratio']:.2g} x ({found['n_runs']} run{'s' if found['n_runs'] > 1 else ''}, "
                    f"last {found['last'][:10]})")
    if not said:
        return None
    how = ("calibrated on this machine's finished runs of models within 10x this size: each suite's estimate (its "
           f"upper bound below) times its median measured / estimated ratio, / and x {SPREAD}: " + ", ".join(said))
    if uncalibrated:
        how += f"; not calibrated yet (uncalibrated range): {', '.join(uncalibrated)}"
    return low, high, how


def _load_time(weights: int, loads: list[Load], info: DeviceInfo, init_rate: float) -> tuple[float, float]:
    """(low, high) seconds to load the model from disk and build or load each model beside it."""
    load_low, load_high = weights / DISK_BYTES_PER_S[1], weights / DISK_BYTES_PER_S[0]
    for load in loads:
        if load.kind == "init":
            build = 2 * load.draws * load.n_params / init_rate  # high end: twice normal_'s rate per draw
            move = load.bytes / PCIE_BYTES_PER_S if load.where == "device" and info.kind == "cuda" else 0.0
            load_low, load_high = load_low + build / 2 + move, load_high + build + 2 * move
        else:
            load_low, load_high = load_low + load.bytes / DISK_BYTES_PER_S[1], load_high + load.bytes / DISK_BYTES_PER_S[0]
    return load_low, load_high


def _time_how(run, suite_plans: list[SuitePlan], sweeps: _SweepTime, load_s: tuple[float, float],
              init_rate: float) -> str:
    return (f"sweeps {_fmt_range(sweeps.low, sweeps.high)}: [max(compute {_fmt_time(sweeps.compute_s)}, "
            f"weight reads {_fmt_time(sweeps.memory_s)} ({sum(s.n_batches for s in suite_plans):,} forward calls x "
            f"{_fmt_bytes(sweeps.streamed)} / bandwidth"
            + (" x the share of blocks a call runs" if any(s.blocks < 1 for p in suite_plans for s in p.sweeps)
               else "")
            + (f", + {_fmt_bytes(sweeps.offloaded)} offloaded over PCIe each" if sweeps.offloaded else "")
            + ")), 2 x (compute + reads) + 1 ms per layer and call]"
            + (f" at {QUANT_SLOWDOWN[run.quantize]} x the dense rate for {run.quantize} kernels" if run.quantize else "")
            + f"; + start-up and loads {_fmt_range(*load_s)} (imports and the run directory "
              f"{_fmt_range(*STARTUP_S)}; weights from disk at 0.5-2 GB/s; null "
              f"copies initialised on the CPU at a measured {init_rate / 1e6:.0f}M params/s per draw)")


def _plan_notes(target: ModelTarget, run, info: DeviceInfo, weights: int) -> list[str]:
    """What the figures leave out or the run should know: training, quantisation, downloads, dtype."""
    arch = target.arch
    notes = []
    if target.windtunnel is not None and target.windtunnel.get("train_s"):
        train = target.windtunnel["train_s"]
        notes.append(f"{target.name} is not trained yet: first use trains it (about {_fmt_time(train)} on 2 CPU "
                     "cores), not counted above")
    if run.quantize and arch.experts and not _experts_quantised():
        notes.append(f"--quantize {run.quantize} leaves Mixtral's fused expert weights in {run.dtype} under "
                     "transformers >= 5: use --device-map auto (GPUs + CPU) rather than counting on 4-bit experts")
    if target.kind == "hub" and target.tokenizer_dir is None:
        notes.append(f"{target.hub_id} is not in the local Hugging Face cache: the run needs it downloaded first "
                     f"(about {_fmt_bytes(arch.n_params * DTYPE_BYTES[run.dtype])} in {run.dtype})")
    if info.kind == "cuda" and run.device_map is None and info.host_memory is not None and weights > info.host_memory:
        notes.append(f"without --device-map the weights are loaded through CPU memory first ({_fmt_bytes(weights)}, "
                     f"{_fmt_bytes(info.host_memory)} available): --device-map auto loads them straight to the GPUs")
    if run.dtype == "float32" and info.kind == "cuda":
        notes.append("float32 on a GPU runs at the fp32 rate (TF32 is off by default); --dtype bfloat16 halves the "
                     "weights and is many times faster")
    return notes


@functools.cache
def _init_rate() -> float:
    """Parameters per second torch's normal_ initialises on this CPU (measured once, ~10 ms)."""
    try:
        import torch

        x = torch.empty(2**21)
        x.normal_()
        start = time.perf_counter()
        for _ in range(3):
            x.normal_()
        return 3 * x.numel() / max(time.perf_counter() - start, 1e-9)
    except Exception:  # noqa: BLE001
        return 2e8


def preflight(model_spec: str, run_config=None, suite_configs=None, device: str | None = None) -> Plan:
    """The runner's check before it loads a model: the plan of these suites (refuse the run when
    `not plan.fits`; plan.why says why). Cheap (no weights, no download, no meta-device build) and
    never raises: a plan that cannot be made comes back with fits=True and the reason in why. The
    prompts are counted with the model's tokenizer when it is at hand (cached_tokenizer), as
    `geomprobe plan` counts them: an estimate from characters misses the longest prompt, which sets
    the activation peak, by up to 2x on byte-level tokenizers."""
    try:
        spec = model_spec if model_spec is not None else getattr(run_config, "model", None)
        tokenizer = cached_tokenizer(resolve_target(spec), quiet=False) if spec is not None else None
        return plan(model_spec, suite_configs if suite_configs is not None else "extract", run_config=run_config,
                    device=device, tokenizer=tokenizer)
    except Exception as error:  # noqa: BLE001 - a preflight must never stop a run by itself
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        return Plan.unavailable(str(model_spec), text)

