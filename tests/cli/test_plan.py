"""Memory and time planning (geomprobe.plan, `geomprobe plan`): parameter groups that reproduce every
published count, weights per dtype and quantisation, Mixtral's active parameters, forward-pass and
prompt counts checked against what the ablation and sula suites actually run, fits / why with
explicit memory, the recommended batch size, the CLI, and a preflight that is cheap and never raises."""

import json
import time

import pytest
from typer.testing import CliRunner

from geomprobe.backends.hf import HFBackend
from geomprobe.cli import app
from geomprobe.config import RunConfig
from geomprobe.errors import ConfigError
from geomprobe.models.builtin import TINY_MODELS
from geomprobe.models.published import PUBLISHED, build_on_meta, count_parameters
from geomprobe.plan import (
    GiB,
    architecture_from_fields,
    cached_tokenizer,
    plan,
    preflight,
    recommend_batch_size,
    resolve_target,
    weights_bytes,
)
from geomprobe.runner import run
from geomprobe.suites.ablation import AblationConfig
from geomprobe.suites.sula import SulaConfig

PYTHIA_410M = 405_334_016
A100 = dict(device="cuda", device_name="NVIDIA A100-SXM4-80GB", host_memory=512 * GiB)


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.fixture
def forward_calls(monkeypatch):
    """Every forward call extraction makes through the hf backend: (prompts, real tokens) per call."""
    calls = []
    original = HFBackend.run_batch

    def counted(self, input_ids, attention_mask, final_index):
        calls.append((int(input_ids.shape[0]), int(attention_mask.sum())))
        return original(self, input_ids, attention_mask, final_index)

    monkeypatch.setattr(HFBackend, "run_batch", counted)
    return calls


# ----------------------------------------------------------------------------------------------
# Parameters and weights


@pytest.mark.parametrize("alias", list(PUBLISHED))
def test_parameter_groups_reproduce_every_published_count(alias):
    entry = PUBLISHED[alias]
    arch = architecture_from_fields(entry.config, entry.n_params)
    assert arch.counted == entry.n_params  # embeddings + unembedding + linear + experts + norms/biases


@pytest.mark.parametrize("name", list(TINY_MODELS))  # one per row of geomprobe.families
def test_parameter_groups_match_a_meta_build_of_each_builtin(name):
    import transformers

    from geomprobe.models.builtin import _COMMON, BUILTIN_CONFIGS

    class_name, overrides = BUILTIN_CONFIGS[name]
    config = getattr(transformers, class_name)(**{**_COMMON, **overrides})
    model = transformers.BertModel(config) if TINY_MODELS[name].encoder else build_on_meta(config)
    assert resolve_target(name).arch.n_params == count_parameters(model)


def test_weights_of_pythia_410m_by_dtype_and_quantisation():
    arch = resolve_target("pythia-410m").arch
    assert arch.n_params == PYTHIA_410M
    assert weights_bytes(arch, "float32")[0] == PYTHIA_410M * 4
    assert weights_bytes(arch, "bfloat16")[0] == PYTHIA_410M * 2 == weights_bytes(arch, "float16")[0]
    four, eight, bf16 = (weights_bytes(arch, "bfloat16", q)[0] for q in ("4bit", "8bit", None))
    assert four < eight < bf16
    # 8-bit: the linear weights at 1 byte (+ a float32 scale per row), the embeddings and norms in the dtype
    assert eight == arch.linear + 4 * arch.linear_rows + (PYTHIA_410M - arch.linear) * 2
    assert four == arch.linear // 2 + 4 * -(-arch.linear // 64) + (PYTHIA_410M - arch.linear) * 2
    p = plan("pythia-410m", "extract", device="cpu", device_memory=64 * GiB)
    assert p.weights_bytes == PYTHIA_410M * 4 and "405,334,016 params x 4 bytes" in p.weights_how
    assert plan("pythia-410m", "extract", device="cpu", dtype="bfloat16").weights_bytes == PYTHIA_410M * 2


def test_mixtral_active_and_total_parameters():
    arch = resolve_target("mixtral-8x7b").arch
    assert arch.n_params == 46_702_792_704
    expert = 3 * 4096 * 14336  # one expert of one layer
    assert arch.experts == 32 * 8 * expert
    assert arch.n_params_active == arch.n_params - 32 * 6 * expert == 12_879_925_248  # 2 of 8 experts
    p = plan("mixtral-8x7b", "extract", dtype="bfloat16", device_memory=400 * GiB, **A100)
    assert p.n_params_active == 12_879_925_248 and p.weights_bytes == arch.n_params * 2  # all experts resident
    # bitsandbytes quantises nn.Linear only: transformers 5's fused experts stay in the dtype
    four = weights_bytes(arch, "bfloat16", "4bit")
    if int(__import__("transformers").__version__.split(".")[0]) >= 5:
        assert four[0] > 0.95 * arch.experts * 2 and "stay in bfloat16" in four[1]


