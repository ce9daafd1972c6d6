"""geomprobe.paper_code: the released code's definitions, checked on known answers (hand-set vectors,
analytic values, scikit-learn/scipy, and a tiny transformers GPT-NeoX for the fused split)."""

import math

import numpy as np
import pytest
import torch

from geomprobe import paper_code as pc


@pytest.fixture(scope="module")
def tiny_neox():
    """A 2-layer GPT-NeoX, H = 4 heads of width 16, partial rotary, random init, eager attention."""
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    torch.manual_seed(0)
    config = GPTNeoXConfig(hidden_size=64, num_attention_heads=4, num_hidden_layers=2, intermediate_size=128,
                           vocab_size=50, max_position_embeddings=32, rotary_pct=0.25)
    config._attn_implementation = "eager"
    return GPTNeoXForCausalLM(config).eval()


# ----------------------------------------------------------------------------------------------
# Layouts


def test_neox_split_matches_the_models_own_q_k_v(tiny_neox, monkeypatch):
    import transformers.models.gpt_neox.modeling_gpt_neox as neox

    seen, fused = {}, {}
    original = neox.eager_attention_forward

    def recording(module, query, key, value, *args, **kwargs):  # [batch, H, T, d], after rotary for q and k
        seen[module.layer_idx] = (query.detach(), key.detach(), value.detach())
        return original(module, query, key, value, *args, **kwargs)

    monkeypatch.setattr(neox, "eager_attention_forward", recording)
    handles = [layer.attention.query_key_value.register_forward_hook(
        lambda module, args, out, i=i: fused.__setitem__(i, out.detach())) for i, layer in enumerate(tiny_neox.gpt_neox.layers)]
    try:
        with torch.no_grad():
            tiny_neox(torch.randint(0, 50, (2, 7), generator=torch.Generator().manual_seed(1)))
    finally:
        for handle in handles:
            handle.remove()
    H, d, rotary = 4, 16, 4  # rotary_pct 0.25 of d = 16: only the first 4 dims of q and k rotate
    for layer in (0, 1):
        q, k, v = (t.transpose(1, 2) for t in pc.neox_split(fused[layer], H, d))  # -> [batch, H, T, d]
        model_q, model_k, model_v = seen[layer]
        torch.testing.assert_close(v, model_v, rtol=0, atol=0)
        for ours, theirs in ((q, model_q), (k, model_k)):
            torch.testing.assert_close(ours[:, :, 0], theirs[:, :, 0])  # the rotary embedding is the identity at position 0
            torch.testing.assert_close(ours[..., rotary:], theirs[..., rotary:], rtol=0, atol=0)
        released_v = pc.neox_split(fused[layer], H, d, as_released=True)[2].transpose(1, 2)
        assert not torch.allclose(released_v, model_v)
        truth = dict(zip(pc.KINDS, (q, k, v)))
        # H = 4: the released "values" are blocks 8-11 of 12: v of head 2, then q, k, v of head 3
        assert pc.neox_released_blocks(H, "v") == [(2, "v"), (3, "q"), (3, "k"), (3, "v")]
        for slot, (head, kind) in enumerate(pc.neox_released_blocks(H, "v")):
            torch.testing.assert_close(released_v[:, slot], truth[kind][:, head], rtol=0, atol=0)


def test_neox_released_blocks_of_pythia_410m():
    later = [(head, kind) for head in range(11, 16) for kind in "qkv"]
    assert pc.neox_released_blocks(16, "v") == [(10, "v")] + later
    assert pc.neox_released_blocks(16, "k") == [(5, "k"), (5, "v")] + [(h, kind) for h in range(6, 10) for kind in "qkv"] \
        + [(10, "q"), (10, "k")]
    assert pc.neox_released_blocks(16, "q") == [(h, kind) for h in range(5) for kind in "qkv"] + [(5, "q")]


