"""mkdocs hooks for the documentation site (mkdocs.yml `hooks:`), and the generated CLI reference.

- docs/cli-reference.md: every command and option of the `geomprobe` command line, read from the
  click command tree that typer builds from the option declarations (geomprobe.commandline), with
  each option's help, type and default as `geomprobe CMD --help` prints them. Written by running this
  file (`make docs`); committed so the repository's readers have it too; tests/project/test_docs.py fails
  when it differs from what the CLI says.
- index.md, methods.md, results-schema.md, contributing.md, analyses.md: README.md, METHODS.md,
  RESULTS_SCHEMA.md, CONTRIBUTING.md and analyses/README.md from the repository root, which stay
  where readers of the repository (and the package's docstrings, which cite METHODS.md sections)
  find them. Their links are rewritten for the site: to another page where the site has one, else
  to the file in the repository (REPOSITORY).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
# site page -> repository file, and the links those files make to each other, rewritten for the site
INCLUDED = {"index.md": "README.md", "methods.md": "METHODS.md", "results-schema.md": "RESULTS_SCHEMA.md",
            "contributing.md": "CONTRIBUTING.md", "analyses.md": "analyses/README.md"}
LINKS = {"METHODS.md": "methods.md", "RESULTS_SCHEMA.md": "results-schema.md", "CONTRIBUTING.md": "contributing.md",
         "README.md": "index.md"}


REPOSITORY = "https://github.com/geomprobe/geomprobe/blob/main/"


def _site_links(text: str, source: str) -> str:
    """Relative links of a repository file (at `source`), pointed at site pages or the repository."""
    folder = Path(source).parent

    def rewrite(match: re.Match) -> str:
        target, _, anchor = match.group(1).partition("#")
        if not target:
            return match.group(0)  # an anchor on the same page
        path = os.path.normpath(folder / target)
        if path.startswith("docs/"):
            path = path.removeprefix("docs/")
        elif path in LINKS:
            path = LINKS[path]
        elif path == "analyses/README.md":
            path = "analyses.md"
        elif (ROOT / path).exists():
            path = REPOSITORY + path
        return f"]({path}{'#' + anchor if anchor else ''})"

    return re.sub(r"\]\((?![a-z]+:)([^)\s]+)\)", rewrite, text)


def _command_lines(command, path: list[str], ctx_parent) -> list[str]:
    ctx = command.context_class(command, info_name=path[-1], parent=ctx_parent)  # typer's click or click
    lines = [f"{'#' * min(len(path) + 1, 4)} `{' '.join(path)}`", ""]
    if command.help:
        lines += [command.help.strip().split("\n\n")[0].replace("\n", " "), ""]
    lines += ["```text", " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)]), "```", ""]
    rows = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        flags, text = (part.replace("|", "&#124;").replace("<", "&lt;").replace(chr(10), " ") for part in record)
        rows.append(f"| <code>{flags}</code> | {text} |")
    if rows:
        lines += ["| option | what it does |", "|---|---|", *rows, ""]
    if hasattr(command, "list_commands"):  # a group
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                lines += _command_lines(sub, [*path, name], ctx)
    return lines


def cli_reference() -> str:
    """The command-line reference page, generated from the click tree typer builds."""
    import typer.main

    from geomprobe.cli import app

    head = ["# Command-line reference", "",
            "Generated from the option declarations by `make docs` (scripts/mkdocs_hooks.py; the tests fail when",
            "it is stale). Each suite's options come from its config dataclass; `geomprobe run --suite S --help`",
            "lists the model options and S's own.",
            ""]
    return "\n".join(head + _command_lines(typer.main.get_command(app), ["geomprobe"], None)) + "\n"


def on_files(files, config):
    made = {}
    for page, source in INCLUDED.items():
        made[page] = _site_links((ROOT / source).read_text(), source)
    for page, text in made.items():
        files.append(File.generated(config, page, content=text))
    return files


if __name__ == "__main__":
    (ROOT / "docs" / "cli-reference.md").write_text(cli_reference())