# ----------------------------------------------------------------------------------------------
# Passes: what the suites actually run


@pytest.mark.slow
def test_ablation_pass_count_equals_what_the_suite_runs(tmp_path, forward_calls):
    out = tmp_path / "ablation"
    options = dict(n_per_k=3, n_random=2, ops="cut,shift", n_boot=20, null="off")
    p = plan("windtunnel-sula", "ablation", device="cpu", **options)
    ablation = p.suite("ablation")
    run(RunConfig(model="windtunnel-sula", out=str(out)), AblationConfig(**options), progress=False)
    results = json.loads((out / "ablation" / "results.json").read_text())
    conditions = list((out / "ablation" / "conditions").glob("*.json"))
    # layer 0 has no axis (every prompt ends in ':'), which leaves one layer set: 1 + 3 ops x 1 set x (1 + 2)
    assert results["settings"]["n_forward_passes"] == len(conditions) == 10
    assert ablation.passes("baseline") + ablation.passes("conditions") == 10
    assert [s["name"] for s in results["settings"]["layer_sets"]] == ["L1"]
    assert (out / "ablation" / "sula-main" / "extraction-main" / "meta.json").exists()
    # and one unedited pass reads what the attention sees of each control's edit (the matched gains)
    assert ablation.passes("axis fit") == 1 and ablation.passes("matched controls") == 1 and ablation.n_passes == 12
    assert len(forward_calls) == ablation.n_batches == p.n_batches
    assert sum(n for n, _ in forward_calls) == ablation.n_prompts == 12 * 15
    assert sum(t for _, t in forward_calls) == ablation.tokens  # wind-tunnel lengths are exact


@pytest.mark.slow
def test_ablation_block_runs_equal_the_plans_prefix_share(tmp_path, monkeypatch):
    """Prefix reuse in the estimate: the decoder-block calls the suite makes (batches x blocks)
    equal the plan's, the edited passes' share of blocks included; with reuse off every pass
    runs every block."""
    import geomprobe.models as models
    import geomprobe.prefix as prefix

    calls, recording = [], []
    real_load, real_inputs = models.load_model, prefix.block_inputs

    def counting(*args, **kwargs):
        loaded = real_load(*args, **kwargs)
        for index, block in enumerate(loaded.adapter.layers()):
            block.register_forward_pre_hook(
                lambda module, inputs, index=index: None if recording and index >= recording[-1] else calls.append(1))
        return loaded

    def stubbed(adapter, start, forward):  # blocks start.. are stubs there that record their inputs: not runs
        recording.append(start)
        try:
            return real_inputs(adapter, start, forward)
        finally:
            recording.pop()

    monkeypatch.setattr(models, "load_model", counting)
    monkeypatch.setattr(prefix, "block_inputs", stubbed)
    options = dict(n_per_k=3, n_random=2, ops="cut,shift", n_boot=20, null="off")
    for reuse in ("0", "1"):
        monkeypatch.setenv("GEOMPROBE_PREFIX_REUSE", reuse)
        calls.clear()
        ablation = plan("windtunnel-sula", "ablation", device="cpu", **options).suite("ablation")
        run(RunConfig(model="windtunnel-sula", out=str(tmp_path / reuse)), AblationConfig(**options), progress=False)
        n_layers = json.loads((tmp_path / reuse / "manifest.json").read_text())["model"]["shape"]["n_layers"]
        planned = sum(s.n_batches * n_layers * s.blocks for s in ablation.sweeps)
        conditions = ablation.sweeps[-1]
        assert len(calls) == pytest.approx(planned, abs=1e-9)
        # one set (L1) of 3 layers: the 9 edited passes run blocks 1-2 (2 batches of 8 and 7 prompts), the prefix
        # block 0 once per batch, and one batch of the check runs 3 + 2 blocks
        assert conditions.blocks == (pytest.approx((9 * 2 * 2 + 2 * 1 + 5) / (9 * 3 * 2)) if reuse == "1" else 1.0)