def test_neox_released_origin_of_pythia_410m_values_column_by_column():
    H, d = 16, 64
    origin = pc.neox_released_origin(H, d, "v")
    assert len(origin) == H * d == 1024
    # fused column 2048 = 10 * 192 + 128: the first column of head 10's v, which the values hold in full
    assert origin[0] == (10, "v", 0) and origin[63] == (10, "v", 63)
    assert origin[64] == (11, "q", 0) and origin[128] == (11, "k", 0) and origin[1023] == (15, "v", 63)
    assert sorted({head for head, kind, _ in origin if kind == "v"}) == [10, 11, 12, 13, 14, 15]
    assert sum(kind == "v" for _, kind, _ in origin) == 6 * 64
    assert {head for head, _, _ in origin} == set(range(10, 16))
    # the same, read off a fused output in the true (H, 3, d) layout whose entries name themselves
    code = np.arange(H * 3 * d).reshape(H, 3, d)  # code = 3 d head + d kind + index
    released_v = pc.neox_split(code.reshape(-1), H, d, as_released=True)[2].reshape(-1)
    assert [(int(c // (3 * d)), pc.KINDS[int(c % (3 * d)) // d], int(c % d)) for c in released_v] == origin
    assert (pc.neox_split(code.reshape(-1), H, d)[2] == code[:, 2]).all()


def test_neox_split_rejects_a_wrong_width():
    with pytest.raises(ValueError, match="3 \\* 4 \\* 16"):
        pc.neox_split(np.zeros((2, 100)), 4, 16)


def test_llama_keys_and_the_released_reshape_by_hand():
    k = np.arange(8.0)  # G = 2 kv heads of d = 4: (0 1 2 3) and (4 5 6 7)
    np.testing.assert_array_equal(pc.llama_keys(k, 2, 4), [[0, 1, 2, 3], [4, 5, 6, 7]])
    # by H = 4 query heads: four "heads" of width 2, each half of a kv head
    np.testing.assert_array_equal(pc.llama_keys_as_released(k, 4, 2, 4), [[0, 1], [2, 3], [4, 5], [6, 7]])
    assert pc.llama_released_origin(4, 2, 4) == [(0, 0, 2), (0, 2, 4), (1, 0, 2), (1, 2, 4)]
    # Llama-3.2-1B: 32 query heads, 8 kv heads of 64 -> 32 slices of 16, four per kv head
    llama = torch.zeros(3, 5, 512)
    assert tuple(pc.llama_keys_as_released(llama, 32, 8, 64).shape) == (3, 5, 32, 16)
    assert tuple(pc.llama_keys(llama, 8, 64).shape) == (3, 5, 8, 64)
    assert pc.llama_released_origin(32, 8, 64)[5] == (1, 16, 32)
    with pytest.raises(ValueError, match="divisible"):
        pc.llama_keys_as_released(np.zeros(4), 3, 1, 4)


def test_llama_released_reshape_changes_final_token_key_orthogonality():
    # two orthogonal kv-head keys; the released "heads" are their halves: (1,0) (1,0) (0,1) (0,1)
    k = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0])
    correct = pc.llama_keys(k, 2, 4)[None, None]
    released = pc.llama_keys_as_released(k, 4, 2, 4)[None, None]
    assert pc.final_token_key_orthogonality(correct)[0] == pytest.approx(0.0, abs=1e-12)
    assert pc.final_token_key_orthogonality(released)[0] == pytest.approx(2 / 6, abs=1e-9)  # 2 of 6 pairs have |cos| 1


# ----------------------------------------------------------------------------------------------
# The "final hidden state"


def _last_block_output(model, backbone_layers, ids):
    store = {}
    handle = backbone_layers[-1].register_forward_hook(
        lambda module, args, out: store.__setitem__("out", out[0] if isinstance(out, tuple) else out))
    try:
        with torch.no_grad():
            out = model(ids, output_hidden_states=True)
    finally:
        handle.remove()
    return store["out"], out.hidden_states[-1]


def test_post_final_norm_turns_resid_into_hidden_states_last(tiny_neox):
    from geomprobe.adapters import adapter_for

    ids = torch.randint(0, 50, (2, 6), generator=torch.Generator().manual_seed(2))
    resid, hidden_last = _last_block_output(tiny_neox, tiny_neox.gpt_neox.layers, ids)
    assert not torch.allclose(resid, hidden_last)
    torch.testing.assert_close(pc.post_final_norm(tiny_neox, resid), hidden_last)
    from_numpy = pc.post_final_norm(adapter_for(tiny_neox), resid[:, -1].numpy())
    assert isinstance(from_numpy, np.ndarray) and from_numpy.dtype == np.float32
    np.testing.assert_allclose(from_numpy, hidden_last[:, -1].numpy(), rtol=1e-5, atol=1e-6)


def test_post_final_norm_on_llama_and_on_a_model_without_final_norm():
    from transformers import BertConfig, BertModel, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    llama = LlamaForCausalLM(LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
                                         num_key_value_heads=2, vocab_size=40, max_position_embeddings=16)).eval()
    resid, hidden_last = _last_block_output(llama, llama.model.layers, torch.tensor([[1, 5, 7, 2]]))
    torch.testing.assert_close(pc.post_final_norm(llama, resid), hidden_last)
    bert = BertModel(BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                                vocab_size=40)).eval()
    resid = np.ones((2, 32), dtype=np.float32)
    assert pc.final_norm_module(bert) is None and pc.post_final_norm(bert, resid) is resid


# ----------------------------------------------------------------------------------------------
# Key orthogonality


def test_cosine_means_on_hand_set_vectors():
    assert pc.mean_abs_offdiag_cosine(np.eye(5)) == pytest.approx(0.0, abs=1e-15)
    assert pc.mean_abs_offdiag_cosine([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]) == pytest.approx(1.0)
    # (1,0), (1,1), (0,1): pairs 1/sqrt2, 0, 1/sqrt2
    assert pc.mean_abs_offdiag_cosine([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]) == pytest.approx(math.sqrt(2) / 3)
    # (1,0), (0,1), (-1,0): pairs 0, -1, 0 -> signed -1/3, absolute 1/3
    vectors = [[1.0, 0.0], [0.0, 3.0], [-2.0, 0.0]]
    assert pc.signed_mean_offdiag_cosine(vectors) == pytest.approx(-1 / 3)
    assert pc.mean_abs_offdiag_cosine(vectors) == pytest.approx(1 / 3)
    stacked = pc.mean_abs_offdiag_cosine(np.stack([np.eye(2), np.ones((2, 2))]))
    np.testing.assert_allclose(stacked, [0.0, 1.0])
    with pytest.raises(ValueError, match="at least 2"):
        pc.mean_abs_offdiag_cosine([[1.0, 0.0]])


def test_embedding_key_orthogonality_of_gaussian_embeddings_is_the_analytic_value():
    from geomprobe.analysis.key_orthogonality import analytic_gaussian

    D = 1024
    embeddings = np.random.default_rng(0).standard_normal((3000, D))
    draws = pc.embedding_key_orthogonality(embeddings, generator=1, n_layers=8)
    assert draws.shape == (8,) and len(set(draws.tolist())) == 8  # a fresh draw per "layer"
    assert draws.mean() == pytest.approx(math.sqrt(2 / (math.pi * D)), abs=1e-3)
    assert draws.mean() == pytest.approx(analytic_gaussian(D), abs=5e-4)
    assert pc.embedding_key_orthogonality(embeddings, generator=7) == pc.embedding_key_orthogonality(embeddings, generator=7)
    with pytest.raises(ValueError, match="seed"):
        pc.embedding_key_orthogonality(embeddings, generator=None)


@pytest.mark.slow
def test_embedding_key_orthogonality_draws_with_replacement_below_vocab_size():
    # rows 0-149 orthonormal, rows 150-199 one shared direction (the padding rows past the tokenizer's vocabulary)
    embeddings = np.zeros((200, 151))
    embeddings[np.arange(150), np.arange(150)] = 1.0
    embeddings[150:, 150] = 1.0
    restricted = pc.embedding_key_orthogonality(embeddings, generator=3, vocab_size=150, n_layers=20)
    # only repeated ids give a non-zero cosine: a pair of draws repeats with probability 1/150
    assert (restricted > 0).all() and restricted.mean() == pytest.approx(1 / 150, abs=0.002)
    everything = pc.embedding_key_orthogonality(embeddings, generator=3, n_layers=200)
    # a pair has cosine 1 when both ids fall in the shared rows, or one id is drawn twice
    assert everything.mean() == pytest.approx((50 / 200) ** 2 + 150 / 200**2, abs=0.006)
    with pytest.raises(ValueError, match="vocab_size"):
        pc.embedding_key_orthogonality(embeddings, generator=0, vocab_size=201)


