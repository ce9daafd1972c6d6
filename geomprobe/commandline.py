"""`geomprobe run` built from the config dataclasses: every option is a field, defined once.

RunConfig's fields and every registered suite's config fields become options of one command.
Options default to "not given"; only what the user gave is passed to the dataclasses, so each
default lives in its dataclass (and help shows it). A suite option given when no selected suite
has that field is an error naming the suites that do. `geomprobe run --suite S --help` lists
the model options and S's options only.

The command is rebuilt whenever the CLI is built, so a suite registered before that (a plugin, a
test) appears with its options.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Optional

import typer

from geomprobe.config import RunConfig
from geomprobe.errors import ConfigError, GeomprobeError
from geomprobe.options import Kind, fields_of, flag


def _json_asked(args: tuple, kwargs: dict) -> bool:
    """Whether the command was given --json: its `as_json` keyword, or the options dict `geomprobe
    run` hands its handlers (`sweep_json` for `geomprobe sweep --status DIR --json`)."""
    if kwargs.get("as_json") or kwargs.get("sweep_json"):
        return True
    return any(isinstance(arg, dict) and (arg.get("as_json") or arg.get("sweep_json")) for arg in args)


def _refuse(kind: str, text: str, code: int, error: BaseException, as_json: bool) -> None:
    """The one line on stderr, and with --json also one JSON object on stdout, so that a script
    reading stdout gets an answer: {"error": text, "kind": "ConfigError", "exit_code": 2}."""
    typer.secho(f"{kind}: {text}", fg=typer.colors.RED if kind == "error" else None, err=True)
    if as_json:
        import json

        typer.echo(json.dumps({"error": text, "kind": _kind(error), "exit_code": code}))


def _kind(error: BaseException) -> str:
    """The error's class as --json names it: the geomprobe.errors class it is (a file reader's
    RunFileNotJSON is a RunDirectoryError), so that scripts match a stable set of names."""
    for cls in type(error).__mro__:
        if cls.__module__ == "geomprobe.errors":
            return cls.__name__
    return type(error).__name__


def user_errors(fn):
    """Print geomprobe's own errors as one line on stderr and exit 2, without a traceback; with
    --json the same error is also one JSON object on stdout."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except GeomprobeError as err:
            _refuse("error", str(err), 2, err, _json_asked(args, kwargs))
            raise typer.Exit(2) from None
        except KeyboardInterrupt as err:
            _refuse("interrupted", str(err) or "finished work is saved; rerun the same command to resume", 130, err,
                    _json_asked(args, kwargs))
            raise typer.Exit(130) from None

    return wrapper


RUN_PANEL = "model and extraction"
# other spellings the field's users type (lm-evaluation-harness's --output_path for --out)
ALIASES = {"out": ("--output_path", "--output-path")}
CLI_ONLY = {"suite", "quiet", "verbose", "details", "report", "memory", "ram", "gpu", "as_json", "config",
            "recalibrate"}


@dataclasses.dataclass
class OptionSpec:
    """One command-line option: its field name, flag, kind, help, and who owns it."""

    name: str
    flag: str
    kind: Kind
    help: str
    metadata: dict
    owners: list[str]  # "run" or suite names
    defaults: dict  # owner -> default


def _suites():
    from geomprobe.suites import SUITES

    return SUITES


def option_specs(suite_names: list[str] | None = None) -> dict[str, OptionSpec]:
    """name -> OptionSpec over RunConfig and the suites' configs (all registered suites by default).
    A field name shared by several configs must have one kind: it is one option."""
    specs: dict[str, OptionSpec] = {}
    owners = [("run", RunConfig)] + [(name, spec.config) for name, spec in _suites().items()
                                      if suite_names is None or name in suite_names]
    for owner, cls in owners:
        for field, kind in fields_of(cls):
            if field.name in CLI_ONLY:
                raise TypeError(f"{cls.__name__}.{field.name}: the name is taken by a command-line option")
            default = field.default if field.default is not dataclasses.MISSING else field.default_factory()
            existing = specs.get(field.name)
            if existing is None:
                specs[field.name] = OptionSpec(field.name, flag(field), kind, field.metadata.get("help", ""),
                                               dict(field.metadata), [owner], {owner: default})
                continue
            if existing.kind != kind or existing.flag != flag(field):
                raise TypeError(f"option {field.name}: {cls.__name__} declares it as {kind}, another config as "
                                f"{existing.kind}; one name must mean one option")
            existing.owners.append(owner)
            existing.defaults[owner] = default
    return specs


