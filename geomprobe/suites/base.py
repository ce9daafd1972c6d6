"""What every suite shares: its base config, the context it runs in, the registry, default prompts.

A built-in suite is a folder, geomprobe/suites/<name>/: its __init__ holds the config, the run and
the console summary, and registers them; results.py its results schema (a TypedDict and its
SCHEMA_VERSION); plan.py its cost model; compare.py its compare rows (a reader and the headline
statistics it declares, with direction and unit); figures.py its report figures; card.py its report
card (its part of a run's verdict card, and what the page says around its figures); rows.py its
per-prompt rows (Run.rows, Run.table); brief.py its console brief (geomprobe.brief). The face
modules (FACES) are imported by the machinery that reads them (geomprobe.plan, geomprobe.compare,
geomprobe.report, geomprobe.results, geomprobe.brief), never by the suite itself, so a suite runs
without plotting or planning code, and each face registers itself with that machinery when
imported (load_faces).

A plug-in suite may be a single file: a config dataclass (its options, defaults written once), a
function from a SuiteContext to its results, and one registration line:

    @dataclass
    class CountConfig(SuiteConfig):
        top: int = option(5, "how many tokens to list", min=1)

    def run_count_suite(ctx: SuiteContext) -> dict:
        prompts, source = suite_prompts(ctx)
        ...
        return ctx.write_results({...})          # <run>/count/results.json

    register_suite("count", CountConfig, run_count_suite, "what it measures, in one line")

`geomprobe run --suite count --top 3` then works, `--help` lists `--top` under the suite, and the
report lists the suite's headline numbers (geomprobe.report.figures.register_figures draws more;
geomprobe.report.cards.register_card gives it a card), `geomprobe compare` reads its short lists
of numbers and `geomprobe plan` says it has no cost model (geomprobe.plan.register_planner gives
one). A plug-in that is a package gets its faces loaded as a built-in suite's are.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Literal

from geomprobe.errors import ConfigError
from geomprobe.options import as_dict, option, validate


@dataclass
class SuiteConfig:
    """Options every suite has. Subclasses add their own fields with geomprobe.options.option."""

    n_boot: int = option(1000, "bootstrap resamples for 95% CIs", min=10)

    def __post_init__(self):
        validate(self)

    @property
    def suite(self) -> str:
        """The registered name of this config's suite."""
        for spec in SUITES.values():
            if type(self) is spec.config:
                return spec.name
        raise ConfigError(f"{type(self).__name__} is not registered: call register_suite(name, "
                          f"{type(self).__name__}, function)")

    def readouts(self) -> tuple[str, ...]:
        """Readouts this suite needs extracted beyond RunConfig.readouts."""
        return ()

    def check(self) -> None:
        """Checks across fields, after each was coerced (geomprobe.options.validate); a subclass that
        adds one calls super().check() first. Raises a one-line ConfigError."""

    def to_dict(self) -> dict:
        """The options as plain JSON/YAML-ready values (tuples as lists); from_dict reads them back."""
        return as_dict(self)

    @classmethod
    def from_dict(cls, data) -> SuiteConfig:
        """The config from a dict such as to_dict() writes (or json/yaml loads): every value checked
        as the constructor checks it; an unknown key is refused in one line naming it."""
        from geomprobe.options import from_dict

        return from_dict(cls, data)


@dataclass(frozen=True)
class SuiteSpec:
    name: str
    config: type
    run: Callable  # SuiteContext -> results dict
    description: str
    # (loaded model, RunConfig) -> why the suite cannot run on it, or None; `--suite all` skips such suites
    unsupported: Callable | None = None
    # (loaded model, RunConfig, suite config) -> None, or raises a one-line ConfigError: checks of the
    # options against the model (labels that must be single tokens, layers in range) that run before
    # the run directory is touched, so a rejected command changes nothing on disk
    check: Callable | None = None

    # its results.json's TypedDict (geomprobe.suites.schema checks it) and that schema's version
    schema: type | None = None
    schema_version: int | None = None
    # results dict -> None: the suite's full tables on the console, printed by SuiteContext.write_results
    # under --details (details=True)
    summary: Callable | None = None

    @property
    def package(self) -> str | None:
        """The package of a suite that is a folder (where its FACES live), else None."""
        module = sys.modules.get(self.run.__module__)  # a suite defined in a notebook or exec'd text has none
        return module.__name__ if module is not None and hasattr(module, "__path__") else None

    def why_not(self, loaded, run_config) -> str | None:
        return None if self.unsupported is None else self.unsupported(loaded, run_config)

    def precheck(self, loaded, run_config, options) -> None:
        if self.check is not None:
            self.check(loaded, run_config, options)


