"""Memory and time planning: what a run will cost, before any weights are loaded.

    from geomprobe.plan import plan, preflight, recommend_batch_size
    p = plan("mistral-7b", "sula", dtype="bfloat16", device="cuda", device_memory=80 * 2**30,
             device_name="NVIDIA H100 80GB HBM3")
    print("\\n".join(p.lines()))          # every figure with how it was computed
    p.weights_bytes, p.activation_bytes, p.n_passes, p.time_s, p.fits, p.why
    recommend_batch_size(p)               # the largest power of two <= 64 that fits (CUDA; 8 on a CPU)

Everything is offline and cheap: no weights are read and nothing is downloaded. The shapes come
from geomprobe.models.published (hub aliases: config.json fields and the published parameter
count), the built-in tiny models' and wind tunnels' own configs, a local directory's config.json,
or a hub id's config.json in the local Hugging Face cache. Parameters are counted in groups by
formula (embeddings, the untied unembedding, linear weights, fused expert weights, norms and
biases); the formulas reproduce every alias's published total exactly (tests/cli/test_plan.py) and the
meta-device count of the built-in models.

What is estimated, and how (each figure carries its formula in `Plan.lines()`):

- weights: parameters x bytes of the dtype (float32 4, bfloat16/float16 2). --quantize 8bit
  (bitsandbytes LLM.int8): the nn.Linear weights of the blocks 1 byte each plus a float32 scale per
  output row, everything else in the dtype. 4bit (nf4, as geomprobe.models.loading asks for it:
  blocks of 64, no double quantisation): 0.5 byte per linear weight plus a float32 absmax per block
  (1/16 byte a weight; double quantisation would make it about 1/64), everything else in the dtype.
  The unembedding is never quantised. transformers >= 5 keeps Mixtral's experts as fused 3-D
  parameters, which bitsandbytes does not quantise (it replaces nn.Linear modules only), so there
  the experts, 97% of Mixtral's weights, stay in the dtype; all experts are resident.
- activations (one batch): geomprobe's forward runs SDPA plus a recomputed final query row and never
  forms [batch, T, vocab] logits (the unembedding reads the final position only), so per prompt of
  T tokens about T x (4 d_model + (2 heads + 2 kv_heads) d_head + 3 d_ff (gated) or 2 d_ff) in the
  dtype, plus the mask T^2 bytes; on a CPU the math SDPA kernel also forms the [heads, T, T] scores
  and probabilities (2 heads T^2 in the dtype); plus the final-row capture of a layer (the keys
  repeated per query head in float32, heads x T x d_head x 4), the per-layer final-token readouts
  (layers x readout width x 4 bytes) and the final position's logits (3 x vocab x 4). The longest
  batch sets the peak (extraction runs the longest prompts first).
- passes: one pass is one sweep over a prompt set; each suite's sweeps are counted from its options
  as the suite runs them, by the suite's cost model (below); untrained null models (--null init:N) are built
  from the config at the run's dtype, never quantised, and are resident next to the model while
  they run (on the CPU under --device-map).
- time: FLOPs per sweep = 2 x active matmul parameters x tokens + 2 x vocab x d_model per prompt
  (the final-position unembedding) + the attention's 2 x 2 x heads x d_head x T^2 / 2 per prompt and
  layer; at a device throughput (CUDA: a table of dense bf16 / fp32 TFLOP/s by device name, times
  an efficiency of 0.35; CPU: the machine's recorded matmul rate (geomprobe.timing, measured once
  for about a second), times 0.7, calibrated on a
  4-layer Pythia-410M-width model on 2 cores) and, as a lower bound for small
  batches, one read of the weights per forward call at the device's memory bandwidth. The range is
  [max(compute, memory), 2 x (compute + memory) + 1 ms per layer and batch]; loading and building
  models is added at assumed rates. That is each suite's estimate before calibration; where this
  machine has finished runs of a suite on a model within 10x the size (geomprobe.timing), the
  suite's time is its upper estimate times their median measured / estimated ratio, / and x 1.5.
- fits: weights + activations (+ on a CPU the process itself, PROCESS_BYTES: Python, torch and
  transformers, about 450 MiB) + max(10%, 1 GiB) against the device's free memory (CUDA
  mem_get_info; CPU: MemAvailable; --device-map: the visible GPUs plus the CPU), in every phase
  (the model alone; with a null model beside it; Pythia's step0 key baseline on the CPU).

A suite's cost model is a planner(ctx, options) -> SuitePlan, looked up in PLANNERS by suite name.
A built-in suite's lives in its folder, geomprobe/suites/<name>/plan.py (a "plan" face), which
ends with register_planner("<name>", plan_<name>); the faces are imported, through
geomprobe.suites.base.load_faces("plan"), the first time anything here reads PLANNERS
(planners()), so this package never imports them itself. A plug-in suite calls register_planner
itself, or, if it is a package, gives itself a plan.py as the built-ins do; a suite without a
planner is listed as not planned. This package holds the machinery the planners share: the
architecture, token counting (TokenCounter, corpus_texts), Passes / Load / SuitePlan and the
PlanContext (ctx) a planner reads; config_of lets one suite's planner read another's options
when they are planned together (the ablation reuses the sula suite's axes).

`preflight(model_spec, run_config, suite_configs, device)` is the runner's cheap check (it never
raises); `geomprobe plan` prints the same Plan.

The package, in the order a plan uses it: constants (the assumed figures), architecture (shapes
and parameter groups), target (a model spec resolved), weights, tokens (prompt lengths), context
(Passes / Load / SuitePlan, PlanContext and the planners' registry), device, activations (one
prompt's bytes, a sweep's FLOPs) and planning (Plan, plan, preflight). Import the names below from
geomprobe.plan itself; the modules are its parts, not its API.
"""

# noqa F401: names outside __all__ that the suites' plan faces, benchmarks and tests import from geomprobe.plan
from .architecture import CONFIG_CLASS_TYPES, LLAMA_LIKE, Architecture, architecture_from_fields, parameter_groups  # noqa: F401
from .constants import DTYPE_BYTES, PROCESS_BYTES, STARTUP_S, GiB  # noqa: F401
from .context import PLANNERS, Load, Passes, PlanContext, SuitePlan, planners, register_planner  # noqa: F401
from .device import DeviceInfo, cpu_benchmark, device_info
from .planning import Phase, Plan, plan, preflight, recommend_batch_size, recommended_batch
from .target import cached_tokenizer, resolve_target
from .tokens import Lengths, TokenCounter, corpus_texts
from .weights import weights_bytes

__all__ = ["Architecture", "DeviceInfo", "Lengths", "Load", "Phase", "Plan", "PlanContext", "Passes", "SuitePlan",
           "TokenCounter", "architecture_from_fields", "cached_tokenizer", "corpus_texts", "cpu_benchmark",
           "device_info", "parameter_groups", "plan", "planners", "preflight", "recommend_batch_size",
           "recommended_batch", "register_planner", "resolve_target", "weights_bytes"]