def test_final_token_key_orthogonality_by_hand():
    keys = np.zeros((2, 1, 3, 2))
    keys[0, 0] = [[1, 0], [0, 1], [1, 0]]   # pairs 0, 1, 0 -> 1/3
    keys[1, 0] = [[1, 0], [1, 1], [0, 1]]   # sqrt(2)/3
    np.testing.assert_allclose(pc.final_token_key_orthogonality(keys), [(1 / 3 + math.sqrt(2) / 3) / 2])
    with pytest.raises(ValueError, match="n_prompts"):
        pc.final_token_key_orthogonality(keys[0])


def test_vocab_token_key_cosine_is_signed_and_per_head():
    embeddings = np.eye(3)  # the whole vocabulary: three orthonormal tokens
    w_k = np.zeros((2, 3, 2))
    w_k[0] = [[1, 0], [0, 1], [0, 0]]      # keys (1,0), (0,1), (0,0)... a zero key has cosine 0
    w_k[1] = [[1, 0], [1, 0], [-1, 0]]     # keys (1,0), (1,0), (-1,0): cosines 1, -1, -1
    np.testing.assert_allclose(pc.vocab_token_key_cosine(embeddings, w_k), [0.0, -1 / 3], atol=1e-12)


def test_wk_column_orthogonality_is_geomprobes_statistic():
    orthonormal = np.linalg.qr(np.random.default_rng(0).standard_normal((8, 3)))[0]
    equal_columns = np.ones((8, 3))
    assert pc.wk_column_orthogonality(orthonormal[None]) == pytest.approx(0.0, abs=1e-12)
    assert pc.wk_column_orthogonality(np.stack([orthonormal, equal_columns])) == pytest.approx(0.5)


# ----------------------------------------------------------------------------------------------
# Interventions


def test_paper_cut_only_shift_by_hand():
    v, u = np.array([3.0, 4.0]), np.array([2.0, 0.0])  # u is normalised inside
    np.testing.assert_allclose(pc.paper_cut(v, u, 0.0), [0.0, 4.0])
    np.testing.assert_allclose(pc.paper_cut(v, u, 0.5), [1.5, 4.0])
    np.testing.assert_allclose(pc.paper_cut(v, u, 1.0), [3.0, 4.0])
    np.testing.assert_allclose(pc.paper_only(v, u), [3.0, 0.0])
    np.testing.assert_allclose(pc.paper_shift(v, u, delta_sigma=2.0, sigma_pc1=0.5), [4.0, 4.0])
    rng = np.random.default_rng(0)
    values, axis = rng.standard_normal((2, 3, 16)), rng.standard_normal(16)
    unit = axis / np.linalg.norm(axis)
    assert np.abs(pc.paper_cut(values, axis, 0.0) @ unit).max() < 1e-12
    np.testing.assert_allclose(pc.paper_cut(values, axis, 1.0), values, rtol=0, atol=1e-12)
    cut32 = pc.paper_cut(torch.as_tensor(values, dtype=torch.float32), axis, 0.0)
    assert cut32.dtype == torch.float32 and (cut32 @ torch.as_tensor(unit, dtype=torch.float32)).abs().max() < 1e-5


def test_paper_cut_counts_lambda_the_other_way_and_ignores_the_mean():
    from geomprobe.interventions import InterventionAxis, apply_op

    rng = np.random.default_rng(1)
    p = 6
    u = rng.standard_normal(p)
    u /= np.linalg.norm(u)
    values = torch.as_tensor(rng.standard_normal((4, p)), dtype=torch.float64)
    plain = InterventionAxis(mean=np.zeros(p), scale=np.ones(p), kept=np.ones(p, bool), u=u, sigma_u=1.0)
    for geomprobe_lambda in (1.0, 0.3, 0.0):
        torch.testing.assert_close(apply_op(values, plain, "cut", cut_lambda=geomprobe_lambda).double(),
                                   pc.paper_cut(values, u, 1.0 - geomprobe_lambda), atol=1e-6, rtol=0)
    # geomprobe centres first: v - ((v - mu) . u) u, the released code v - (v . u) u; they differ by (mu . u) u
    mean = rng.standard_normal(p)
    centred = InterventionAxis(mean=mean, scale=np.ones(p), kept=np.ones(p, bool), u=u, sigma_u=1.0)
    gap = apply_op(values, centred, "cut", cut_lambda=1.0).double() - pc.paper_cut(values, u, 0.0)
    torch.testing.assert_close(gap, torch.as_tensor((mean @ u) * u).expand(4, p), atol=1e-6, rtol=0)


def test_paper_cut_in_bfloat16_rounds_even_at_lambda_scale_one():
    generator = torch.Generator().manual_seed(0)
    values = torch.randn(4096, generator=generator).to(torch.bfloat16)
    u = torch.randn(4096, generator=generator).numpy()
    kept = pc.paper_cut(values, u, 1.0)
    assert kept.dtype == torch.bfloat16
    assert (kept != values).any()  # v - p + p rounds in bfloat16: the released "no-op" is not one
    torch.testing.assert_close(kept.float(), values.float(), atol=0.05, rtol=0.02)


def test_paper_random_axes_are_not_orthogonal_to_the_true_axis():
    from geomprobe.interventions import InterventionAxis, random_directions

    p = 16
    u = np.zeros(p)
    u[0] = 1.0
    axes = pc.paper_random_axes(u, 4000, generator=0)
    np.testing.assert_allclose(np.linalg.norm(axes, axis=1), 1.0)
    overlap = axes @ u
    assert np.mean(overlap**2) == pytest.approx(1 / p, abs=0.006)  # E cos^2 = 1/p for a uniform direction
    assert np.abs(overlap).max() > 0.3
    np.testing.assert_array_equal(axes, pc.paper_random_axes(u, 4000, generator=np.random.default_rng(0)))
    axis = InterventionAxis(mean=np.zeros(p), scale=np.ones(p), kept=np.ones(p, bool), u=u, sigma_u=1.0)
    assert np.abs(random_directions(axis, 20, seed=0, layer=0) @ u).max() < 1e-12  # geomprobe's controls