SUITES: dict[str, SuiteSpec] = {}

FACES = ("plan", "compare", "figures", "card", "rows", "brief")  # modules a suite folder may hold, each read by one machinery


def load_faces(face: str) -> list[str]:
    """Import `<suite package>.<face>` for every registered suite that is a folder and has one, in
    registry order (each registers itself with the machinery that called this); the suites that
    have it. Idempotent: Python imports a module once."""
    if face not in FACES:
        raise ValueError(f"load_faces: {face!r} is not one of {FACES}")
    found = []
    for spec in list(SUITES.values()):
        package = spec.package
        if package is None:
            continue
        try:
            import_module(f"{package}.{face}")
        except ModuleNotFoundError as error:
            if error.name != f"{package}.{face}":
                raise
            continue
        found.append(spec.name)
    return found


# --definitions, one option of every suite that has it (geometry, sula, ablation): its choices, default
# and help written once (METHODS.md section 11)
Definitions = Literal["geomprobe", "paper-code", "paper-code-as-released"]
DEFINITIONS_HELP = ("geomprobe | paper-code: also each headline number as the papers' released code defines it, side "
                    "by side (METHODS.md section 11; the ablation edits as that code does: raw, uncentred values "
                    "along the raw-PCA axis, random axes not orthogonal to it, not matched; measured as always) | "
                    "paper-code-as-released: the same on the released code's GPT-NeoX value split (the fused "
                    "query_key_value columns it calls values: queries and keys of some heads among them), to "
                    "reproduce its figures")


def definitions_option():
    """The --definitions field of a suite config (Definitions, DEFINITIONS_HELP)."""
    return option("geomprobe", DEFINITIONS_HELP)


NULL_HELP = ("untrained null models, each measured as the model is (on its own sample, axis or sequences) and "
             "compared with it: auto (init:N, N from the model's size: 19 up to 200M parameters, 10 up to 2B, 5 above; "
             "the ablation suite 3, a copy costs it a whole suite) | init:N (fresh initialisations, each weight drawn once, "
             "seeded from --seed: 1000 + 1000 x seed + i; "
             "init-legacy:N: the older build, drawn twice) | step0 | a model "
             "spec | off; comma-separated for several")


@dataclass
class NullOptions(SuiteConfig):
    """The option of every suite that compares its statistics with untrained null models
    (METHODS.md section 5.1): declared once, checked once; SuiteContext.nulls() loops over them."""

    null: str = option("auto", NULL_HELP)
    null_stop: bool = option(True, "stop building untrained copies once no rank decision can change (19+ planned "
                                   "fresh initialisations: Besag and Clifford's sequential test, the same decisions)")

    def check(self) -> None:
        super().check()
        self.null_specs()  # the syntax; step0 is resolved against the model when the suite runs

    def null_specs(self, loaded=None, n_params: float | None = None, run_seed: int = 0) -> list:
        """--null -> [geomprobe.nulls.NullSpec], `auto` sized by `loaded` (or by n_params, the
        planner's count), the copies' seeds from run_seed (the run's --seed); [] with off. The one
        place a suite's --null is read (the planner too)."""
        from geomprobe.nulls import null_specs

        return null_specs(self.null, loaded, n_params=n_params, run_seed=run_seed)


def register_suite(name: str, config: type, run: Callable, description: str = "",
                   unsupported: Callable | None = None, check: Callable | None = None,
                   replace: bool = False, schema: type | None = None, schema_version: int | None = None,
                   summary: Callable | None = None) -> SuiteSpec:
    """Make a suite available to geomprobe.run, `geomprobe run --suite NAME` and the report.
    unsupported(loaded, run_config) -> why the suite cannot run on this model, or None;
    check(loaded, run_config, options) raises ConfigError for options that do not fit the model
    (both run before anything is written); schema, the results' TypedDict, and its schema_version
    (written in each results.json's header); summary(results), the suite's full console tables,
    printed by SuiteContext.write_results under --details. A name already registered is a ValueError unless
    replace=True (e.g. a notebook cell run again); unregister_suite(name) removes one."""
    if not (isinstance(config, type) and issubclass(config, SuiteConfig)):
        raise TypeError(f"register_suite({name!r}): the config must subclass SuiteConfig")
    if not name.isidentifier() or name == "all":
        raise ValueError(f"register_suite: {name!r} is not a usable suite name")
    if name in SUITES and not replace:
        raise ValueError(f"register_suite: a suite named {name!r} is already registered "
                         f"({SUITES[name].run.__module__}.{SUITES[name].run.__qualname__}): choose another name, or "
                         "pass replace=True to replace it")
    spec = SuiteSpec(name=name, config=config, run=run, description=description, unsupported=unsupported,
                     check=check, schema=schema, schema_version=schema_version, summary=summary)
    SUITES[name] = spec
    return spec


