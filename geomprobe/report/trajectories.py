"""Trajectories: a statistic against training step, one line per model (runs of one model at
several checkpoints; the step comes from the revision, geomprobe.compare.identify), in the cross-run
section. Each suite names its statistics in its figures face (register_trajectories); this module
draws them, apart from figures.py because only the cross-run section does."""

from __future__ import annotations

import plotly.graph_objects as go

from .figures import NULL_SHUFFLE, PALETTE, Figure, ci_whiskers, esc, style

# the statistics drawn, (suite, statistic, title): each suite's figures face adds its own
_TRAJECTORIES: list[tuple[str, str, str]] = []


def register_trajectories(suite: str, statistics: tuple[tuple[str, str], ...]) -> None:
    """Draw these statistics of `suite` against training step, in a report of runs of one model at
    several checkpoints: (statistic, title) pairs naming the suite's compare rows (geomprobe.compare).
    A statistic ending in "[*]" stands for every row it prefixes; "[headline]" for the run's own
    headline condition (the text of the suite's "headline_condition" row)."""
    _TRAJECTORIES.extend((suite, statistic, title) for statistic, title in statistics)


def trajectory_statistics() -> list[tuple[str, str, str]]:
    """(suite, statistic, title) of every statistic drawn against training step, after each suite
    folder's figures face is loaded (geomprobe.suites.base.load_faces): in suite registry order and,
    within one suite, as registered (a suite that is not registered after them)."""
    from geomprobe.suites.base import SUITES, load_faces

    load_faces("figures")
    order = {name: rank for rank, name in enumerate(SUITES)}
    return sorted(_TRAJECTORIES, key=lambda entry: order.get(entry[0], len(order)))


def step_text(step) -> str:
    """1 -> '1', 1000 -> '1k', 143000 -> '143k', 2500000 -> '2.5M'."""
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if step >= scale:
            return f"{step / scale:g}{suffix}"
    return f"{step:g}"


def zero_position(steps: list[int]) -> float:
    """Where a log axis draws step 0: a decade below the smallest positive step (1 when there is none)."""
    positive = [s for s in steps if s > 0]
    return min(positive) / 10 if positive else 1.0


def step_axis(steps: list[int], zero_at: float | None = None) -> tuple[dict, float]:
    """A log x axis for training steps and where step 0 is drawn (zero_position), labelled '0'."""
    import math

    positive = sorted({s for s in steps if s > 0})
    zero_at = zero_position(steps) if zero_at is None else zero_at
    ticks = [zero_at] if any(s == 0 for s in steps) else []
    if positive and positive[-1] / positive[0] >= 100:  # two decades or more: one tick per decade
        low, high = math.floor(math.log10(positive[0])), math.ceil(math.log10(positive[-1]))
        ticks += [10.0 ** e for e in range(low, high + 1)]
    else:
        ticks += positive
    text = ["0" if t == zero_at and 0 in steps else step_text(t) for t in ticks]
    return dict(type="log", tickmode="array", tickvals=ticks, ticktext=text, title="training step (log; 0 at left)",
                showgrid=True), zero_at