def test_released_random_axis_is_seeded_by_seed_plus_layer():
    a = pc.released_random_axis(64, seed=0, layer=1)
    assert a.dtype == np.float32 and float(np.linalg.norm(a)) == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_array_equal(a, pc.released_random_axis(64, seed=1, layer=0))
    assert not np.array_equal(a, pc.released_random_axis(64, seed=0, layer=0))


def test_released_edited_layers():
    assert pc.released_edited_layers(24, layer_idx=-1) == []  # the CLI default edits nothing
    assert pc.released_edited_layers(24, layer_idx=12) == [12]
    assert pc.released_edited_layers(24, layer_indices=[8, 12, 16, 20, 23]) == [8, 12, 16, 20, 23]
    assert pc.released_edited_layers(24, layer_idx=5, layer_indices=[]) == [5]
    assert pc.released_edited_layers(24) == []


# ----------------------------------------------------------------------------------------------
# Statistics


def test_participation_ratio_by_hand_and_top_10():
    assert pc.participation_ratio(np.full(7, 2.5)) == pytest.approx(7.0)
    assert pc.participation_ratio(np.full(20, 1.0), top=10) == pytest.approx(10.0)
    assert pc.participation_ratio([1.0, 3.0]) == pytest.approx(16 / 10)
    assert pc.participation_ratio([1.0, 3.0, 0.5], top=2) == pytest.approx(1.6)  # the largest two, whatever the order
    with pytest.raises(ValueError, match="positive"):
        pc.participation_ratio([0.0, 0.0])


def test_spectrum_against_scikit_learn():
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    from geomprobe.analysis.pca import explained_variance_ratios

    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 25)) @ rng.standard_normal((25, 30)) * rng.uniform(0.1, 5.0, 30)
    x[:, 3] = 2.0  # a constant column: StandardScaler keeps it as zeros, geomprobe drops it
    for standardise in (False, True):
        data = StandardScaler().fit_transform(x) if standardise else x
        full = PCA(svd_solver="full").fit(data)
        np.testing.assert_allclose(pc.pc_variance_fractions(x, standardise)[:25], full.explained_variance_ratio_[:25],
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(pc.pc_eigenvalues(x, standardise)[:25], full.explained_variance_[:25], rtol=1e-9)
        top10 = PCA(n_components=10, svd_solver="full").fit(data).explained_variance_
        assert pc.participation_ratio(pc.pc_eigenvalues(x, standardise), top=10) == pytest.approx(
            float(top10.sum() ** 2 / (top10**2).sum()), rel=1e-9)
    np.testing.assert_allclose(pc.pc_variance_fractions(x, True)[:25], explained_variance_ratios(x)[:25], rtol=1e-9)
    eig = pc.pc_eigenvalues(x, True)
    assert pc.participation_ratio(eig, top=10) < pc.participation_ratio(eig)


def test_pc_coordinates_carry_scikit_learns_sign():
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(3)
    for seed in range(5):
        x = np.random.default_rng(seed).standard_normal((30, 12)) * rng.uniform(0.5, 3.0, 12)
        expected = PCA(n_components=2, svd_solver="full").fit_transform(StandardScaler().fit_transform(x))
        np.testing.assert_allclose(pc.pc_coordinates(x, True, 2), expected, atol=1e-9)
        by_coordinates = pc.pc_coordinates(x, True, 2, sign="coordinates")
        np.testing.assert_allclose(np.abs(by_coordinates), np.abs(expected), atol=1e-9)
        assert (by_coordinates[np.argmax(np.abs(by_coordinates), axis=0), [0, 1]] > 0).all()
    with pytest.raises(ValueError, match="sign"):
        pc.pc_coordinates(x, True, sign="other")


def test_correlation_against_scipy():
    from scipy.stats import pearsonr, spearmanr

    rng = np.random.default_rng(0)
    x = rng.standard_normal(50)
    y = np.exp(2 * x) + 0.1 * rng.standard_normal(50)
    assert pc.correlation(x, y, "pearson") == pytest.approx(pearsonr(x, y)[0], rel=1e-12)
    assert pc.correlation(x, y, "spearman") == pytest.approx(spearmanr(x, y)[0], rel=1e-12)
    assert pc.correlation(x, np.exp(3 * x), "spearman") == pytest.approx(1.0)
    assert pc.correlation(x, np.exp(3 * x), "pearson") < 0.9
    with pytest.raises(ValueError, match="method"):
        pc.correlation(x, y, "kendall")


def test_released_value_manifold_reproduces_the_scripts():
    from scipy.stats import spearmanr
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(5)
    entropy = rng.uniform(0, 1, 60)
    x = np.outer(entropy, rng.standard_normal(20)) * 3 + rng.standard_normal((60, 20)) * rng.uniform(0.2, 2.0, 20)
    values = x.reshape(60, 4, 5)  # [n_prompts, n_heads, d_head]: flattened inside, as the scripts do
    pca = PCA(n_components=10, svd_solver="full")
    coords = pca.fit_transform(StandardScaler().fit_transform(x))
    eig = pca.explained_variance_
    got = pc.released_value_manifold(values, entropy, "analyze_icl_sula")
    assert got["pc1"] == pytest.approx(pca.explained_variance_ratio_[0], rel=1e-9)
    assert got["pc2"] == pytest.approx(pca.explained_variance_ratio_[1], rel=1e-9)
    assert got["participation_ratio"] == pytest.approx(eig.sum() ** 2 / (eig**2).sum(), rel=1e-9)
    assert got["rho_pc1_entropy"] == pytest.approx(np.corrcoef(coords[:, 0], entropy)[0, 1], rel=1e-9)
    raw = PCA(n_components=2, svd_solver="full")
    raw_pc1 = raw.fit_transform(x)[:, 0]
    got_raw = pc.released_value_manifold(x, entropy, "run_sula_main")
    assert got_raw["pc1"] == pytest.approx(raw.explained_variance_ratio_[0], rel=1e-9)
    assert got_raw["rho_pc1_entropy"] == pytest.approx(abs(np.corrcoef(raw_pc1, entropy)[0, 1]), rel=1e-9)
    got_hidden = pc.released_value_manifold(x, entropy, "sula_experiments")
    assert got_hidden["rho_pc1_entropy"] == pytest.approx(spearmanr(coords[:, 0], entropy)[0], rel=1e-9)
    with pytest.raises(ValueError, match="script"):
        pc.released_value_manifold(x, entropy, "nope")


def test_attention_entropy_by_layer_by_hand():
    attn = np.zeros((2, 2, 2, 6))
    attn[:, 0, :, :4] = 0.25           # layer 0: uniform over 4 visible keys (2 padding zeros) -> 2 bits
    attn[:, 1, 0, 0] = 1.0             # layer 1: head 0 one-hot -> 0 bits
    attn[:, 1, 1, :2] = 0.5            #          head 1 uniform over 2 -> 1 bit
    np.testing.assert_allclose(pc.attention_entropy_by_layer(attn), [2.0, 0.5], atol=1e-9)
    with pytest.raises(ValueError, match="n_prompts"):
        pc.attention_entropy_by_layer(attn[0])


def test_sula_label_entropy_and_calibration_by_hand():
    np.testing.assert_allclose(pc.sula_label_entropy_bits([0.2, 0.3, 0.4], [0.2, 0.1, 0.0]),
                               [1.0, -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25)), 0.0], atol=1e-9)
    model, bayes, k = [1.0, 0.5, 0.0, 0.2], [1.0, 1.0, 0.0, 0.0], [0, 0, 8, 8]
    out = pc.sula_calibration(model, bayes, k)
    assert list(out) == ["0", "8", "all"]
    assert out["0"]["mae_bits"] == pytest.approx(0.25) and math.isnan(out["0"]["pearson"])  # H_bayes constant in k
    assert out["8"]["mae_bits"] == pytest.approx(0.1)
    assert out["all"]["mae_bits"] == pytest.approx(0.175)
    assert out["all"]["pearson"] == pytest.approx(float(np.corrcoef(model, bayes)[0, 1]))