def _show(value) -> str:
    if isinstance(value, tuple):
        return ",".join(map(str, value)) if value else "(none)"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _help(spec: OptionSpec) -> str:
    values = {_show(v) for v in spec.defaults.values()}
    if len(values) == 1:
        default = f"default: {values.pop()}"
    else:
        default = "default: " + ", ".join(f"{owner} {_show(v)}" for owner, v in spec.defaults.items())
    low, high = spec.metadata.get("min"), spec.metadata.get("max")
    bounds = []
    if low is not None:
        bounds.append(f"{'>' if spec.metadata.get('exclusive_min') else '>='} {low}")
    if high is not None:
        bounds.append(f"<= {high}")
    limits = f"; {' and '.join(bounds)}" if bounds else ""
    return f"{spec.help}{limits} ({default})"


def _metavar(kind: Kind) -> str:
    if kind.choices is not None:
        return ("," if kind.sequence else "|").join(map(str, kind.choices))
    one = {int: "INT", float: "X", str: "TEXT", bool: "BOOL"}[kind.base]
    if kind.sequence:
        return ",".join([one] * kind.length) if kind.length else f"{one},..."
    return one


def _parameter(spec: OptionSpec) -> inspect.Parameter:
    """Every value reaches the dataclass as text, so the API and the CLI refuse bad values with the
    same one-line error (geomprobe.options); choices and ranges are shown in the help."""
    kind = spec.kind
    if kind.base is bool and not kind.sequence:
        annotation, names, extra = Optional[bool], [f"{spec.flag}/--no-{spec.flag[2:]}"], {}
    else:
        long = "--" + spec.name.replace("_", "-")  # the API's name, also where the flag is a short form (--k)
        annotation, extra = Optional[str], {"metavar": _metavar(kind)}
        names = [spec.flag] if long == spec.flag else [long, spec.flag]
        names += list(ALIASES.get(spec.name, ()))
    if spec.owners[0] == "run":
        panel = RUN_PANEL
    elif set(spec.owners) >= set(_suites()):
        panel = "every suite"
    else:
        panel = "suites: " + ", ".join(spec.owners)
    default = typer.Option(None, *names, help=_help(spec), rich_help_panel=panel, show_default=False, **extra)
    return inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _given(kwargs: dict) -> dict:
    return {name: value for name, value in kwargs.items() if value is not None and name not in CLI_ONLY}


def build_configs(suite_text: str, given: dict) -> tuple[RunConfig, list]:
    """(RunConfig, suite configs) from the options the user gave; an option no selected suite
    uses is an error naming the suites that do."""
    from geomprobe.suites import get_suite, parse_suites

    names = parse_suites(suite_text)
    specs = option_specs()
    run_fields = {f.name for f, _ in fields_of(RunConfig)}
    for name in given:
        spec = specs[name]
        if name in run_fields or any(owner in names for owner in spec.owners):
            continue
        users = [owner for owner in spec.owners if owner != "run"]
        raise ConfigError(f"{spec.flag} is an option of the {', '.join(users)} suite{'s' if len(users) > 1 else ''}, "
                          f"not of {', '.join(names)}: drop it, or add {' or '.join(users)} to --suite")
    run_config = RunConfig(**{k: v for k, v in given.items() if k in run_fields})
    configs = []
    for name in names:
        cls = get_suite(name).config
        fields = {f.name for f, _ in fields_of(cls)}
        configs.append(cls(**{k: v for k, v in given.items() if k in fields}))
    return run_config, configs


def selected_suites(args: list[str]) -> list[str] | None:
    """The --suite value in a raw argument list (for --help), as suite names; None if absent or bad."""
    from geomprobe.suites import parse_suites

    for index, arg in enumerate(args):
        value = None
        if arg == "--suite" and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith("--suite="):
            value = arg.split("=", 1)[1]
        if value is not None:
            try:
                return parse_suites(value)
            except ConfigError:
                return None
    return None


class SuiteAwareCommand(typer.core.TyperCommand):
    """Help shows the model options and the options of the suites named by --suite (all without it)."""

    def parse_args(self, ctx, args):
        ctx.meta["geomprobe_suites"] = selected_suites(list(args))
        return super().parse_args(ctx, args)

    def format_help(self, ctx, formatter):
        ctx.meta["geomprobe_help"] = True
        try:
            return super().format_help(ctx, formatter)
        finally:
            ctx.meta["geomprobe_help"] = False

    def get_params(self, ctx):
        params = super().get_params(ctx)
        chosen = ctx.meta.get("geomprobe_suites")
        if not chosen or not ctx.meta.get("geomprobe_help"):  # parsing sees every option; help only the chosen
            return params
        specs = option_specs()
        return [p for p in params if p.name not in specs or specs[p.name].owners[0] == "run"
                or any(owner in chosen for owner in specs[p.name].owners)]