@pytest.mark.slow
def test_sula_prompt_count_equals_what_the_suite_runs(tmp_path, load_tiny, forward_calls):
    out = tmp_path / "sula"
    options = dict(n_per_k=3, k_values="0,1,2", null="init:1", n_boot=20)
    loaded = load_tiny("tiny-neox")
    p = plan("tiny-neox", "sula", device="cpu", tokenizer=loaded.tokenizer, **options)
    sula = p.suite("sula")
    forward_calls.clear()
    run(RunConfig(model="tiny-neox", out=str(out)), SulaConfig(**options), progress=False)
    rows = {f.stem: [json.loads(line) for line in f.read_text().splitlines()]
            for f in (out / "sula").glob("prompts-*.jsonl")}
    planned = {s.what.split()[1]: s for s in sula.sweeps if s.what.startswith("condition")}
    assert sorted(planned) == sorted(name.removeprefix("prompts-") for name in rows)
    assert sum(len(r) for r in rows.values()) == sum(s.n_prompts for s in planned.values()) == 5 * 9
    for name, records in rows.items():  # the tokenizer's own lengths
        assert sum(r["n_tokens"] for r in records) == planned[name.removeprefix("prompts-")].tokens
    null_meta = json.loads((out / "sula" / "nulls" / "init-1000" / "extraction-main" / "meta.json").read_text())
    assert null_meta["n_prompts"] == 9 == sula.sweeps[-1].n_prompts and sula.sweeps[-1].on == "null"
    assert len(sula.loads) == 1 and sula.n_passes == 6
    assert len(forward_calls) == sula.n_batches
    assert sum(n for n, _ in forward_calls) == sula.n_prompts


@pytest.mark.slow
def test_default_pass_counts_of_the_suites():
    p = plan("pythia-410m", "all", device="cpu", device_memory=64 * GiB, null="init:3")
    ablation = p.suite("ablation")  # 1 + (2 + 2 x shift) x 3 layer sets x (1 + 19): README's 241
    assert ablation.passes("baseline") + ablation.passes("conditions") == 241
    assert ablation.passes("axis fit") == 1  # sula's 250 per k differ from ablation's 100: not reused
    assert ablation.sweeps[-1].lengths.n == 500
    sula = p.suite("sula")
    assert sum(s.n_prompts for s in sula.sweeps if s.on == "model") == 5 * 1250
    assert sum(s.n_prompts for s in sula.sweeps if s.on == "null") == 3 * 1250
    geometry = p.suite("geometry")
    # drawn by length: the nulls extract the model's sample, nobody scores the candidates
    assert [s.lengths.n for s in geometry.sweeps] == [75] + [75] * 3
    by_entropy = plan("pythia-410m", "geometry", device="cpu", device_memory=64 * GiB, null="init:3",
                      sample="entropy").suite("geometry")
    # each null scores the candidates for its own stratified sample, then extracts it
    assert [s.lengths.n for s in by_entropy.sweeps] == [1448, 75] + [1448, 75] * 3
    assert len(geometry.loads) == 4  # three init nulls and Pythia's step0 key baseline
    same = plan("pythia-410m", "sula,ablation", device="cpu", n_per_k=100)
    assert same.suite("ablation").passes("axis fit") == 0  # the sula suite's axes are reused
    wt = plan("windtunnel-sula", "all", device="cpu")
    assert wt.suite("domain").skipped
    mechanisms = wt.suite("mechanisms")  # 3 layers x (4 heads + all heads + skip) + the unablated pass
    assert mechanisms.passes("ablations") == 1 + 3 * (4 + 2)


# ----------------------------------------------------------------------------------------------
# Memory: fits, why, batch size


def test_mixtral_float32_does_not_fit_in_16_gib_and_why_names_the_numbers():
    p = plan("mixtral-8x7b", "sula", dtype="float32", device_memory=16 * GiB, **A100)
    assert p.weights_bytes == 46_702_792_704 * 4
    assert p.fits is False
    assert "174.0 GiB" in p.why and "16.0 GiB" in p.why and "activations" in p.why
    assert any(line.startswith("fits") and "NO" in line for line in p.lines())
    roomy = plan("mixtral-8x7b", "sula", dtype="bfloat16", device_memory=400 * GiB, null="off", **A100)
    assert roomy.fits and not roomy.why


def test_null_copies_are_unquantised_and_resident_beside_the_model():
    p = plan("mistral-7b", "sula", dtype="bfloat16", quantize="4bit", device_memory=16 * GiB, **A100)
    weights = p.weights_bytes
    assert weights < 7_241_732_096 * 2 / 2
    with_null = p.phases[1]
    assert with_null.weights_bytes == weights + 7_241_732_096 * 2
    assert not p.fits and "null" in p.why
    assert plan("mistral-7b", "sula", dtype="bfloat16", quantize="4bit", device_memory=16 * GiB, null="off",
                **A100).fits


