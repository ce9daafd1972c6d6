"""Wind-tunnel architectures (METHODS.md section 9), all mapping tokens [batch, T] to logits
[batch, T, vocab] causally:

- transformer: a Hugging Face GPT-NeoX (the Pythia architecture), so every probe of geomprobe
  applies unchanged and it saves and loads like any HF model;
- lstm: embedding, a stacked LSTM, a linear readout;
- mlp: at position t, an MLP reads the concatenated embeddings of the whole prefix (positions
  after t zeroed), so it sees the same information as the others but has no recurrence or
  attention;
- mamba: transformers' MambaForCausalLM, its scan evaluated step by step from small slices
  (geomprobe.windtunnel.mamba: the library's CPU fallback takes minutes per training step).

`build(arch, vocab_size, max_len, target_params=...)` sizes the LSTM and MLP to about the
transformer's parameter count.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

ARCHITECTURES = ("transformer", "lstm", "mlp", "mamba")


@dataclass
class TransformerSpec:
    d_model: int = 128
    n_layers: int = 4
    n_heads: int = 4
    d_mlp: int = 512

    def validate(self) -> None:
        """Raise ConfigError (one line naming the option) unless the transformer can be built."""
        from geomprobe.errors import ConfigError

        for name, value in (("--d-model", self.d_model), ("--n-layers", self.n_layers), ("--n-heads", self.n_heads),
                            ("d_mlp", self.d_mlp)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value}")
        if self.d_model % self.n_heads:
            raise ConfigError(f"--d-model ({self.d_model}) must be divisible by --n-heads ({self.n_heads}): each "
                              f"head gets d_model / n_heads dimensions (e.g. --d-model "
                              f"{max(self.n_heads, self.d_model - self.d_model % self.n_heads)} or --n-heads "
                              f"{_divisor_near(self.d_model, self.n_heads)})")


def _divisor_near(n: int, k: int) -> int:
    """The divisor of n closest to k (the larger one on a tie)."""
    return min((d for d in range(1, n + 1) if n % d == 0), key=lambda d: (abs(d - k), -d))


def gpt_neox(vocab_size: int, max_len: int, spec: TransformerSpec, seed: int):
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    config = GPTNeoXConfig(vocab_size=vocab_size, hidden_size=spec.d_model, num_hidden_layers=spec.n_layers,
                           num_attention_heads=spec.n_heads, intermediate_size=spec.d_mlp,
                           max_position_embeddings=max(2048, max_len), rotary_pct=0.25,
                           use_parallel_residual=True, tie_word_embeddings=False, bos_token_id=0, eos_token_id=0,
                           pad_token_id=1, attn_implementation="sdpa", hidden_dropout=0.0, attention_dropout=0.0)
    torch.manual_seed(seed)
    return GPTNeoXForCausalLM(config)


class LSTMModel(nn.Module):
    def __init__(self, vocab_size: int, d_model: int, n_layers: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.lstm = nn.LSTM(d_model, d_model, num_layers=n_layers, batch_first=True)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.lstm(self.embed(tokens))
        return self.head(hidden)


class PrefixMLP(nn.Module):
    """logits[t] = MLP(concat(embed(tokens[0..t]), zeros for positions > t))."""

    def __init__(self, vocab_size: int, max_len: int, d_embed: int, d_hidden: int):
        super().__init__()
        self.max_len = max_len
        self.embed = nn.Embedding(vocab_size, d_embed)
        self.mlp = nn.Sequential(nn.Linear(max_len * d_embed, d_hidden), nn.GELU(), nn.Linear(d_hidden, d_hidden),
                                 nn.GELU(), nn.Linear(d_hidden, vocab_size))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        batch, length = tokens.shape
        if length > self.max_len:
            raise ValueError(f"the MLP reads at most {self.max_len} positions, got {length}")
        emb = self.embed(tokens)  # [B, T, e]
        emb = torch.nn.functional.pad(emb, (0, 0, 0, self.max_len - length))  # [B, max_len, e]
        causal = torch.tril(torch.ones(length, self.max_len, device=tokens.device))  # row t sees 0..t
        prefix = emb[:, None, :, :] * causal[None, :, :, None]  # [B, T, max_len, e]
        return self.mlp(prefix.flatten(2))


class HFLogits(nn.Module):
    """Wrap an HF causal LM so that forward(tokens) returns logits."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=tokens, use_cache=False).logits


def n_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _fit(make, target: int, low: int, high: int) -> nn.Module:
    """make(width) with the width in [low, high] whose parameter count is closest to target
    (bisection: counts grow with width)."""
    while high - low > 1:
        mid = (low + high) // 2
        if n_params(make(mid)) < target:
            low = mid
        else:
            high = mid
    candidates = [make(low), make(high)]
    return min(candidates, key=lambda m: abs(n_params(m) - target))


def build(arch: str, vocab_size: int, max_len: int, spec: TransformerSpec | None = None, seed: int = 0):
    """(module whose forward(tokens) gives logits, description dict). LSTM and MLP are sized to the
    transformer's parameter count."""
    spec = spec or TransformerSpec()
    if arch not in ARCHITECTURES:
        from geomprobe.errors import ConfigError

        raise ConfigError(f"unknown architecture '{arch}': choose one of {', '.join(ARCHITECTURES)}")
    spec.validate()
    transformer = gpt_neox(vocab_size, max_len, spec, seed)
    target = n_params(transformer)
    torch.manual_seed(seed)
    if arch == "transformer":
        module = HFLogits(transformer)
    elif arch == "lstm":
        module = _fit(lambda w: LSTMModel(vocab_size, w, 2), target, 16, 1024)
    elif arch == "mlp":
        module = _fit(lambda w: PrefixMLP(vocab_size, max_len, 16, w), target, 16, 2048)
    else:
        from transformers import MambaConfig, MambaForCausalLM

        from .mamba import fast_mixers

        mamba = _fit(lambda w: MambaForCausalLM(MambaConfig(
            vocab_size=vocab_size, hidden_size=w, num_hidden_layers=spec.n_layers, state_size=16,
            pad_token_id=1, bos_token_id=0, eos_token_id=0)), target, 16, 512)
        fast_mixers(mamba)  # the library's CPU scan takes minutes per training step (geomprobe.windtunnel.mamba)
        module = HFLogits(mamba)
    description = {"arch": arch, "n_params": n_params(module), "transformer_spec": asdict(spec),
                   "matched_to_params": target}
    return module, description
