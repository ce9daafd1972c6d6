"""The extraction engine (METHODS.md section 1): one forward pass per prompt, final-token slices.

For every prompt and every requested layer it records, at the final non-padding token:
    values             float32 [n_prompts, n_layers, n_kv_heads, d_head]   (v = W_V x + b_V)
    attn_entropy_bits  float32 [n_prompts, n_layers, n_heads]    (that token's attention row)
    n_visible_keys     int32   [n_prompts, n_layers]             (keys the row may weight)
    next_entropy_bits  float32 [n_prompts]                       (causal LMs only)
    token_probs        float32 [n_prompts, n_tokens]             (when tokens are named)
    z                  float32 [n_prompts, n_layers, n_heads, d_head]     (readout "z")
    resid              float32 [n_prompts, n_layers, d_model]             (readout "resid")
    hidden             float32 [n_prompts, n_layers, d_model]             (readout "hidden")
    n_tokens           int32   [n_prompts]

The residual readouts differ at the last layer only:
    resid[:, i]   the output of block layers[i], the residual stream after it, before any final norm.
    hidden[:, i]  the model's own `output_hidden_states=True` entry hidden_states[layers[i] + 1], as
                  transformers defines it: block l's output for l < L - 1, and for l = L - 1 the
                  output AFTER the final norm (GPT-NeoX final_layer_norm, Llama-like norm, Phi
                  final_layernorm), i.e. hidden_states[-1], what the unembedding reads and what the
                  papers' code (analyze_geometry.py) calls the final hidden state. Encoders (BERT)
                  have no final norm: there hidden equals resid at every layer.

Prompts are sorted by length, batched, right-padded; a prompt's results do not depend on its
batch. With an output directory, each finished batch is written as a shard right away, so an
interrupted run resumes where it stopped; the arrays above are assembled at the end, on disk, one
shard at a time, and returned memory-mapped, so memory does not grow with the number of prompts.
Opening the directory again removes what an interruption can leave: temporary files of atomic
writes, shards beside a finished extraction, and (with a warning) shards that cannot be read,
whose prompts are recomputed.

NaN or inf in any array is an error (NumericalError), naming the prompt and the first layer where
it appears (or the next-token logits), with advice for the dtype and the first parameter of the
model that is not finite, if any.

Two backends produce the same arrays: "hf" (geomprobe's own hooks and attention function) and
"tl" (TransformerLens 4 TransformerBridge), see geomprobe.backends.

The package: arrays (Extraction, ExtractionConfig, the readouts), tokens (prompts to padded token
ids), checks (what extraction refuses; NaN and inf), storage (the sinks, shards, meta.json and
load_extraction) and engine (extract). Every public name, and the private ones other modules import,
is importable from geomprobe.extraction.
"""

from __future__ import annotations

from .arrays import BACKENDS, READOUTS, Extraction, ExtractionConfig, NotExtractedError
from .checks import _check_finite as _check_finite
from .engine import extract, make_backend
from .storage import _identity as _identity
from .storage import _MemorySink as _MemorySink
from .storage import _prompts_sha256 as _prompts_sha256
from .storage import _write_prompts as _write_prompts
from .storage import load_extraction
from .tokens import _Encoded as _Encoded
from .tokens import _pad_id as _pad_id
from .tokens import as_prompts, pad_batch, resolve_token_ids, tokenize, unknown_token_id, unknown_words

# the `name as name` imports: private names that prefix.py, nulls.py, mechanisms.py, benchmarks
# and tests import from geomprobe.extraction
__all__ = ["BACKENDS", "READOUTS", "Extraction", "ExtractionConfig", "NotExtractedError", "as_prompts", "extract",
           "load_extraction", "make_backend", "pad_batch", "resolve_token_ids", "tokenize", "unknown_token_id",
           "unknown_words"]
