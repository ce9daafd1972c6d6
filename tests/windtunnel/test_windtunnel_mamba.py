"""The wind tunnels' Mamba: transformers' MambaForCausalLM with its scan evaluated step by step
(geomprobe.windtunnel.mamba) computes what the library's own forward computes."""

import pytest
import torch

from geomprobe.windtunnel.mamba import fast_mixers, selective_scan


def _pair(seed=0):
    from transformers import MambaConfig, MambaForCausalLM

    config = MambaConfig(vocab_size=40, hidden_size=32, num_hidden_layers=2, state_size=8, pad_token_id=1,
                         bos_token_id=0, eos_token_id=0)
    torch.manual_seed(seed)
    library = MambaForCausalLM(config)
    fast = MambaForCausalLM(config)
    fast.load_state_dict(library.state_dict())
    assert fast_mixers(fast) == 2 and fast_mixers(fast) == 0  # once per mixer
    return library.train(), fast.train()


@pytest.mark.slow
def test_the_fast_scan_gives_the_library_outputs_and_gradients():
    library, fast = _pair()
    tokens = torch.randint(0, 40, (3, 17), generator=torch.Generator().manual_seed(1))
    expected, got = library(input_ids=tokens, use_cache=False).logits, fast(input_ids=tokens, use_cache=False).logits
    assert torch.allclose(got, expected, atol=1e-5, rtol=1e-5)
    expected.square().mean().backward()
    got.square().mean().backward()
    for (name, a), b in zip(library.named_parameters(), fast.parameters()):
        assert torch.allclose(b.grad, a.grad, atol=1e-5, rtol=1e-4), name


def test_selective_scan_against_the_recurrence_written_out():
    g = torch.Generator().manual_seed(2)
    batch, d, n, T = 2, 3, 4, 5
    x, dt = torch.randn(batch, d, T, generator=g), torch.rand(batch, d, T, generator=g)
    A, D = -torch.rand(d, n, generator=g), torch.randn(d, generator=g)
    B, C = torch.randn(batch, T, n, generator=g), torch.randn(batch, T, n, generator=g)
    y = selective_scan(x, dt, A, B, C, D)
    for b in range(batch):
        for i in range(d):
            h = torch.zeros(n)
            for t in range(T):
                h = torch.exp(dt[b, i, t] * A[i]) * h + dt[b, i, t] * x[b, i, t] * B[b, t]
                assert float(y[b, i, t]) == pytest.approx(float(h @ C[b, t] + D[i] * x[b, i, t]), abs=1e-5)


@pytest.mark.slow
def test_the_wind_tunnel_mamba_uses_the_fast_scan():
    from geomprobe.windtunnel.models import build

    module, description = build("mamba", 30, 20)
    assert description["arch"] == "mamba"
    assert all(hasattr(m, "_library_forward") for m in module.modules() if type(m).__name__ == "MambaMixer")
