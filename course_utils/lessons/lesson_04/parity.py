"""Lesson 04's parity exercises: loading ``torch.nn.MultiheadAttention``'s weights (``04.load_from_torch``), its
mask convention (``04.torch_cross_attend``) and the softmax's gradient (``04.softmax_backward``).

Moved out of ``exercises.py`` whole (issue 26 section 5): one block per exercise, as there; ``exercises.py`` lists
them in ``EXERCISES``.
"""

from __future__ import annotations

import torch

from course_utils import attention, masks
from course_utils.checking.cases import torch_seeded
from course_utils.checking.model import AnswerRefused, Case, Exercise
from course_utils.lessons.lesson_04.module import MHA_FORWARD, refusing

# As in module.py: `nn` assigned, not imported, so a reference's methods compile like the stub's.
nn = torch.nn


__all__ = [
    "LOAD_FROM_TORCH",
    "TORCH_CROSS_ATTEND",
    "SOFTMAX_BACKWARD",
    "loaded_parameters",
    "run_backward",
    "run_torch_cross",
    "softmax_backward_diagonal_only",
    "nn_mha_mask_not_flipped",
]


# ---- 04.load_from_torch(module, torch_mha) -> module with torch_mha's weights ----------------------------------
_PARAMETER_NAMES = tuple(
    f"{layer}.{p}" for layer in ("query_proj", "key_proj", "value_proj", "out_proj") for p in ("weight", "bias")
)


def load_cases():
    cases = []
    for seed, (d_model, heads) in enumerate(((24, 4), (20, 5), (12, 1))):
        with torch_seeded(60 + seed):
            torch_mha = nn.MultiheadAttention(d_model, heads, batch_first=True).eval()
            with torch.no_grad():  # PyTorch starts its biases at 0: give them values a copy must carry over
                torch_mha.in_proj_bias.normal_()
                torch_mha.out_proj.bias.normal_()
            module = attention.MultiHeadAttention(d_model, heads).eval()  # other weights, to be overwritten
        cases.append(Case((module, torch_mha)))
    return cases


_FROM_TORCH_WORDS = (
    "your answer calls attention.MultiHeadAttention.from_torch, a course helper that does this whole exercise: "
    "cut in_proj_weight and in_proj_bias yourself"
)


def loaded_parameters(load_from_torch, module, torch_mha):
    """Call the answer (``from_torch`` refused), then read the eight parameters of the module it returns, in order."""
    with refusing((attention.MultiHeadAttention, "from_torch", _FROM_TORCH_WORDS)):
        returned = load_from_torch(module, torch_mha)
    if returned is None:
        return None
    if not isinstance(returned, nn.Module):
        raise AnswerRefused(
            f"load_from_torch must return the module it filled, but it returned {type(returned).__name__}"
        )
    state = returned.state_dict()
    return tuple(state[name].detach().clone() for name in _PARAMETER_NAMES)


def load_from_torch(module, torch_mha):
    weights = torch_mha.in_proj_weight.chunk(3)  # (3·d_model, d_model) -> 3 x (d_model, d_model), (out, in)
    biases = torch_mha.in_proj_bias.chunk(3)  # (3·d_model,) -> 3 x (d_model,)
    with torch.no_grad():
        for layer, w, b in zip((module.query_proj, module.key_proj, module.value_proj), weights, biases, strict=True):
            layer.weight.copy_(w)
            layer.bias.copy_(b)
        module.out_proj.load_state_dict(torch_mha.out_proj.state_dict())
    return module


def load_from_torch_slices(module, torch_mha):
    d = module.d_model
    with torch.no_grad():
        for i, layer in enumerate((module.query_proj, module.key_proj, module.value_proj)):
            layer.weight.data.copy_(torch_mha.in_proj_weight[i * d : (i + 1) * d])  # rows i·d .. (i+1)·d - 1
            layer.bias.data.copy_(torch_mha.in_proj_bias[i * d : (i + 1) * d])
        module.out_proj.weight.copy_(torch_mha.out_proj.weight)
        module.out_proj.bias.copy_(torch_mha.out_proj.bias)
    return module