def unregister_suite(name: str) -> SuiteSpec:
    """Remove a registered suite (a KeyError names the registered ones when there is none)."""
    if name not in SUITES:
        raise KeyError(f"no suite named {name!r} is registered (registered: {', '.join(SUITES)})")
    return SUITES.pop(name)


def get_suite(name: str) -> SuiteSpec:
    try:
        return SUITES[name]
    except KeyError:
        raise ConfigError(f"unknown suite '{name}': available suites are {', '.join(SUITES)} (or all)") from None


def parse_suites(text: str) -> list[str]:
    """"geometry,sula" | "all" -> suite names in registry order (the order they run in)."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise ConfigError("--suite needs a suite name: " + ", ".join(SUITES) + " (or all)")
    if "all" in names:
        return list(SUITES)
    for name in names:
        get_suite(name)
    return [name for name in SUITES if name in names]


@dataclass
class SuiteContext:
    """What a suite gets: the loaded model, the run's configuration, its own options, the run
    directory and the user's prompts (None when the suite should choose its own)."""

    loaded: object  # geomprobe.models.LoadedModel
    run: object  # geomprobe.config.RunConfig
    options: SuiteConfig
    run_dir: object  # geomprobe.rundir.RunDirectory
    prompts: list | None
    progress: bool = True
    details: bool = False  # print the suite's full tables (--details); else the runner prints a short summary
    used: dict = field(default_factory=dict)  # what the suite actually ran with, for the manifest
    # The memory planner, handed in by the runner (suites sit below geomprobe.plan and do not import
    # it): batch_planner(suites=..., run_config=..., device=..., device_memory=..., device_name=...,
    # tokenizer=...) -> the recommended batch in rows (geomprobe.plan.recommended_batch). None: no plan.
    batch_planner: Callable | None = None

    @property
    def suite(self) -> str:
        return self.options.suite

    def null_specs(self) -> list:
        """The suite's --null resolved against the loaded model, the copies' seeds from the run's
        --seed ([] with --null off)."""
        return self.options.null_specs(self.loaded, run_seed=self.seed)

    def nulls(self, specs=None):
        """(spec, copy) for each untrained null model of --null (or of `specs`), built one at a time:
        the previous copy is dropped before the next is built (geomprobe.nulls.each_null)."""
        from geomprobe.nulls import each_null

        return each_null(self.loaded, self.null_specs() if specs is None else specs)

    def sequential(self, specs):
        """A SequentialRank over these copies (geomprobe.analysis.null_comparison): active with
        --null-stop (the default) where every copy is a fresh initialisation and there are 19+."""
        from geomprobe.analysis.null_comparison import SequentialRank

        enabled = getattr(self.options, "null_stop", True) and all(spec.kind == "init" for spec in specs)
        return SequentialRank(len(specs), enabled=enabled)

    @property
    def seed(self) -> int:
        return self.run.seed

    @property
    def work(self):
        """<run>/<suite>/: where the suite keeps its results and arrays."""
        return self.run_dir.path / self.suite

    def readouts(self) -> tuple[str, ...]:
        """RunConfig.readouts plus those the suite needs, in a stable order."""
        wanted = [*self.run.readouts, *self.options.readouts()]
        return tuple(dict.fromkeys(wanted))

    def extraction_config(self, **overrides):
        from geomprobe.extraction import ExtractionConfig

        run = self.run
        fields = dict(layers=None if run.layers is None else list(run.layers), readouts=self.readouts(),
                      tokens=list(run.tokens), backend=run.backend, max_tokens=run.max_tokens,
                      batch_size=run.batch_size)
        fields.update(overrides)
        config = ExtractionConfig(**fields)
        self.used.setdefault("readouts", [])
        self.used["readouts"] = list(dict.fromkeys([*self.used["readouts"], *config.readouts]))
        return config

    def record_prompts(self, prompts, source: str, key: str = "prompts") -> None:
        """Note in the manifest which prompts this suite used (each suite may use its own)."""
        from geomprobe.prompts import prompts_hash

        manifest = self.run_dir.read_manifest()
        manifest["suites"][self.suite][key] = {"source": source, "n": len(prompts), "sha256": prompts_hash(prompts)}
        self.run_dir.write_manifest(manifest)

    def write_results(self, results: dict) -> dict:
        """<run>/<suite>/results.json, written atomically, with the schema header first, its sha256
        kept for the manifest's entry (results_sha256: readers check the file against it); then,
        under --details, the suite's full tables (register_suite(..., summary=))."""
        from geomprobe.rundir import atomic_write_json

        from .schema import check_results, with_header

        spec = get_suite(self.suite)
        results = with_header(self.suite, self.loaded.spec, results, spec.schema_version)
        check_results(self.suite, json.loads(json.dumps(results, default=_plain)), spec.schema)
        self.used["results_sha256"] = atomic_write_json(self.work / "results.json", results)
        if spec.summary is not None and self.progress and self.details:
            spec.summary(results)
        return results