# ----------------------------------------------------------------------------------------------
# The registry


def test_definitions_registry_is_complete_and_agrees_with_the_recorded_figures():
    from geomprobe.suites.sula import REFERENCE_PAPER_III

    needed = {"geomprobe", "paper_text", "released_code", "released_file", "reference_value", "reference_source", "functions"}
    headline = {"value_pc1_fraction", "rho_pc1_entropy_sula", "key_orthogonality", "participation_ratio", "sula_mae",
                "attention_entropy_per_layer", "intervention_lambda", "intervention_cut", "intervention_random_axes"}
    assert headline <= set(pc.DEFINITIONS)
    for name, entry in pc.DEFINITIONS.items():
        assert set(entry) == needed, name
        assert entry["geomprobe"] and entry["released_code"] and entry["released_file"].startswith("experiments/")
        assert all(callable(getattr(pc, function)) for function in entry["functions"]), name
        assert entry["reference_value"] is None or entry["reference_source"], name
    official = REFERENCE_PAPER_III["official_code_pythia_410m"]
    assert pc.DEFINITIONS["value_pc1_fraction"]["reference_value"] == official["pc1"]
    assert pc.DEFINITIONS["rho_pc1_entropy_sula"]["reference_value"] == official["rho_pc1_entropy"]
    assert pc.DEFINITIONS["key_orthogonality"]["reference_value"] == 0.0297
    assert pc.DEFINITIONS["sula_mae"]["reference_value"] == REFERENCE_PAPER_III["mae_bits"]["pythia-410m"]


# ----------------------------------------------------------------------------------------------
# --definitions paper-code in the suites: the side-by-side numbers against independent recomputation


@pytest.fixture(scope="module")
def paper_code_run(tmp_path_factory):
    from geomprobe.config import RunConfig
    from geomprobe.runner import run
    from geomprobe.suites.geometry import GeometryConfig
    from geomprobe.suites.sula import SulaConfig

    out = tmp_path_factory.mktemp("paper-code") / "run"
    run(RunConfig(model="windtunnel-sula", out=str(out)),
        [SulaConfig(n_per_k=8, definitions="paper-code", null="off", n_boot=20),
         GeometryConfig(definitions="paper-code", null="off", n_boot=20, n_null=10, init_seeds=0, n_per_quintile=6)],
        progress=False)
    return out


def _rows(results):
    return {row["label"]: row for row in results["paper_code"]["rows"]}


def _hf_final_hidden(out, prompts):
    """hidden_states[-1] at each prompt's final token from a plain transformers forward, batch 1."""
    from geomprobe.models import load_model

    manifest = __import__("json").loads((out / "manifest.json").read_text())
    loaded = load_model(manifest["config"]["model"])
    rows = []
    with torch.no_grad():
        for prompt in prompts:
            ids = loaded.tokenizer(prompt["text"], return_tensors="pt")["input_ids"]
            rows.append(loaded.model(ids, output_hidden_states=True).hidden_states[-1][0, -1].numpy())
    return np.array(rows, dtype=np.float64)