def load_from_torch_state_dict(module, torch_mha):
    d = torch_mha.embed_dim
    w_q, w_k, w_v = torch.split(torch_mha.in_proj_weight.detach(), d)
    b_q, b_k, b_v = torch.split(torch_mha.in_proj_bias.detach(), d)
    state = {
        "query_proj.weight": w_q,
        "query_proj.bias": b_q,
        "key_proj.weight": w_k,
        "key_proj.bias": b_k,
        "value_proj.weight": w_v,
        "value_proj.bias": b_v,
        "out_proj.weight": torch_mha.out_proj.weight.detach(),
        "out_proj.bias": torch_mha.out_proj.bias.detach(),
    }
    module.load_state_dict(state, strict=True)
    return module


def _load(module, torch_mha, *, transpose=False, biases=True, order=(0, 1, 2), out_proj=True):
    weights = torch_mha.in_proj_weight.chunk(3)
    bias_parts = torch_mha.in_proj_bias.chunk(3)
    layers = (module.query_proj, module.key_proj, module.value_proj)
    with torch.no_grad():
        for layer, i in zip(layers, order, strict=True):
            layer.weight.copy_(weights[i].T if transpose else weights[i])
            if biases:
                layer.bias.copy_(bias_parts[i])
        if out_proj:
            module.out_proj.load_state_dict(torch_mha.out_proj.state_dict())
    return module


def load_transposed(module, torch_mha):
    return _load(module, torch_mha, transpose=True)


def load_without_biases(module, torch_mha):
    return _load(module, torch_mha, biases=False)


def load_key_query_value(module, torch_mha):
    return _load(module, torch_mha, order=(1, 0, 2))


def load_without_out_proj(module, torch_mha):
    return _load(module, torch_mha, out_proj=False)


LOAD_FROM_TORCH = Exercise(
    id="04.load_from_torch",
    section="04 · Parity 3 · with torch.nn.MultiheadAttention",
    make_cases=load_cases,
    reference=load_from_torch,
    variants=(load_from_torch_slices, load_from_torch_state_dict),
    buggy={
        "linear_layout_transposed": load_transposed,
        "biases_not_copied": load_without_biases,
        "packed_order": load_key_query_value,
        "out_proj_not_copied": load_without_out_proj,
    },
    driver=loaded_parameters,
    output_names=_PARAMETER_NAMES,
    hints=(
        "in_proj_weight stacks three (d_model, d_model) blocks: which rows belong to the queries, the keys and the "
        "values, and in which layout are they stored?",
        "Cut in_proj_weight and in_proj_bias into three equal parts along the first axis and copy them as they are "
        "(nn.Linear stores (out, in) too); out_proj is an ordinary nn.Linear.",
        "Copy inside torch.no_grad(): layer.weight.copy_(block) writes into the existing parameter; "
        "tensor.chunk(3) cuts along the first axis.",
    ),
)


# ---- 04.torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False) -> output --
def torch_cross_cases():
    def torch_mha(d_model, heads):
        return nn.MultiheadAttention(d_model, heads, batch_first=True, dtype=torch.float64).eval()

    def states(*shape):
        return torch.randn(*shape, dtype=torch.float64)

    with torch_seeded(7):
        x = states(2, 5, 24)
        return [
            Case((torch_mha(24, 4), states(2, 3, 24), states(2, 5, 24), torch.tensor([5, 2]), False)),
            Case(
                (torch_mha(20, 4), states(3, 3, 20), states(3, 6, 20), torch.tensor([5, 1, 4]), False),
                "batch == q_len, no row fills the padded width",
            ),
            Case(
                (torch_mha(30, 5), states(2, 1, 30), states(2, 4, 30), torch.tensor([4, 3]), False),
                "one query per sequence (a decoding step)",
            ),
            Case(
                (torch_mha(24, 4), x, x, torch.tensor([5, 3]), True),
                "a decoder attending to itself: causal and padded",
            ),
        ]


def run_torch_cross(torch_cross_attend, torch_mha, decoder_states, encoder_states, encoder_lengths, causal):
    """The answer on one case, with the course's ``from_torch`` refused (the exercise is PyTorch's convention)."""
    words = (
        "your answer builds the course's module with attention.MultiHeadAttention.from_torch, a course helper; this "
        "exercise is about calling nn.MultiheadAttention itself, with its own mask convention"
    )
    with refusing((attention.MultiHeadAttention, "from_torch", words)):
        return torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal)


