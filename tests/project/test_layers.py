"""The package's layering, kept by a test: every import of a geomprobe module by another (module
level, function level and under TYPE_CHECKING alike, read from the source with ast) goes down or
sideways in LAYERS, never up, and the import graph has no circle.

A new module must be placed in LAYERS (the test names it). An import that must go up is listed in
ALLOWED with the reason; the list is empty and should stay short.
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "geomprobe"

# Lowest first. A module may import its own layer and the layers below it.
LAYERS: list[tuple[str, list[str]]] = [
    ("foundation", ["geomprobe", "errors", "files", "schemas", "readers", "families", "layouts", "paths", "console",
                    "locks", "options", "rundir",
                    "prompts", "corpora",
                    "models.published", "windtunnel.evidence", "windtunnel.mamba", "windtunnel.tokenizer", "timing",
                    "windtunnel.reference", "allocator", "copycache", "integrity"]),
    ("analysis", ["analysis", "analysis.*"]),
    ("hooks and adapters", ["hooks", "attention", "adapters", "adapters.*"]),
    ("wind-tunnel tasks and training", ["windtunnel", "windtunnel.*"]),
    ("models", ["models", "models.*", "config", "backends", "backends.*", "weights", "quantization"]),
    ("extraction and nulls", ["extraction", "extraction.*", "prefix", "interventions", "nulls", "paper_code",
                              "paper_code.*"]),
    ("domain modules", ["sula_task", "mechanisms", "gradient_dynamics"]),
    ("suites", ["suites", "suites.*"]),
    # a suite folder's faces (geomprobe.suites.base.FACES) sit with the machinery that reads them
    ("plan, runner, compare, report", ["plan", "plan.*", "runner", "activation_cache", "compare", "compare.*", "report",
                                       "report.*",
                                       "sweep", "sweep.*", "commandline", "results", "brief", "plot", "push", "batching",
                                       "tracking", "suites.*.plan",
                                       "suites.*.compare", "suites.*.figures", "suites.*.card",
                                       "suites.*.rows", "suites.*.brief"]),
    ("command line", ["cli", "__main__"]),
]

# (importer, imported) -> why the import goes up. Keep it short.
ALLOWED: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def lazy_targets(node: ast.AST) -> list[str]:
    """The modules a lazy import map names: `_LAZY = {"name": "geomprobe.module", ...}` (a dict literal,
    unpacked dict comprehensions included, assigned to a name starting with _LAZY), imported with
    importlib when the name is first asked for."""
    if not (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.startswith("_LAZY")
                                                 for t in node.targets)):
        return []
    return [value.value for value in ast.walk(node.value) if isinstance(value, ast.Constant)
            and isinstance(value.value, str) and value.value.startswith("geomprobe.")]


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported geomprobe module: first line}, every import statement anywhere in the file,
    and the modules a lazy import map names (lazy_targets).
    `from a.b import c` counts a.b.c when c is a module, else a.b; importing a submodule counts it,
    not its parent package (whose __init__ is checked as a module of its own)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [f"{source}.{alias.name}" for alias in node.names] + [source]
                targets = [t for t in targets if t in modules] or [source]
            elif lazy_targets(node) and name != "geomprobe":
                # the package's own map is the public API (run, extract, ...): resolved when a user asks,
                # above every layer; modules below import only __version__ from it
                targets = lazy_targets(node)
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.setdefault(target, node.lineno)
        graph[name] = found
    return graph


def layer_of(module: str) -> int | None:
    """The layer of a module: of its most specific matching pattern ('suites.*.plan' before
    'suites.*'; '*' matches one or more dotted parts)."""
    short = module.removeprefix("geomprobe.") if module != "geomprobe" else "geomprobe"
    matches = [(len(pattern), rank) for rank, (_, patterns) in enumerate(LAYERS) for pattern in patterns
               if fnmatch.fnmatchcase(short, pattern)]
    return max(matches)[1] if matches else None


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One circle of the graph as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, {}):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_reader_sees_function_level_and_relative_imports(graph):
    # known edges of each kind: module level, relative, function level
    assert "geomprobe.errors" in graph["geomprobe.runner"]
    assert "geomprobe.adapters.base" in graph["geomprobe.adapters.llama"]      # from .base import ...
    assert "geomprobe.plan" in graph["geomprobe.runner"]                        # inside run()
    assert "geomprobe.windtunnel.tasks" in graph["geomprobe.plan.context"]     # inside PlanContext.task
    assert "geomprobe.interventions" in graph["geomprobe.suites.ablation"]      # a _LAZY map's module


def test_a_suite_folder_s_faces_sit_with_their_machinery():
    machinery = layer_of("geomprobe.plan")
    assert layer_of("geomprobe.suites.sula.plan") == machinery == layer_of("geomprobe.suites.sula.figures")
    assert layer_of("geomprobe.suites.sula") == layer_of("geomprobe.suites.sula.results") == layer_of("geomprobe.suites")
    assert layer_of("geomprobe.suites.sula") < machinery


def test_every_module_has_a_layer(graph):
    unplaced = sorted(m for m in graph if layer_of(m) is None)
    assert not unplaced, f"place these modules in tests/project/test_layers.py LAYERS: {unplaced}"


def test_no_import_goes_up_a_layer(graph):
    upward = []
    for importer, targets in graph.items():
        for target, line in targets.items():
            if layer_of(target) > layer_of(importer) and (importer, target) not in ALLOWED:
                upward.append(f"{importer} (line {line}, layer '{LAYERS[layer_of(importer)][0]}') imports {target} "
                              f"(layer '{LAYERS[layer_of(target)][0]}')")
    assert not upward, "imports that go up a layer (move the code down, or hand it in from above):\n" + \
        "\n".join(upward)


def test_the_allow_list_names_only_imports_that_exist(graph):
    stale = [pair for pair in ALLOWED if pair[1] not in graph.get(pair[0], {})]
    assert not stale, f"ALLOWED lists imports that are gone: {stale}"


def test_the_import_graph_has_no_circle(graph):
    assert find_cycle(graph) is None, f"import circle: {' -> '.join(find_cycle(graph))}"


def test_the_cycle_finder_finds_a_planted_circle():
    planted = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    cycle = find_cycle(planted)
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert find_cycle({"a": {"b": 1}, "b": {}, "d": {"a": 1, "b": 1}}) is None


def test_the_source_cites_files_that_exist_and_no_tracker_numbers():
    """Docstrings and comments point a reader at files in the repository (METHODS.md sections, other
    modules), not at an issue tracker or at documents that are not shipped."""
    import re

    root = PACKAGE.parent
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.relative_to(root)}:{number}"
            if re.search(r"\b[Ii]ssues? #?\d+", line):
                bad.append(f"{where}: a tracker number: {line.strip()}")
            for cited in re.findall(r"\b([A-Za-z_][\w/.-]*\.md)\b", line):
                if cited == "OUT.md":  # a user's output file in a usage line
                    continue
                if not (root / cited).exists() and not any((root / d / cited).exists() for d in ("docs", "analyses",
                                                                                                   "benchmarks")):
                    bad.append(f"{where}: cites {cited}, which the repository does not have")
    assert not bad, "\n".join(bad)


def test_no_suite_imports_another(graph):
    """What two suites share sits below both (geomprobe.suites.base, entropy_axis, sampling; for the
    planner, geomprobe.plan.sula_task and manifold_sample), so a suite runs without another suite's
    code; its faces too. One exception, listed: the report's "Value manifold" section is one figure
    family for the geometry and domain suites, drawn by geometry's figures face with domain's."""
    shared_family = ("geomprobe.suites.geometry.figures", "geomprobe.suites.domain.figures")
    suites = sorted({m.split(".")[2] for m in graph if m.count(".") >= 2 and m.startswith("geomprobe.suites.")
                     and (PACKAGE / "suites" / m.split(".")[2]).is_dir()})
    assert {"sula", "ablation", "geometry"} <= set(suites)
    crossing = [f"{importer} imports {target}" for importer, targets in graph.items() for target in targets
                if importer.startswith("geomprobe.suites.") and target.startswith("geomprobe.suites.")
                and importer.split(".")[2] in suites and target.split(".")[2] in suites
                and importer.split(".")[2] != target.split(".")[2] and (importer, target) != shared_family]
    assert not crossing, "\n".join(crossing)