@pytest.mark.slow
def test_sula_side_by_side_against_scikit_learn_and_a_plain_forward(paper_code_run):
    import json

    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    from geomprobe.extraction import load_extraction

    results = json.loads((paper_code_run / "sula" / "results.json").read_text())
    assert results["definitions"] == "paper-code"
    rows, main = _rows(results), results["conditions"]["main"]
    extraction = load_extraction(paper_code_run / "sula" / "extraction-main")
    last = extraction.layers.index(max(extraction.layers))
    values = np.asarray(extraction["values"][:, last], dtype=np.float64).reshape(len(extraction["values"]), -1)
    hidden = np.asarray(extraction["hidden"][:, last], dtype=np.float64)
    prompts = [json.loads(line) for line in (paper_code_run / "sula" / "prompts-main.jsonl").read_text().splitlines()]
    # the readout behind "final hidden state" is transformers' hidden_states[-1]
    np.testing.assert_allclose(hidden, _hf_final_hidden(paper_code_run, prompts), atol=2e-5)
    H_bayes = np.array([p["H_bayes"] for p in prompts])
    kept = values[:, values.std(axis=0) > 1e-9]
    pca = PCA().fit(StandardScaler().fit_transform(kept))
    icl = rows["value PC1 fraction, last layer"]
    assert icl["paper_code"] == pytest.approx(pca.explained_variance_ratio_[0], rel=1e-6)
    assert icl["geomprobe"] == pytest.approx(results["axis"]["pc1_explained"]) and icl["published"] == 0.264
    scores = pca.transform(StandardScaler().fit_transform(kept))[:, 0]
    pearson = abs(np.corrcoef(scores, H_bayes)[0, 1])
    assert abs(rows["rho(PC1, H_bayes), values"]["paper_code"]) == pytest.approx(pearson, rel=1e-6)
    assert rows["rho(PC1, H_bayes), values"]["geomprobe"] == pytest.approx(main["rho_pc1_H_bayes_given_k"]["value"])
    hidden_kept = hidden[:, hidden.std(axis=0) > 1e-9]
    hidden_pca = PCA().fit(StandardScaler().fit_transform(hidden_kept))
    assert rows["PC1 fraction of the final hidden state"]["paper_code"] == pytest.approx(
        hidden_pca.explained_variance_ratio_[0], rel=1e-6)
    top = pca.explained_variance_[:10]
    assert rows["participation ratio, last-layer values"]["paper_code"] == pytest.approx(
        top.sum() ** 2 / (top ** 2).sum(), rel=1e-6)
    mae = rows["SULA MAE (bits)"]
    assert mae["same_definition"] and mae["paper_code"] == pytest.approx(mae["geomprobe"], abs=1e-12)
    assert mae["geomprobe"] == pytest.approx(main["mae_bits"]["value"])


@pytest.mark.slow
def test_geometry_side_by_side_and_the_default_has_none(paper_code_run, tmp_path):
    import json

    from geomprobe.config import RunConfig
    from geomprobe.runner import run
    from geomprobe.suites.geometry import GeometryConfig

    results = json.loads((paper_code_run / "geometry" / "results.json").read_text())
    rows = _rows(results)
    focus = rows["attention focusing 1 - Hbar(L-1) / Hbar(0)"]
    assert focus["same_definition"] and focus["geomprobe"] == focus["paper_code"]
    assert focus["geomprobe"] == pytest.approx(results["attention_focusing"]["focusing"])
    keys = rows["key orthogonality (mean |cos|)"]
    assert keys["geomprobe"] == pytest.approx(results["key_orthogonality"]["mean"]) and keys["published"] == 0.0297
    draws = results["paper_code"]["embedding_key_draws"]
    assert len(draws) == 10 and keys["paper_code"] == pytest.approx(np.mean(draws)) and len(set(draws)) > 1
    assert rows["PC1 fraction, last layer"]["geomprobe"] == pytest.approx(results["value_manifold"]["pc1"])

    plain = tmp_path / "plain"
    run(RunConfig(model="windtunnel-sula", out=str(plain)),
        GeometryConfig(null="off", n_boot=20, n_null=10, init_seeds=0, n_per_quintile=6), progress=False)
    default = json.loads((plain / "geometry" / "results.json").read_text())
    assert default["definitions"] == "geomprobe" and "paper_code" not in default


@pytest.mark.slow
def test_each_side_by_side_row_names_the_released_file_it_follows(paper_code_run):
    """Where a row's paper-code definition names its script ("sula_experiments.py: ..."), the row's
    released_file is that script: the final-hidden-state rows follow sula_experiments.py and the
    all-k rho of the values run_sula_main.py, not analyze_icl_sula.py."""
    import json
    import re

    checked = 0
    for suite in ("sula", "geometry"):
        for row in json.loads((paper_code_run / suite / "results.json").read_text())["paper_code"]["rows"]:
            script = re.match(r"(\w+\.py)\b", row["paper_code_how"])
            if script:
                first = re.split(r"[ ,]", row["released_file"])[0]
                assert first.startswith("experiments/") and first.endswith("/" + script.group(1)), row["label"]
                checked += 1
    assert checked >= 8
    rows = _rows(json.loads((paper_code_run / "sula" / "results.json").read_text()))
    assert rows["PC1 fraction of the final hidden state"]["released_file"] == "experiments/paper3_llm/sula_experiments.py"
    assert rows["rho(PC1, H_bayes), final hidden state"]["released_file"] == "experiments/paper3_llm/sula_experiments.py"
    assert rows["rho(PC1, H_bayes) over all k, values"]["released_file"] == \
        "experiments/paper3_llm/sula_pipeline/run_sula_main.py"
    assert rows["value PC1 fraction, last layer"]["released_file"].startswith(
        "experiments/paper3_llm/sula_pipeline/analyze_icl_sula.py")


def test_released_value_rows_have_the_top_10_participation_ratio():
    """The as-released rows of the sula suite: PC1 fraction, rho and the participation ratio of
    analyze_icl_sula.py (PCA(10) of the standardised matrix, PR over those 10), against scikit-learn."""
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(5)
    values = rng.normal(size=(40, 12)) @ rng.normal(size=(12, 48)) + 0.3 * rng.normal(size=(40, 48))
    rows = {row["label"]: row for row in pc.released_values_rows(values, rng.uniform(size=40), "a test split")}
    pr = rows["participation ratio, values as released"]
    top = PCA(n_components=10).fit(StandardScaler().fit_transform(values)).explained_variance_
    assert pr["paper_code"] == pytest.approx(top.sum() ** 2 / (top ** 2).sum(), rel=1e-9) and pr["paper_code"] <= 10
    assert pr["geomprobe"] is None and pr["quantity"] == "participation_ratio"
    assert "as released (a test split)" in pr["paper_code_how"] and "top 10" in pr["paper_code_how"]
    assert pr["released_file"] == pc.DEFINITIONS["participation_ratio"]["released_file"]
    assert set(rows) == {"value PC1 fraction, values as released", "rho(PC1, H_bayes), values as released",
                         "participation ratio, values as released"}