def _plain(obj):
    from geomprobe.rundir import _json_default

    return _json_default(obj)


def windtunnel_task(loaded):
    """(task, info) of a wind-tunnel model, or (None, None) for any other model."""
    from geomprobe.windtunnel.builtin import windtunnel_info

    info = getattr(loaded, "windtunnel_preview", None) or windtunnel_info(loaded.source)
    if info is None:
        return None, None
    from geomprobe.windtunnel.tasks import make_task

    return make_task(info["task"], **info.get("task_options", {})), info


def limited(prompts: list, run_config, source: str | None = None):
    """The first --limit prompts (all without one); with `source`, (prompts, source) with the limit said."""
    limit = getattr(run_config, "limit", None)
    kept = prompts if limit is None else prompts[:limit]
    if source is None:
        return kept
    return kept, source if len(kept) == len(prompts) else f"{source}, the first {len(kept)} (--limit {limit})"


def limited_configs(configs: list, run_config) -> list:
    """Suite configs under --limit: a suite that writes its prompts per k (n_per_k) writes at most
    the limit per k (and at least 2, which the intervals per k need); one that draws an
    entropy-stratified sample (n_per_quintile) bigger than the limit uses all its (limited)
    candidates instead (n_per_quintile 0); the others are unchanged."""
    limit = getattr(run_config, "limit", None)
    if limit is None:
        return list(configs)
    import dataclasses

    out = []
    for config in configs:
        if hasattr(config, "n_per_k"):
            config = dataclasses.replace(config, n_per_k=max(2, min(config.n_per_k, limit)))
        if getattr(config, "n_per_quintile", 0) * 5 > limit:
            config = dataclasses.replace(config, n_per_quintile=0)
        out.append(config)
    return out


def suite_prompts(ctx: SuiteContext, n_windtunnel: int = 200, corpus: str | None = None):
    """(prompts, description) for a suite that reads any prompts: the user's --prompts; else a
    wind-tunnel model's own task (n_windtunnel sampled sequences cut at the task's prompt
    position); else `corpus` (a corpus name) or, without one, the built-in demo prompts. At most
    the first --limit of them."""
    prompts, source = _suite_prompts(ctx, n_windtunnel, corpus)
    return limited(prompts, ctx.run, source)


def _suite_prompts(ctx: SuiteContext, n_windtunnel: int, corpus: str | None):
    if ctx.prompts:
        from geomprobe.prompts import prompts_label

        return ctx.prompts, prompts_label(ctx.run.prompts)
    task, _ = windtunnel_task(ctx.loaded)
    if task is not None:
        from geomprobe.windtunnel.prompts import task_prompts

        return (task_prompts(task, n=n_windtunnel, seed=ctx.seed),
                f"windtunnel:{task.name} ({n_windtunnel} sampled sequences cut at the {task.prompt_position} "
                f"supervised position, seed {ctx.seed})")
    if corpus is not None:
        from geomprobe.corpora import corpus_path, load_corpus

        return load_corpus(corpus), f"corpus:{corpus} ({corpus_path(corpus)})"
    from geomprobe.models.builtin import demo_prompts_path
    from geomprobe.prompts import read_prompts

    return read_prompts(demo_prompts_path()), str(demo_prompts_path())


def needs_next_token(loaded, suite: str) -> str | None:
    if not loaded.adapter.has_next_token:
        return f"{loaded.spec} is an encoder ({loaded.adapter.family}): the {suite} suite needs next-token probabilities"
    return None


__all__ = ["NULL_HELP", "SUITES", "NullOptions", "SuiteConfig", "SuiteContext", "SuiteSpec", "get_suite", "option",
           "parse_suites", "register_suite", "suite_prompts", "unregister_suite", "windtunnel_task"]