def test_a_cpu_plan_holds_the_process_and_a_gpu_plan_does_not():
    """On a CPU the run's RAM is the whole process: every phase adds PROCESS_BYTES (Python, torch,
    transformers); on a GPU the device holds weights and activations only."""
    from geomprobe.plan import PROCESS_BYTES

    cpu = plan("pythia-410m", "sula", device="cpu", device_memory=80 * GiB, null="init:2")
    gpu = plan("pythia-410m", "sula", device_memory=80 * GiB, null="init:2", **A100)
    assert [p.process_bytes for p in cpu.phases] == [PROCESS_BYTES] * 2
    assert all(p.device_bytes == p.weights_bytes + p.activation_bytes + PROCESS_BYTES for p in cpu.phases)
    assert all(p.process_bytes == 0 and p.device_bytes == p.weights_bytes + p.activation_bytes for p in gpu.phases)
    assert any("the process" in line for line in cpu.lines())
    tight = cpu.phases[1].device_bytes - PROCESS_BYTES  # fits only without the process
    need = tight + max(int(0.1 * tight), GiB)
    assert plan("pythia-410m", "sula", device="cpu", device_memory=need, null="init:2").fits is False


def test_preflight_counts_prompts_with_the_models_tokenizer(load_tiny):
    """The runner's preflight counts tokens as `geomprobe plan` does, with the model's tokenizer when
    it is at hand: the longest prompt sets the activation peak."""
    source = str(load_tiny("tiny-neox").source)
    config = RunConfig(model=source)
    counted = plan(source, "geometry", run_config=config, device="cpu",
                   tokenizer=cached_tokenizer(resolve_target(source)))
    estimated = plan(source, "geometry", run_config=config, device="cpu")
    checked = preflight(source, config, "geometry", "cpu")
    assert checked.tokens_how == "the model's tokenizer" != estimated.tokens_how
    assert checked.activation_bytes == counted.activation_bytes


@pytest.mark.slow
def test_recommended_batch_size_is_monotone_in_memory(tmp_path):
    prompts = tmp_path / "long.txt"
    prompts.write_text("\n".join(" ".join(["word"] * 3000) for _ in range(40)) + "\n")
    sizes = []
    for memory in (16, 18, 20, 24, 32, 48, 64, 96, 160):
        p = plan("mistral-7b", "extract", run_config=RunConfig(model="mistral-7b", prompts=str(prompts)),
                 dtype="bfloat16", device_memory=memory * GiB, **A100)
        sizes.append(recommend_batch_size(p))
    assert sizes == sorted(sizes) and sizes[0] < 64 and sizes[-1] == 64
    assert all(size & (size - 1) == 0 for size in sizes)  # powers of two
    assert recommend_batch_size(plan("mistral-7b", "extract", device="cpu")) == 8


def test_activations_grow_with_the_batch_and_count_the_cpu_attention_matrix():
    gpu = plan("pythia-410m", "geometry", device_memory=80 * GiB, **A100)
    cpu = plan("pythia-410m", "geometry", device="cpu", device_memory=80 * GiB)
    assert cpu.activation_per_prompt > gpu.activation_per_prompt  # math SDPA forms [heads, T, T] on a CPU
    bigger = plan("pythia-410m", "geometry", batch_size=16, device_memory=80 * GiB, **A100)
    assert bigger.activation_bytes == 2 * gpu.activation_bytes
    assert gpu.activation_bytes < gpu.weights_bytes  # no [batch, T, vocab] logits


# ----------------------------------------------------------------------------------------------
# Sources, errors, preflight, CLI


def test_local_directories_and_wind_tunnels_resolve_offline(load_tiny):
    loaded = load_tiny("tiny-llama")
    target = resolve_target(loaded.source)
    assert target.kind == "local" and target.arch.n_params == count_parameters(loaded.model)
    assert cached_tokenizer(target) is not None
    wt = resolve_target("windtunnel-sula")
    assert wt.windtunnel["task"] == "sula" and wt.arch.n_layers == 3 and wt.arch.d_model == 64