CONFIG_HELP = ("a JSON or YAML (.yaml, .yml; needs PyYAML) file of options: {\"suite\": \"sula\", \"model\": ..., "
               "\"n_per_k\": 50}, names as the Python API's fields (or flags without dashes); flags given override "
               "its values (geomprobe.config.write_config_file writes one)")
SUITE_HELP = ("what to measure: one of {suites}, several comma-separated, or all (they run in that order on one "
              "loaded model); list: print the suites and what each measures, and stop (default: extract, or the "
              "--config file's suite)")
DEFAULT_SUITE = "extract"


class RunCommand:
    """The callback of `geomprobe run` (or `extract`, with fixed_suite): its signature is computed
    from the registry each time typer reads it."""

    def __init__(self, handler, doc: str, fixed_suite: str | None = None):
        self.handler = handler
        self.fixed_suite = fixed_suite
        self.__doc__ = doc
        self.__name__ = "extract" if fixed_suite else "run"
        self.__module__ = __name__

    def _parameters(self) -> list[inspect.Parameter]:
        suites = [self.fixed_suite] if self.fixed_suite else None
        params = []
        if not self.fixed_suite:
            from geomprobe.suites import SUITES

            params.append(inspect.Parameter(
                "suite", inspect.Parameter.KEYWORD_ONLY, annotation=str,
                default=typer.Option(None, help=SUITE_HELP.format(suites=", ".join(SUITES)),
                                     rich_help_panel=RUN_PANEL, show_default=False)))
        params += [_parameter(spec) for spec in option_specs(suites).values()]
        params.append(inspect.Parameter("config", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str],
                                        default=typer.Option(None, "--config", metavar="FILE", help=CONFIG_HELP,
                                                             rich_help_panel=RUN_PANEL)))
        return params + self._own_parameters()

    def _own_parameters(self) -> list[inspect.Parameter]:
        params = []
        params.append(inspect.Parameter("quiet", inspect.Parameter.KEYWORD_ONLY, annotation=bool, default=typer.Option(
            False, "--quiet", help="print only errors and the final `results:` line: no progress, summary tables or "
                                   "notices (a wind tunnel's first-use training included)")))
        params.append(inspect.Parameter("verbose", inspect.Parameter.KEYWORD_ONLY, annotation=bool, default=typer.Option(
            False, "--verbose", help="also debug lines on stderr (what is loaded from where, each suite's start and "
                                     "end)")))
        params.append(inspect.Parameter("details", inspect.Parameter.KEYWORD_ONLY, annotation=bool, default=typer.Option(
            False, "--details", help="print each suite's full tables (every layer, baseline and control) instead of "
                                     "its short summary")))
        params.append(inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, annotation=bool, default=typer.Option(
            False, "--json", help="print the results as one JSON object on stdout (the run directory, each suite's "
                                  "status, results.json and headline figures); tables and progress go to stderr")))
        params.append(inspect.Parameter("report", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                                        default=typer.Option(False, "--report", help="after the suites, write "
                                                             "RUN_DIR/report.html (same as `geomprobe report RUN_DIR`)")))
        return params

    @property
    def __signature__(self):
        return inspect.Signature(self._parameters())

    @property
    def __annotations__(self):
        return {p.name: p.annotation for p in self._parameters()}

    def __call__(self, **kwargs):
        if not self.fixed_suite and str(kwargs.get("suite") or "").strip() == "list":
            return list_suites(bool(kwargs.get("as_json")))
        suite_text, kwargs = user_errors(self._with_config_file)(kwargs)
        return self.handler(suite_text, kwargs)

    def _with_config_file(self, kwargs: dict) -> tuple[str, dict]:
        """(the suites to run, the options) with a --config file's values under the flags given: a
        flag on the command line overrides the file, the file overrides the defaults."""
        suite = self.fixed_suite or kwargs.get("suite")  # None: not given (the default is DEFAULT_SUITE)
        if kwargs.get("config") is None:
            return suite or DEFAULT_SUITE, kwargs
        file_suite, values = config_file_options(kwargs["config"])
        if self.fixed_suite and file_suite is not None and file_suite.split(",") != [self.fixed_suite]:
            raise ConfigError(f"--config {kwargs['config']} names the suites {file_suite}; `geomprobe "
                              f"{self.fixed_suite}` runs {self.fixed_suite} only: use `geomprobe run --config`")
        suite = suite or file_suite or DEFAULT_SUITE
        from geomprobe.suites import parse_suites

        names, specs = parse_suites(suite), option_specs()
        merged = dict(kwargs)
        for name, value in values.items():
            if merged.get(name) is not None:
                continue  # the flag given overrides the file
            users = [owner for owner in specs[name].owners if owner != "run"]
            if "run" not in specs[name].owners and not set(users) & set(names):
                raise ConfigError(f"--config {kwargs['config']}: {name} is an option of the {', '.join(users)} "
                                  f"suite{'s' if len(users) > 1 else ''}, not of {', '.join(names)}: drop it, or "
                                  f"run {' or '.join(users)}")
            merged[name] = value
        return suite, merged