@pytest.mark.slow
def test_released_values_of_a_tiny_neox_are_one_heads_v_then_the_next_heads_q_k_v(load_tiny, demo_prompts):
    """tiny-neox (H heads of width d): the released "values" are fused columns [2Hd, 3Hd), read by
    a hook of their own; against geomprobe's own value extraction, their blocks that are values
    are the model's v of those heads, and the others are not values at all."""
    from geomprobe.extraction import ExtractionConfig, extract

    loaded = load_tiny("tiny-neox")
    shape, last = loaded.adapter.shape, loaded.adapter.shape.n_layers - 1
    prompts = demo_prompts[:12]
    released, what = pc.released_final_token_values(loaded, prompts, last, batch_size=5)
    own = extract(loaded, prompts, ExtractionConfig(layers=[last], readouts=("values",)), progress=False)["values"]
    own = np.asarray(own[:, 0], dtype=np.float64)  # [n, kv heads, d]
    d = shape.d_head
    blocks = pc.neox_released_blocks(shape.n_heads)
    assert released.shape == (12, shape.n_heads * d) and "read as (3, H, d)" in what
    n_values = 0
    for index, (head, kind) in enumerate(blocks):
        block = released[:, index * d:(index + 1) * d]
        if kind == "v":
            np.testing.assert_allclose(block, own[:, head], atol=1e-5)
            n_values += 1
        else:
            assert not np.allclose(block, own[:, head], atol=1e-3)
    assert 0 < n_values < shape.n_heads  # a mix: some blocks are values, the rest queries and keys


@pytest.mark.slow
def test_sula_as_released_adds_labelled_rows(tmp_path):
    import json

    from geomprobe.config import RunConfig
    from geomprobe.runner import run
    from geomprobe.suites.sula import SulaConfig

    out = tmp_path / "run"
    run(RunConfig(model="tiny-neox", out=str(out)),
        SulaConfig(n_per_k=4, definitions="paper-code-as-released", null="off", n_boot=20, controls=()),
        progress=False)
    table = json.loads((out / "sula" / "results.json").read_text())["paper_code"]
    assert table["definitions"] == "paper-code-as-released" and table["note"].startswith("AS RELEASED")
    rows = {row["label"]: row for row in table["rows"]}
    released = rows["value PC1 fraction, values as released"]
    assert released["geomprobe"] is None and released["published"] == 0.264
    assert released["paper_code"] != pytest.approx(rows["value PC1 fraction, last layer"]["paper_code"])
    assert "q" in table["released_values"] and "query_key_value" in table["released_values"]
    released_pr = rows["participation ratio, values as released"]
    assert released_pr["geomprobe"] is None and 1.0 <= released_pr["paper_code"] <= 10.0
    assert released_pr["paper_code"] != pytest.approx(rows["participation ratio, last-layer values"]["paper_code"])
    assert released_pr["released_file"].startswith("experiments/paper3_llm/sula_pipeline/analyze_icl_sula.py")


@pytest.mark.slow
def test_ablation_paper_code_edits_are_the_released_ones(tmp_path):
    """--definitions paper-code in the ablation suite: the edit axis is the raw-PCA PC1 of the main
    values (scikit-learn's PCA component, up to sign), geomprobe's apply_op on it is the released
    cut on raw uncentred values (paper_cut with lambda_scale = 1 - lambda), and the random axes are
    not orthogonal to it."""
    import json

    from sklearn.decomposition import PCA

    from geomprobe.config import RunConfig
    from geomprobe.interventions import apply_op, load_axes
    from geomprobe.runner import run
    from geomprobe.suites.ablation import AblationConfig, _main_values

    out = tmp_path / "run"
    run(RunConfig(model="windtunnel-sula", out=str(out)),
        AblationConfig(n_per_k=4, ops="cut", n_random=3, n_boot=20, definitions="paper-code"), progress=False)
    results = json.loads((out / "ablation" / "results.json").read_text())
    settings = results["settings"]
    assert settings["definitions"] == "paper-code" and settings["released_lambda_scale"] == 0.0
    edit = load_axes(out / "ablation" / "edit_axis.npz")
    layer = settings["layer_sets"][0]["layers"][0]
    values = _main_values(out / "ablation" / "sula-main" / "extraction-main", [layer])[layer]
    component = PCA(n_components=1).fit(values).components_[0]
    assert abs(float(component @ edit[layer].u)) == pytest.approx(1.0, abs=1e-9)
    assert edit[layer].sigma_u == pytest.approx(float(np.std(values @ edit[layer].u)))
    v = torch.tensor(values[:5], dtype=torch.float32)
    cut = apply_op(v, edit[layer], "cut", cut_lambda=1.0).double().numpy()
    np.testing.assert_allclose(cut, pc.paper_cut(values[:5], edit[layer].u, lambda_scale=0.0), atol=1e-4)
    assert np.abs(cut @ edit[layer].u).max() < 1e-3 * np.abs(values[:5] @ edit[layer].u).max()
    with np.load(out / "ablation" / "random_axes.npz") as saved:
        randoms = saved[f"layer_{layer}"]
    assert randoms.shape == (3, values.shape[1]) and np.abs(randoms @ edit[layer].u).max() > 1e-3
    np.testing.assert_allclose(np.linalg.norm(randoms, axis=1), 1.0, atol=1e-6)
    assert len(list((out / "ablation" / "conditions").glob("cut_L1_*.json"))) == 1 + 3  # the true cut, 3 random


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tiny-neox", "tiny-llama"])
def test_final_token_keys_equal_a_plain_forward_one_prompt_at_a_time(name, load_tiny, demo_prompts):
    """Definition (b)'s input: in padded batches, each prompt's final-token keys equal those of a
    batch-1 forward with a hook on the key projection (split per head as the model does)."""
    loaded = load_tiny(name)
    shape = loaded.adapter.shape
    prompts = demo_prompts[:5]
    keys = pc.final_token_keys(loaded, prompts, batch_size=3)
    assert keys.shape == (5, shape.n_layers, shape.n_kv_heads, shape.d_head)
    layer = shape.n_layers - 1
    module = loaded.adapter.key_module(layer)
    for row, prompt in enumerate(prompts):
        seen = {}
        handle = module.register_forward_hook(lambda m, a, out: seen.__setitem__("k", out[0, -1].detach().double()))
        with torch.no_grad():
            loaded.model(loaded.tokenizer(prompt.text, return_tensors="pt")["input_ids"])
        handle.remove()
        k = seen["k"].numpy()
        own = pc.neox_split(k, shape.n_heads, shape.d_head)[1] if name == "tiny-neox" else \
            k.reshape(shape.n_kv_heads, shape.d_head)
        np.testing.assert_allclose(keys[row, layer], own, atol=1e-5)
    per_layer = pc.final_token_key_orthogonality(keys)
    assert per_layer.shape == (shape.n_layers,) and np.all((per_layer >= 0) & (per_layer <= 1))


