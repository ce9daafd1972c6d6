"""geomprobe.quantization: the perturbation that stands for a quantisation error of unknown sign."""

import torch

from geomprobe.quantization import perturb_like_quantisation, quantisation_step


def _on_grid(out_features=6, in_features=70, bits=4, seed=0):
    """Weights exactly on a per-block 4-bit grid (min + level * step), every level used in each block."""
    g = torch.Generator().manual_seed(seed)
    levels = 2**bits - 1
    blocks = -(-in_features // 32)
    low = torch.randn(out_features, blocks, generator=g)
    step = torch.rand(out_features, blocks, generator=g) * 0.1 + 0.01
    codes = torch.randint(0, levels + 1, (out_features, blocks * 32), generator=g)
    codes[:, ::32] = 0
    codes[:, 1::32] = levels
    weight = low.repeat_interleave(32, 1) + codes * step.repeat_interleave(32, 1)
    return weight[:, :in_features].contiguous(), step.repeat_interleave(32, 1)[:, :in_features], low


def test_step_is_the_grid_spacing_and_noise_rounds_back():
    weight, step, low = _on_grid()
    torch.testing.assert_close(quantisation_step(weight), step, rtol=1e-5, atol=1e-6)
    model = torch.nn.Linear(70, 6, bias=False)
    model.weight.data.copy_(weight)
    assert perturb_like_quantisation(model, seed=3) == weight.numel()
    moved = model.weight.data - weight
    assert (moved.abs() <= step / 2 + 1e-6).all() and moved.abs().max() > step.min() / 4
    # rounding to the grid gives back the original: the copy is within the quantisation cell
    codes = torch.round((model.weight.data - low.repeat_interleave(32, 1)[:, :70]) / step)
    torch.testing.assert_close(low.repeat_interleave(32, 1)[:, :70] + codes * step, weight, rtol=0, atol=1e-5)
    # uniform in the cell: its variance is step^2 / 12
    ratio = float((moved / step).var())
    assert abs(ratio - 1 / 12) < 0.02


def test_vectors_stay_and_tied_weights_move_once():
    embedding = torch.nn.Embedding(40, 64)
    head = torch.nn.Linear(64, 40, bias=True)
    head.weight = embedding.weight  # tied
    model = torch.nn.ModuleDict({"embed": embedding, "head": head, "norm": torch.nn.LayerNorm(64)})
    before = {k: v.clone() for k, v in model.state_dict().items()}
    moved = perturb_like_quantisation(model, seed=0)
    assert moved == 40 * 64
    after = model.state_dict()
    assert torch.equal(after["head.bias"], before["head.bias"]) and torch.equal(after["norm.weight"], before["norm.weight"])
    assert not torch.equal(after["embed.weight"], before["embed.weight"])
    assert torch.equal(after["embed.weight"], after["head.weight"])
    torch.manual_seed(0)
    again = {k: v.clone() for k, v in before.items()}
    model.load_state_dict(again)
    perturb_like_quantisation(model, seed=0)
    assert torch.equal(model.state_dict()["embed.weight"], after["embed.weight"])  # seeded