class PlanCommand(RunCommand):
    """The callback of `geomprobe plan`: exactly `run`'s options (the same dataclasses, the same
    default suite) and the planner's own: the machine to plan for and --json."""

    def __init__(self, handler, doc: str):
        super().__init__(handler, doc)
        self.__name__ = "plan"

    def _own_parameters(self) -> list[inspect.Parameter]:
        def own(name, annotation, default):
            return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)

        return [
            own("memory", Optional[float], typer.Option(None, help="GiB the device offers (plan for another machine; "
                                                                   "with --device-map: the GPUs' total)")),
            own("ram", Optional[float], typer.Option(None, help="GiB of CPU RAM available (default: this machine's)")),
            own("gpu", Optional[str], typer.Option(None, help="GPU name for its throughput, e.g. 'H100 SXM' (with "
                                                              "--device cuda)")),
            own("as_json", bool, typer.Option(False, "--json", help="print the plan as JSON")),
            own("recalibrate", bool, typer.Option(False, "--recalibrate", help="measure this CPU's matmul rate "
                                                  "again (about a second) and record it for later plans")),
        ]


def config_file_options(path) -> tuple[str | None, dict]:
    """(its "suite" as text or None, field name -> value) of a --config file; a key that is no option
    of `geomprobe run` is refused in one line naming it. None values stand for "not given"."""
    from geomprobe.config import read_config_file

    data = read_config_file(path)
    specs = option_specs()
    flags = {spec.flag[2:]: name for name, spec in specs.items()}
    suite, values = None, {}
    for key, value in data.items():
        if key in ("suite", "suites"):
            if value is not None:
                suite = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
            continue
        name = key if key in specs else flags.get(key) if isinstance(key, str) else None
        if name is None and isinstance(key, str):
            name = next((n for n in specs if key.replace("-", "_") == n), None)
        if name is None:
            raise ConfigError(f"--config {path}: unknown option {key!r}: a key is \"suite\" or an option of "
                              "`geomprobe run --help`, by its field name (n_per_k) or flag (n-per-k)")
        if value is not None:
            values[name] = value
    return suite, values


def parse_command(suite_text: str, kwargs: dict) -> tuple[RunConfig, list]:
    """(RunConfig, suite configs) from the command's keyword arguments."""
    return build_configs(suite_text, _given(kwargs))


def list_suites(as_json: bool) -> None:
    """`geomprobe suites` (and `geomprobe run --suite list`): each suite, what it measures, its options."""
    from geomprobe.options import fields_of
    from geomprobe.suites import SUITES

    if as_json:
        import json

        typer.echo(json.dumps([_suite_entry(name, spec, option_specs([name])) for name, spec in SUITES.items()],
                              indent=2, default=str))
        return
    for name, spec in SUITES.items():
        options = [f.metadata.get("cli") or "--" + f.name.replace("_", "-") for f, _ in fields_of(spec.config)]
        typer.echo(f"{name:11} {spec.description}")
        typer.echo(f"{'':11} options: {' '.join(options)}")


def _suite_entry(name: str, spec, specs: dict) -> dict:
    """One suite of `geomprobe suites --json`: name, description, and each option's field name,
    flag, default, choices and help."""
    from geomprobe.options import as_dict, fields_of

    defaults = as_dict(spec.config())
    options = []
    for field, kind in fields_of(spec.config):
        option = specs[field.name]
        options.append({"name": field.name, "flag": option.flag, "default": defaults[field.name],
                        "type": kind.base.__name__ + ("[]" if kind.sequence else ""),
                        "choices": None if kind.choices is None else list(kind.choices), "help": option.help})
    return {"name": name, "description": spec.description, "options": options}