def test_signed_vocabulary_cosine_without_the_n_by_n_matrix():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((300, 7)) + 0.5  # a shared direction: a positive mean cosine
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    full = unit @ unit.T
    expected = (full.sum() - np.trace(full)) / (300 * 299)
    assert pc.signed_mean_offdiag_cosine(vectors) == pytest.approx(expected, rel=1e-12) and expected > 0.1


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tiny-neox", "tiny-llama"])
def test_released_final_token_keys_are_the_released_split_of_a_plain_forward(name, load_tiny, demo_prompts):
    """The as-released keys: each prompt's key-projection output at its final token (batch-1 forward
    with a hook) split as hf_activations.py splits it. GPT-NeoX: (3, H, d) part 1, whose blocks that
    are keys are the model's own keys of those heads and the rest are not; Llama: reshaped by the
    query heads, which flattened is the model's own keys."""
    loaded = load_tiny(name)
    shape = loaded.adapter.shape
    prompts = demo_prompts[:5]
    released, what = pc.released_final_token_keys(loaded, prompts, batch_size=3)
    own = pc.final_token_keys(loaded, prompts, batch_size=2)
    width = shape.d_head if name == "tiny-neox" else shape.n_kv_heads * shape.d_head // shape.n_heads
    assert released.shape == (5, shape.n_layers, shape.n_heads, width)
    layer = shape.n_layers - 1
    module = loaded.adapter.key_module(layer)
    for row, prompt in enumerate(prompts):
        seen = {}
        handle = module.register_forward_hook(lambda m, a, out: seen.__setitem__("k", out[0, -1].detach().double()))
        with torch.no_grad():
            loaded.model(loaded.tokenizer(prompt.text, return_tensors="pt")["input_ids"])
        handle.remove()
        k = seen["k"].numpy()
        expected = (pc.neox_split(k, shape.n_heads, shape.d_head, as_released=True)[1] if name == "tiny-neox" else
                    pc.llama_keys_as_released(k, shape.n_heads, shape.n_kv_heads, shape.d_head))
        np.testing.assert_allclose(released[row, layer], expected, atol=1e-5)
    if name == "tiny-neox":
        assert "read as (3, H, d)" in what
        kinds = pc.neox_released_blocks(shape.n_heads, "k")
        assert {kind for _, kind in kinds} == {"q", "k", "v"}
        for slot, (head, kind) in enumerate(kinds):
            same = np.allclose(released[:, :, slot], own[:, :, head], atol=1e-5)
            assert same == (kind == "k"), (slot, head, kind)
    else:
        assert "query heads" in what and "per kv head" in what
        np.testing.assert_allclose(released.reshape(5, shape.n_layers, -1), own.reshape(5, shape.n_layers, -1),
                                   atol=1e-5)  # batches of 3 and of 2: float32 rounding of the padded forwards
    assert pc.final_token_key_orthogonality(released).shape == (shape.n_layers,)


@pytest.mark.slow
def test_geometry_as_released_adds_the_final_token_keys_of_the_released_split(tmp_path):
    """--definitions paper-code-as-released in the geometry suite: beside the paper-code rows (the
    same as paper-code's), one row of definition (b) on the keys as the released code splits them,
    labelled like the sula suite's as-released rows."""
    import json

    from geomprobe.config import RunConfig
    from geomprobe.runner import run
    from geomprobe.suites.geometry import GeometryConfig

    out = tmp_path / "run"
    run(RunConfig(model="tiny-neox", out=str(out)),
        GeometryConfig(definitions="paper-code-as-released", null="off", n_boot=20, n_null=10, init_seeds=0,
                       n_per_quintile=4), progress=False)
    table = json.loads((out / "geometry" / "results.json").read_text())["paper_code"]
    assert table["definitions"] == "paper-code-as-released" and table["note"].startswith("AS RELEASED")
    assert "final-token keys as released" in table["note"]
    rows = {row["label"]: row for row in table["rows"]}
    released = rows["key orthogonality, final-token keys as released"]
    own = rows["key orthogonality, final-token keys of the heads"]
    assert released["geomprobe"] is None and released["quantity"] == "key_orthogonality"
    assert 0.0 < released["paper_code"] < 1.0 and released["paper_code"] != pytest.approx(own["paper_code"])
    assert "read as (3, H, d)" in released["paper_code_how"]
    assert released["released_file"] == "experiments/paper3_llm/sula_pipeline/analyze_icl_sula.py"


def test_final_token_key_row_is_undefined_with_one_kv_head():
    """Gemma 3 270M has one kv head: the released 'cosine between the heads' final-token keys' has no
    pair to take, so its row is None with the reason, and the other rows are still computed."""
    from geomprobe.paper_code import geometry_side_by_side

    rng = np.random.default_rng(0)
    n, L, d, D = 12, 3, 8, 16
    table = geometry_side_by_side(rng.normal(size=(n, D)), rng.uniform(1, 5, size=n), rng.normal(size=(50, D)),
                                  {"pc1": 0.2, "rho_pc1_entropy": 0.1, "pr": 3.0}, {"mean": 0.05}, {"focusing": 0.3},
                                  seed=0, token_keys=rng.normal(size=(n, L, 1, d)))
    row = next(r for r in table["rows"] if r["label"] == "key orthogonality, final-token keys of the heads")
    assert row["paper_code"] is None and "one kv head" in row["paper_code_how"]
    assert all(r["paper_code"] is not None for r in table["rows"] if r["label"].startswith("PC1 fraction"))
    two = geometry_side_by_side(rng.normal(size=(n, D)), rng.uniform(1, 5, size=n), rng.normal(size=(50, D)),
                                {"pc1": 0.2}, {"mean": 0.05}, {"focusing": 0.3}, seed=0,
                                token_keys=rng.normal(size=(n, L, 2, d)))
    assert next(r for r in two["rows"] if r["label"].startswith("key orthogonality, final"))["paper_code"] is not None
