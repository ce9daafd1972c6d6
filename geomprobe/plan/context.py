"""Sweeps, loads and suites: what a suite's planner reads (PlanContext) and returns (a SuitePlan of
Sweeps and Loads), and the registry of planners (PLANNERS, register_planner) that the suites'
plan faces fill."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from geomprobe.errors import ConfigError

from .target import ModelTarget
from .tokens import Lengths, TokenCounter, _demo_texts, _user_texts, corpus_texts


@dataclass
class Passes:
    """One pass over a prompt set (repeat: identical passes, e.g. the ablation's conditions)."""

    what: str
    lengths: Lengths
    batch_size: int
    repeat: int = 1
    layers: int = 0  # layers whose final-token readouts are kept
    readout_width: int = 0  # floats per layer kept
    on: str = "model"  # "model" | "null" (an untrained copy: unquantised, on the CPU under --device-map)
    full_logits: bool = False  # the module computes [batch, T, vocab] logits (wind-tunnel scoring)
    blocks: float = 1.0  # the share of the decoder blocks a pass runs (prefix reuse: < 1)

    @property
    def n_prompts(self) -> int:
        return self.lengths.n * self.repeat

    @property
    def n_batches(self) -> int:
        return -(-self.lengths.n // self.batch_size) * self.repeat if self.lengths.n else 0

    @property
    def tokens(self) -> float:
        return self.lengths.total * self.repeat

    def to_dict(self) -> dict:
        return {"what": self.what, "n_prompts_per_pass": self.lengths.n, "passes": self.repeat,
                "n_prompts": self.n_prompts, "batch_size": self.batch_size, "n_batches": self.n_batches,
                "tokens_mean": round(self.lengths.mean, 2), "tokens_max": self.lengths.max,
                "tokens": round(self.tokens), "tokens_how": self.lengths.how, "on": self.on,
                "blocks": round(self.blocks, 4)}


@dataclass
class Load:
    """A model built or loaded beside the main one while a suite runs."""

    what: str
    kind: str  # "init" (built from the config) | "checkpoint" (read from disk or the hub)
    n_params: int
    bytes: int
    where: str  # "device" | "cpu"
    note: str = ""
    draws: int = 1  # init: times each weight is drawn (1 for --null init:N, 2 for init-legacy:N)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class SuitePlan:
    name: str
    sweeps: list[Passes] = field(default_factory=list)  # the passes it runs ("sweeps" in `plan --json`)
    loads: list[Load] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None
    estimate_s: tuple[float, float] = (0.0, 0.0)  # (low, high) of its sweeps and loads, before calibration
    calibrated: dict | None = None  # geomprobe.timing.calibration + "time_s": its calibrated (low, high)

    @property
    def n_passes(self) -> int:
        return sum(s.repeat for s in self.sweeps)

    @property
    def n_prompts(self) -> int:
        return sum(s.n_prompts for s in self.sweeps)

    @property
    def n_batches(self) -> int:
        return sum(s.n_batches for s in self.sweeps)

    @property
    def tokens(self) -> float:
        return sum(s.tokens for s in self.sweeps)

    def passes(self, what: str) -> int:
        """Passes of the sweeps whose description starts with `what`."""
        return sum(s.repeat for s in self.sweeps if s.what.startswith(what))

    def to_dict(self) -> dict:
        return {"name": self.name, "skipped": self.skipped, "n_passes": self.n_passes, "n_prompts": self.n_prompts,
                "n_batches": self.n_batches, "tokens": round(self.tokens), "sweeps": [s.to_dict() for s in self.sweeps],
                "loads": [ld.to_dict() for ld in self.loads], "notes": self.notes, "estimate_s": list(self.estimate_s),
                "calibrated": self.calibrated}


class PlanContext:
    """What the suite planners share: the target, the run configuration, token counting, and the
    configs of every suite in the plan (config_of)."""

    def __init__(self, target: ModelTarget, run, counter: TokenCounter, tokenizer=None, configs=()):
        self.target, self.run, self.counter, self.tokenizer = target, run, counter, tokenizer
        self.configs = {c.suite: c for c in configs}  # the suites planned together, by name
        self.null_notes: dict[str, str] = {}  # suite -> what its untrained copies can decide
        self.arch = target.arch
        self._task = None

    @property
    def task(self):
        if self.target.windtunnel is None:
            return None
        if self._task is None:
            from geomprobe.windtunnel.tasks import make_task

            wt = self.target.windtunnel
            self._task = make_task(wt["task"], **wt.get("task_options", {}))
        return self._task

    @property
    def batch(self) -> int:
        return self.run.batch_size

    def config_of(self, suite: str):
        """The config of `suite` when it is planned together with the one being planned, else None
        (the ablation planner reuses the sula suite's axes)."""
        return self.configs.get(suite)

    def readout_width(self, readouts) -> int:
        a = self.arch
        widths = {"values": a.n_kv_heads * a.d_head, "z": a.n_heads * a.d_head, "resid": a.d_model,
                  "hidden": a.d_model}
        return sum(widths[r] for r in dict.fromkeys(readouts)) + a.n_heads  # + the attention entropies

    def layers(self, layers=None) -> int:
        return self.arch.n_layers if layers is None else len(layers)

    def user_prompts(self) -> Lengths | None:
        if not self.run.prompts:
            return None
        return self.counter.lengths(self.limited(_user_texts(self.run.prompts)))

    def limited(self, texts):
        """The first --limit texts (all without one): what a run's suites read (suites.base.limited)."""
        return texts if self.run.limit is None else texts[:self.run.limit]

    def windtunnel_prompts(self, n: int) -> Lengths:
        from geomprobe.windtunnel.prompts import task_prompts

        n = n if self.run.limit is None else min(n, self.run.limit)
        sample = task_prompts(self.task, n=min(n, 200), seed=self.run.seed)
        return self.counter.lengths([p.text for p in sample], n=n)

    def default_prompts(self, n_windtunnel: int = 200, corpus: str | None = None) -> tuple[Lengths, str]:
        """suite_prompts' choice: --prompts, a wind tunnel's task, a corpus, or the demo prompts."""
        user = self.user_prompts()
        if user is not None:
            from geomprobe.prompts import prompts_label

            return user, prompts_label(self.run.prompts)
        if self.task is not None:
            return self.windtunnel_prompts(n_windtunnel), f"windtunnel:{self.task.name} ({n_windtunnel} sequences)"
        if corpus is not None:
            return self.counter.lengths(self.limited(corpus_texts(corpus))), f"corpus:{corpus}"
        return self.counter.lengths(self.limited(_demo_texts())), "the built-in demo prompts"

    def nulls(self, options, suite: str) -> list:
        """The suite's null models as it will resolve them (NullOptions.null_specs), sized by the
        planner's parameter count."""
        text = options.null
        specs = options.null_specs(n_params=self.arch.n_params, run_seed=self.run.seed)
        if specs:
            from geomprobe.analysis.null_comparison import RANK_RULE_MIN, power_note

            stops = (getattr(options, "null_stop", False) and len(specs) >= RANK_RULE_MIN
                     and all(spec.kind == "init" for spec in specs) and suite != "ablation")
            self.null_notes[suite] = power_note(len(specs)) + (f" (--null {text}: chosen from the model's "
                                                               f"{self.arch.n_params / 1e6:.0f}M parameters)"
                                                               if "auto" in text else "") + (
                "; the copies stop once no decision can change (--null-stop: as few as 2 where the model is "
                "indistinguishable from them, all where it differs), so the figures here are the most they cost"
                if stops else "")
        for spec in specs:
            if spec.kind == "checkpoint" and spec.spec == "step0" and not self.target.pythia:
                raise ConfigError(f"{suite} suite: --null step0: {self.target.spec} has no published untrained "
                                  "checkpoint; use --null init:N or a checkpoint spec")
        return specs

    def null_loads(self, specs, weights_dtype_bytes: int) -> list[Load]:
        where = "cpu" if self.run.device_map is not None else "device"
        loads = []
        for spec in specs:
            kind = "init" if spec.kind == "init" else "checkpoint"
            what = f"null {spec.name}" + (f" ({spec.spec})" if spec.spec else "")
            legacy = kind == "init" and getattr(spec, "build", "legacy") == "legacy"
            note = ("loaded from the Hugging Face cache or the hub, never quantised" if kind != "init"
                    else "built from the config on the CPU, never quantised"
                    + ("; legacy build: every weight drawn twice" if legacy else ""))
            loads.append(Load(what, kind, self.arch.n_params, self.arch.n_params * weights_dtype_bytes, where, note,
                              draws=2 if legacy else 1))
        return loads


PLANNERS: dict = {}  # suite -> planner(ctx, options) -> SuitePlan; filled by the plan faces (planners())
_loading_faces = False


def planners() -> dict:
    """PLANNERS, after every suite folder's plan face is imported (geomprobe.suites.base.load_faces:
    each registers its planner)."""
    global _loading_faces
    if not _loading_faces:  # a face registering itself while the faces load does not load them again
        from geomprobe.suites.base import load_faces

        _loading_faces = True
        try:
            load_faces("plan")
        finally:
            _loading_faces = False
    return PLANNERS


def register_planner(suite: str, planner) -> None:
    """Give a suite a cost model: planner(ctx, options) -> SuitePlan (ctx: the PlanContext: ctx.arch,
    ctx.run, ctx.batch, ctx.default_prompts(), ctx.nulls(options, suite), ctx.config_of(other suite);
    see geomprobe.suites.extract.plan). A built-in suite's folder registers its own in plan.py; a
    suite without one is listed as not planned. Registering a name twice is a ValueError."""
    if suite in planners():
        raise ValueError(f"register_planner: the {suite} suite already has a planner")
    PLANNERS[suite] = planner
