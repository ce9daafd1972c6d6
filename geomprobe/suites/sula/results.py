"""The sula suite's results: the layout of <run>/sula/results.json (checked before it is written; RESULTS_SCHEMA.md
lists it)."""

from __future__ import annotations

from typing import TypedDict

from geomprobe.analysis.estimate import Estimate
from geomprobe.suites.schema import Header, PaperCodeTable, UntrainedNull

SCHEMA_VERSION = 3  # breaking changes of this layout; 3: with the header, untrained nulls and downstream ablation


class SulaPerK(TypedDict):
    k: int  # examples in the prompt
    n: int  # prompts with this k
    H_bayes: Estimate  # mean exact entropy (bits)
    H_model: Estimate  # mean entropy of the model's next-token distribution restricted to the two labels (bits)
    mae_bits: Estimate  # mean |H_model - H_bayes|
    kl_bits: float  # mean KL(Bayes || model) over the labels, bits
    label_mass: float  # mean next-token probability on the two labels
    pc1: Estimate  # mean coordinate on the entropy axis
    rho_pc1_H_bayes: Estimate  # within this k: Spearman rho(PC1, H_bayes), permutation p; null where one is constant (k = 0, 1)


class _SulaConditionRequired(TypedDict):
    labels: list  # the label pair of this condition
    bayes: str  # what Bayes says under this condition
    pc1_basis: str  # own (main) or projected into the main condition's basis
    n_prompts: int  # prompts in the condition
    mae_bits: Estimate  # mean |H_model - H_bayes| (bits): paper III's SULA MAE
    H_bayes: Estimate  # mean exact entropy
    H_model: Estimate  # mean model entropy over the labels
    kl_bits: Estimate  # mean KL(Bayes || model)
    label_mass: Estimate  # mean next-token mass on the labels
    pearson_H_model_H_bayes: Estimate  # calibration: Pearson r over prompts
    spearman_H_model_H_bayes: Estimate  # Spearman rho over prompts
    rho_pc1_H_bayes: Estimate  # Spearman rho(PC1, H_bayes) over all k: confounded with k (H_bayes falls with k)
    rho_pc1_H_bayes_given_k: Estimate  # the headline: Spearman partial rho(PC1, H_bayes) given k (one indicator per k)
    rho_pc1_H_bayes_within_k: Estimate  # prompt-weighted mean of the within-k Spearman rhos; pvalue: PC1 shuffled within each k
    rho_pc1_H_model: Estimate  # Spearman rho of the axis coordinate with the model's entropy
    rho_k_pc1: Estimate  # Spearman rho of the number of examples with the axis coordinate: the confound itself
    pc1: Estimate  # mean axis coordinate
    mae_baselines: dict  # held-out half: split, MAE of model, constant, k_only, k_only_median, zero; model_minus_k_only
    per_k: list[SulaPerK]  # the same per number of examples


class SulaCondition(_SulaConditionRequired, total=False):
    rho_pc1_p_model_l1: Estimate  # Spearman rho of the axis coordinate with the model's p(L1): signed evidence
    next_entropy_bits: Estimate  # mean full-vocabulary next-token entropy
    rho_pc1_H_bayes_given_n_tokens: Estimate  # Spearman partial correlation given the prompt length in tokens
    rho_pc1_H_bayes_given_k_n_tokens: Estimate  # Spearman partial correlation given k and the prompt length in tokens
    rho_n_tokens_pc1: Estimate  # Spearman rho of the prompt length in tokens with the axis coordinate: the length confound


class _SulaRequired(Header):
    settings: dict  # the SULA spec, controls, label choice, example prompts, n_boot
    axis: dict  # layer, readout, pc1_explained, sign, file ("axis.npz"), note
    conditions: dict[str, SulaCondition]  # main and each control
    per_layer: list  # per main layer: pc1_explained, rho_pc1_H_bayes, rho_pc1_H_model
    untrained_null: UntrainedNull | None  # main prompts on untrained copies: mae_bits, abs_rho_pc1_H_bayes_given_k
    reference_paper_iii: dict  # paper values, for comparison only


class SulaResults(_SulaRequired, total=False):
    definitions: str  # geomprobe | paper-code | paper-code-as-released (--definitions)
    paper_code: PaperCodeTable  # with --definitions paper-code: geomprobe's and the released code's numbers


NESTED = (SulaCondition, SulaPerK)  # its nested types, listed in RESULTS_SCHEMA.md