def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    q_len, k_len = decoder_states.shape[1], encoder_states.shape[1]
    ignore = ~masks.make_padding_mask(encoder_lengths, k_len)  # (batch, k_len): PyTorch's True = ignore this key
    not_allowed = ~masks.make_causal_mask(q_len, k_len) if causal else None  # (q_len, k_len): True = not allowed
    output, _ = torch_mha(
        decoder_states, encoder_states, encoder_states, key_padding_mask=ignore, attn_mask=not_allowed
    )
    return output


def torch_cross_attend_compare(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    positions = torch.arange(encoder_states.shape[1])  # (k_len,)
    ignore = positions[None, :] >= encoder_lengths[:, None]  # (batch, k_len): True at the padding
    future = None
    if causal:
        queries = torch.arange(decoder_states.shape[1])
        future = positions[None, :] > queries[:, None]  # (q_len, k_len): key j after query i
    return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore, attn_mask=future)[0]


def torch_cross_attend_loop(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    ignore = torch.ones(encoder_states.shape[:2], dtype=torch.bool)
    for b, length in enumerate(encoder_lengths.tolist()):
        ignore[b, :length] = False
    kwargs = {"key_padding_mask": ignore, "need_weights": False}
    if causal:
        n = decoder_states.shape[1]
        kwargs["attn_mask"] = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    output, _weights = torch_mha(decoder_states, encoder_states, encoder_states, **kwargs)
    return output


def _torch_call(
    torch_mha,
    decoder_states,
    encoder_states,
    encoder_lengths,
    causal,
    *,
    flip_padding=True,
    flip_causal=True,
    padding_as_attn_mask=False,
    always_causal=False,
):
    q_len, k_len = decoder_states.shape[1], encoder_states.shape[1]
    real = masks.make_padding_mask(encoder_lengths, k_len)  # (batch, k_len), the course's True = real key
    allowed = masks.make_causal_mask(q_len, k_len)  # (q_len, k_len), the course's True = may attend
    padding = ~real if flip_padding else real
    future = (~allowed if flip_causal else allowed) if (causal or always_causal) else None
    if padding_as_attn_mask:
        return torch_mha(decoder_states, encoder_states, encoder_states, attn_mask=padding)[0]
    return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=padding, attn_mask=future)[0]


