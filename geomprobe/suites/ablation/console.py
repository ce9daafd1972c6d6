"""The ablation suite's console summary (--details): the baseline line, the primary, downstream
geometry and behaviour tables, one reading per condition and the thresholds. It reads a finished
results.json's dict only."""

from __future__ import annotations

from geomprobe.analysis.ablation_metrics import AXIS_STATISTIC
from geomprobe.console import table_console


def _signed(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:+.{digits}f}"


def _plain(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_summary(results: dict) -> None:
    console = table_console()
    baseline = results["baseline"]
    console.print(f"baseline: SULA MAE {baseline['mae_bits']['value']:.3f} bits, Pearson(H_model, H_bayes) "
                  f"{_plain(baseline['pearson_H_model_H_bayes']['value'], 3)}; axis-entropy Spearman rho per layer "
                  + ", ".join(f"{layer}: {_plain(e.get(AXIS_STATISTIC))}"
                              for layer, e in baseline["axis_entropy"].items()))
    primary_table, geometry_table, behaviour_table = _summary_tables(results)
    for c in results["conditions"]:
        _primary_row(primary_table, c)
        _geometry_rows(geometry_table, c)
        _behaviour_row(behaviour_table, c)
    console.print(primary_table)
    console.print(geometry_table)
    console.print(behaviour_table)
    for c in results["conditions"]:
        console.print(f"{c['id']}: {c['reading']}")
    _print_thresholds(console, results)


def _summary_tables(results: dict):
    """The summary's three empty tables: primary, downstream geometry and behaviour."""
    from rich.table import Table

    settings = results["settings"]
    smallest = settings.get("smallest_p")
    untrained = results.get("untrained_null")
    subtitle = (f"{results['model']}, {settings['n_per_k'] * len(settings['k_values'])} prompts, positions "
                f"{settings['positions']}, {settings['n_random']} matched random axes")
    primary_table = Table(title=f"primary: mean |dH| (bits) of the true axis's edit against the matched random axes' "
                                f"(rank, empirical p, smallest {_plain(smallest)}) and log2(true / random mean) "
                                f"against untrained copies on their own axes "
                                f"({untrained['description'] if untrained else 'none: --null off'}): {subtitle}")
    for column in ("condition", "|dH| true", "random", "rank", "p", "log2 ratio", "untrained", "vs untrained",
                   "p (rule)"):
        primary_table.add_column(column, justify="right", no_wrap=True)
    geometry_table = Table(title="secondary: axis-entropy Spearman rho(v'.u, H_model) downstream of the edit (each "
                                 "layer on its own axis); p Holm-adjusted over each condition's secondary tests")
    for column in ("condition", "edited", "layer", "base", "true", "random mean", "|change| rank", "p Holm"):
        geometry_table.add_column(column, justify="right", no_wrap=True)
    behaviour_table = Table(title="secondary: the output, SULA behaviour under the interventions (change vs the "
                                  "unperturbed pass); p Holm-adjusted; 'changed at': where a change counts")
    for column in ("condition", "MAE bits [95% CI]", "dMAE true", "random", "rank", "p Holm", "dPearson true",
                   "random", "p Holm", "changed at"):
        behaviour_table.add_column(column, justify="right", no_wrap=True)
    return primary_table, geometry_table, behaviour_table


def _primary_row(table, c: dict) -> None:
    """One condition's row of the primary table: its statistic and where it stands among the untrained copies."""
    stat, against = c["primary"]["statistic"], c["primary"]["untrained"]
    if against is None or against.get("status") == "not tested" or "n_nulls" not in against:
        null_cells = ["-", "not tested" if against else "-", "-"]
    else:
        spread = "" if against["null_sd"] is None else f" +- {against['null_sd']:.2f}"
        from geomprobe.analysis.null_comparison import short_words

        status = short_words(against["status"])
        null_cells = [f"{against['null_mean']:+.2f}{spread}", status, f"{against['p_value']:.2f} ({against['rule']})"]
    table.add_row(c["id"], _plain(stat["true"], 4), _plain(stat["random_mean"], 4), _rank(stat),
                  _plain(stat["p_value"]), _signed(stat["log2_ratio"], 2), *null_cells)


def _geometry_rows(table, c: dict) -> None:
    """One condition's rows of the downstream table: its first and last downstream layers, and their mean."""
    geometry, versus = c["true"]["axis_entropy"], c["vs_random"]
    downstream = c["downstream_layers"]
    shown = downstream if len(downstream) <= 2 else [downstream[0], downstream[-1]]
    for layer in shown:
        entry, where = geometry["downstream"][str(layer)], versus["axis_r_downstream_change"][str(layer)]
        random_mean = (None if where["random_mean"] is None or entry["before"] is None
                       else entry["before"] + where["random_mean"])
        table.add_row(c["id"], ",".join(map(str, c["layers"])), str(layer), _plain(entry["before"]),
                      _plain(entry["after"]), _plain(random_mean), _rank(where), _plain(where.get("p_holm")))
    if len(downstream) > 2:
        where = versus["axis_r_mean_abs_change_downstream"]
        table.add_row(c["id"], ",".join(map(str, c["layers"])), f"mean |change|, {downstream[0]}-{downstream[-1]}", "",
                      _plain(geometry["mean_abs_change_downstream"]), _plain(where["random_mean"]), _rank(where),
                      _plain(where.get("p_holm")))


def _behaviour_row(table, c: dict) -> None:
    """One condition's row of the behaviour table: MAE, its change and Pearson's, and where a change counts."""
    behaviour, versus = c["true"]["behaviour"], c["vs_random"]
    mae, dmae, dr = behaviour["mae_bits"], versus["delta_mae_bits"], versus["delta_pearson"]
    limits = c.get("behaviour_thresholds") or {}
    changed_at = (f"{_plain(limits.get('mae_bits'), 3)} bits, {_plain(limits.get('pearson'), 3)}"
                  + ("" if "source" in limits else " (fixed)"))
    table.add_row(c["id"], f"{mae['value']:.3f} [{mae['ci95'][0]:.3f}, {mae['ci95'][1]:.3f}]", _signed(dmae["true"]),
                  _signed(dmae["random_mean"]), _rank(dmae), _plain(dmae.get("p_holm")),
                  _signed(behaviour["delta_pearson"]["value"]), _signed(dr["random_mean"]), _plain(dr.get("p_holm")),
                  changed_at)


def _print_thresholds(console, results: dict) -> None:
    """The summary's closing lines: the reading thresholds and paper III's numbers."""
    t = results["thresholds"]
    behaviour_words = ("|dMAE| and |dPearson| under each condition's 'changed at' (the untrained copies' 95th "
                       "percentile of the same change)" if results.get("untrained_null") else
                       f"|dMAE| < {t['mae_bits']} bits and |dPearson| < {t['pearson']} (fixed: no untrained copies)")
    console.print(f"thresholds: downstream |rho| < {t['axis_r_zero']} no correlation left, rho change >= "
                  f"{t['axis_r_change']}, behaviour unchanged when {behaviour_words}; {t['vs_random']}. At the edited "
                  f"layers themselves a cut makes rho 0 by construction (results: true.axis_entropy.at_edited_layers), "
                  f"which is no evidence.")
    ref = results["reference_paper_iii"]
    multi = ref["multi_layer_true_cut"]
    console.print(f"paper III (Pythia-410M): axis-entropy r {ref['axis_entropy_r_baseline'][0]}-"
                  f"{ref['axis_entropy_r_baseline'][1]} -> about 0 under the true cut, random cuts change it by about "
                  f"{ref['single_layer_random_cut_change']}; multi-layer cut r {multi['axis_entropy_r'][0]} -> "
                  f"{multi['axis_entropy_r'][1]}, SULA MAE and correlation change "
                  f"{multi['sula_mae_and_correlation_change']}; {ref['note']}")


def _rank(where: dict) -> str:
    return "-" if where.get("rank") is None else f"{where['rank']}/{where['of']}"