def trajectory_figures(rows: list[dict]) -> list[Figure]:
    """One figure per headline statistic (trajectory_statistics) against training step, for every
    model with runs at two or more steps: one line per model (the model spec without its revision),
    whiskers the 95% CIs as the suite computed them, grey the untrained copies' mean where the suite
    compared with them. rows: geomprobe.compare tidy rows (suite_rows / aggregate(...).rows)."""
    runs: dict[str, tuple] = {}
    for row in rows:
        runs.setdefault(row["run"], (row["model"], row["step"]))
    by_model: dict[str, dict[int, list[str]]] = {}
    for label, (model, step) in runs.items():
        if step is not None:
            by_model.setdefault(model, {}).setdefault(step, []).append(label)
    models = {model: steps for model, steps in by_model.items() if len(steps) >= 2}
    if not models:
        return []
    single = sorted(model for model, steps in by_model.items() if len(steps) < 2)
    index = {(row["run"], row["suite"], row["statistic"]): row for row in rows}
    headline = {(row["run"], row["suite"]): row["text"] for row in rows if row["statistic"] == "headline_condition"}
    specs = []
    for suite, statistic, title in trajectory_statistics():
        if statistic.endswith("[*]"):
            prefix = statistic[:-2]
            found = sorted({row["statistic"] for row in rows if row["suite"] == suite
                            and row["statistic"].startswith(prefix)})
            specs += [(suite, name, f"{title}, {name[len(prefix):-1]}") for name in found]
        else:
            specs.append((suite, statistic, title))
    zero_at = zero_position([s for steps in models.values() for s in steps])
    colors = {model: PALETTE[i % len(PALETTE)] for i, model in enumerate(sorted(models))}
    figures = []
    for suite, statistic, title in specs:
        series = {}
        for model in sorted(models):
            points = []
            for step in sorted(models[model]):
                for label in models[model][step]:
                    name = (statistic.replace("[headline]", f"[{headline.get((label, suite))}]")
                            if "[headline]" in statistic else statistic)
                    row = index.get((label, suite, name))
                    if row is not None and row["value"] is not None:
                        points.append((step, label, row))
            if points:
                series[model] = points
        if not any(len({step for step, _, _ in points}) >= 2 for points in series.values()):
            continue
        figures.append(_trajectory(suite, statistic, title, series, colors, zero_at, single))
    return figures


def _trajectory(suite: str, statistic: str, title: str, series: dict, colors: dict, zero_at: float,
                single: list[str]) -> Figure:
    fig = go.Figure()
    steps_drawn = sorted({step for points in series.values() for step, _, _ in points})
    shown_null = False
    for model, points in series.items():
        color = colors[model]
        x = [step if step > 0 else zero_at for step, _, _ in points]
        cis = [[row["ci_low"], row["ci_high"]] if row["ci_low"] is not None else None for _, _, row in points]
        custom = [[step, esc(label), "" if ci is None else f" [{ci[0]:.4g}, {ci[1]:.4g}]",
                   esc(row["status_vs_untrained"] or "")] for (step, label, row), ci in zip(points, cis)]
        fig.add_trace(go.Scatter(x=x, y=[row["value"] for _, _, row in points], mode="lines+markers", name=esc(model),
                                 legendgroup=esc(model), line=dict(color=color, width=2.5),
                                 marker=dict(size=9, color=color), customdata=custom,
                                 hovertemplate="%{customdata[1]}<br>step %{customdata[0]}: %{y:.4g}%{customdata[2]}"
                                               "<br>%{customdata[3]}<extra></extra>"))
        if any(ci is not None for ci in cis):
            fig.add_trace(ci_whiskers(x, cis, f"{esc(model)} 95% CI", color, showlegend=False,
                                      legendgroup=esc(model)))
        nulls = [(xi, row["untrained_null_mean"]) for xi, (_, _, row) in zip(x, points)
                 if row["untrained_null_mean"] is not None]
        if nulls:
            fig.add_trace(go.Scatter(x=[p[0] for p in nulls], y=[p[1] for p in nulls], mode="lines+markers",
                                     name="untrained copies (mean)", legendgroup="untrained", showlegend=not shown_null,
                                     line=dict(color=NULL_SHUFFLE, width=1.5, dash="dot"), marker=dict(size=5),
                                     hovertemplate=f"{esc(model)}, untrained copies: %{{y:.4g}}<extra></extra>"))
            shown_null = True
    axis, _ = step_axis(steps_drawn, zero_at)
    style(fig, 380, xaxis=axis, yaxis_title=esc(title))
    where = "; ".join(f"{model}: steps " + ", ".join(step_text(step) if step else "0" for step, _, _ in points)
                      for model, points in series.items())
    caption = (f"{title} ({suite} suite, statistic {statistic}) of each model against its training step (log axis; "
               f"step 0 drawn at {zero_at:g} and labelled 0), one line per model, whiskers the 95% CIs as the suite "
               f"computed them{', grey the mean of the untrained copies' if shown_null else ''}: look for when the "
               f"statistic leaves its untrained value and where it settles ({where}).")
    notes = ([f"models with a single checkpoint are not drawn: {', '.join(single)}"] if single else [])
    return Figure(f"Trajectory: {title}", caption, fig, notes)