def nn_mha_mask_not_flipped(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    """The course's convention passed to PyTorch as it is: True = real key where True must mean ignore."""
    return _torch_call(
        torch_mha, decoder_states, encoder_states, encoder_lengths, causal, flip_padding=False, flip_causal=False
    )


def torch_cross_attend_causal_not_flipped(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    return _torch_call(torch_mha, decoder_states, encoder_states, encoder_lengths, causal, flip_causal=False)


def torch_cross_attend_padding_as_attn_mask(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    return _torch_call(torch_mha, decoder_states, encoder_states, encoder_lengths, causal, padding_as_attn_mask=True)


def torch_cross_attend_causal(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    return _torch_call(torch_mha, decoder_states, encoder_states, encoder_lengths, causal, always_causal=True)


TORCH_CROSS_ATTEND = Exercise(
    id="04.torch_cross_attend",
    section="04 · Masks in PyTorch's convention",
    make_cases=torch_cross_cases,
    reference=torch_cross_attend,
    variants=(torch_cross_attend_compare, torch_cross_attend_loop),
    buggy={
        "nn_mha_convention": nn_mha_mask_not_flipped,
        "causal_not_flipped": torch_cross_attend_causal_not_flipped,
        "key_padding_as_2d": torch_cross_attend_padding_as_attn_mask,
        "causal_in_cross_attention": torch_cross_attend_causal,
    },
    misconceptions=("padding_off_by_one",),  # derived from the catalogue's patch of masks.make_padding_mask
    forbidden=(MHA_FORWARD,),
    driver=run_torch_cross,
    hints=(
        "For nn.MultiheadAttention, what does True mean in key_padding_mask and in a boolean attn_mask, and what "
        "shape must each have?",
        "Build the (batch, k_len) mask that is True at the padding (the opposite of lesson 02's padding mask) and "
        "pass it as key_padding_mask, not as attn_mask; with causal=True, also pass a (q_len, k_len) attn_mask that "
        "is True where a key comes after its query.",
        "Position j of sequence b is padding when j >= encoder_lengths[b]; key j comes after query i when j > i. "
        "torch_mha(query, key, value, key_padding_mask=..., attn_mask=...) returns (output, weights averaged over "
        "the heads): return the output.",
    ),
)


# ---- 04.softmax_backward(weights, grad_weights) -> grad_scores -----------------------------------------------
def backward_cases():
    gen = torch.Generator().manual_seed(9)

    def weights_of(scores):
        return torch.softmax(scores, dim=-1)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    w4 = weights_of(randn(2, 1, 3, 4))
    return [
        Case((weights_of(randn(2, 3, 5)), randn(2, 3, 5))),
        Case((weights_of(1e3 * randn(4, 6)), randn(4, 6)), "scores in the thousands: nearly one-hot weights"),
        Case((weights_of(randn(7)), randn(7)), "one row of 7 weights"),
        Case((w4, torch.ones_like(w4)), "the same gradient on every weight of a row"),
    ]


_BACKWARD_HELPERS = (
    (
        torch,
        "_softmax_backward_data",
        "your answer calls torch._softmax_backward_data, PyTorch's own softmax backward: write it from the derivative",
    ),
)


def run_backward(softmax_backward, weights, grad_weights):
    """The answer on one case, with PyTorch's own softmax backward refused while it runs."""
    with refusing(*_BACKWARD_HELPERS):
        return softmax_backward(weights, grad_weights)


def softmax_backward(weights, grad_weights):
    # entry l: sum_j g_j w_j (delta_jl - w_l) = w_l (g_l - sum_j g_j w_j)
    return weights * (grad_weights - (grad_weights * weights).sum(dim=-1, keepdim=True))


def softmax_backward_jacobian(weights, grad_weights):
    jacobian = torch.diag_embed(weights) - weights[..., :, None] * weights[..., None, :]  # (..., n, n): dw_j/dx_l
    return torch.einsum("...j,...jl->...l", grad_weights, jacobian)


def softmax_backward_expanded(weights, grad_weights):
    weighted = weights * grad_weights  # (..., n): g_j w_j
    return weighted - weights * weighted.sum(-1, keepdim=True)


def softmax_backward_diagonal_only(weights, grad_weights):
    """The bug zoo: only the diagonal of the softmax's derivative, ``w * g``: each weight's dependence on the
    other scores is dropped (gradcheck catches it)."""
    return weights * grad_weights


def softmax_backward_wrong_sum_axis(weights, grad_weights):
    return weights * (grad_weights - (grad_weights * weights).sum(dim=-2, keepdim=True))


SOFTMAX_BACKWARD = Exercise(
    id="04.softmax_backward",
    fresh=lambda batch, q_len, k_len: [
        (
            torch.softmax(torch.randn(batch, q_len, k_len, dtype=torch.float64), dim=-1),
            torch.randn(batch, q_len, k_len, dtype=torch.float64),
        )
    ],
    section="04 · Parity 4 · gradients: what gradcheck proves",
    make_cases=backward_cases,
    reference=softmax_backward,
    variants=(softmax_backward_jacobian, softmax_backward_expanded),
    buggy={
        "softmax_backward_diagonal_only": softmax_backward_diagonal_only,
        "softmax_backward_wrong_sum_axis": softmax_backward_wrong_sum_axis,
    },
    driver=run_backward,
    forbidden=(
        "torch.autograd:grad",
        "torch.autograd:backward",
        "torch.autograd.functional:vjp",
        "torch.autograd.functional:jacobian",
        "torch.func:vjp",
        "torch.func:jacrev",
    ),
    atol=1e-10,
    rtol=1e-8,
    hints=(
        "Entry l of the result is Σ_j g_j ∂w_j/∂x_l. Split the sum into the term j = l and the others: what does "
        "each give?",
        "With ∂w_j/∂x_l = w_j (δ_jl − w_l), the sum is g_l w_l minus w_l times one number, and that number is the "
        "same for every l of the row.",
        "That number is Σ_j g_j w_j, one per row: multiply the two tensors entry by entry and sum over the "
        "softmax's own axis (the last), keeping that axis (keepdim) so it broadcasts back over the row.",
    ),
)