def test_unknown_models_suites_and_options_are_one_line_errors():
    with pytest.raises(ConfigError, match="did you mean mistral-7b"):
        plan("mistrl-7b", "sula")
    with pytest.raises(ConfigError, match="unknown suite"):
        plan("pythia-410m", "sulla")
    with pytest.raises(ConfigError, match="--n-random is an option of the ablation suite"):
        plan("pythia-410m", "sula", n_random=3)
    with pytest.raises(ConfigError, match="not in the local Hugging Face cache"):
        plan("someone/not-cached-model", "extract")


@pytest.mark.slow
def test_preflight_is_cheap_never_raises_and_plan_is_json_ready():
    configs = [SulaConfig(), AblationConfig()]
    preflight("pythia-14m", RunConfig(model="pythia-14m"), configs, "cpu")  # the CPU benchmark, once
    for alias in list(PUBLISHED) + ["tiny-neox", "windtunnel-sula"]:
        start = time.perf_counter()
        p = preflight(alias, RunConfig(model=alias), configs, "cpu")
        # a bound a loaded machine keeps (0.5 s failed once at 0.52 s under a parallel test run): a
        # preflight that loaded weights or scored a corpus would take tens of seconds
        assert time.perf_counter() - start < 2.0, alias
        assert isinstance(p.fits, bool)
    broken = preflight("no-such-model", RunConfig(), configs, "cpu")
    assert broken.fits is True and broken.why.startswith("no plan: unknown model")
    json.dumps(plan("mixtral-8x7b", "all", dtype="bfloat16", device_memory=80 * GiB, **A100).to_dict())


@pytest.mark.slow
def test_cli_prints_the_plan_of_mistral_7b_sula():
    result = CliRunner().invoke(app, ["plan", "--model", "mistral-7b", "--suite", "sula"])
    assert result.exit_code == 0, result.output
    text = result.output
    for label in ("weights", "activations", "sula", "total", "time", "fits"):
        assert any(line.startswith(label) for line in text.splitlines()), label
    assert "7,241,732,096 params x 4 bytes (float32)" in text and "27.0 GiB" in text
    assert "1,250  condition main" in text
    gpu = CliRunner().invoke(app, ["plan", "--model", "mistral-7b", "--suite", "sula,ablation", "--dtype", "bfloat16",
                                   "--device", "cuda", "--gpu", "H100 SXM", "--memory", "80", "--json"])
    assert gpu.exit_code == 0, gpu.output
    data = json.loads(gpu.output)
    assert data["fits"] is True and data["weights_bytes"] == 7_241_732_096 * 2
    assert data["suites"][1]["name"] == "ablation" and data["recommended_batch_size"] == 64
    bad = CliRunner().invoke(app, ["plan", "--model", "mistrl-7b"])
    assert bad.exit_code == 2 and "did you mean" in bad.output


@pytest.mark.slow
def test_plan_takes_exactly_runs_options_and_default_suite():
    """`geomprobe plan` is built from the same dataclasses as `run`: the same option names and the
    same default suite, plus the machine to plan for; a suite option plan used to refuse plans."""
    import inspect

    from geomprobe.commandline import DEFAULT_SUITE, PlanCommand, RunCommand

    run_params = {p.name: p for p in inspect.signature(RunCommand(lambda *a: None, "")).parameters.values()}
    plan_params = {p.name: p for p in inspect.signature(PlanCommand(lambda *a: None, "")).parameters.values()}
    assert set(plan_params) - set(run_params) == {"memory", "ram", "gpu", "recalibrate"}  # both: --json, --config
    assert set(run_params) - set(plan_params) == {"quiet", "verbose", "details", "report"}
    assert {"as_json", "config"} <= set(plan_params) & set(run_params)
    assert plan_params["suite"].default.default is run_params["suite"].default.default is None  # not given: ...
    planned = json.loads(CliRunner().invoke(app, ["plan", "--model", "tiny-neox", "--json"]).stdout)
    assert [suite["name"] for suite in planned["suites"]] == [DEFAULT_SUITE]  # ... the default suite
    result = CliRunner().invoke(app, ["plan", "--model", "tiny-neox", "--suite", "geometry", "--n-per-quintile", "4",
                                      "--layers", "1,2", "--null", "off", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["suites"][0]["name"] == "geometry"
    default = CliRunner().invoke(app, ["plan", "--model", "tiny-neox", "--json"])
    assert default.exit_code == 0 and json.loads(default.output)["suites"][0]["name"] == DEFAULT_SUITE
    refused = CliRunner().invoke(app, ["plan", "--model", "tiny-neox", "--suite", "sula", "--n-random", "3"])
    assert refused.exit_code == 2 and "--n-random is an option of the ablation suite" in refused.output
