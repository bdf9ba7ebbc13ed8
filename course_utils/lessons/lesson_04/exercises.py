"""Lesson 04 · Multi-head attention in PyTorch: the exercises and predictions of ``notebooks/04_multi_head_pytorch.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``. The
main path, in the lesson's order: the student's module (a class: ``split_heads`` and ``forward``), reading the
weights without dropout, unpacking ``nn.MultiheadAttention``'s weights, calling it with PyTorch's mask
convention, the softmax's backward pass that gradcheck judges, the retrieval task's training step and the
query-key matrix; then two transfer exercises (a causal layer with its mask as a buffer, ALiBi's bias).

The bug zoo's lesson-04 demonstrations live here too (``forward_keys_split_with_query_length``,
``forward_inferred_batch``, ``forward_softmax_wrong_axis``, ``softmax_backward_diagonal_only``): the lesson
calls them instead of showing buggy code that would be most of a region's answer. They use only
``mha.query_proj / key_proj / value_proj / out_proj / num_heads / d_head / d_model / dropout / training``, so they
run on the student's class and on ``attention.MultiHeadAttention`` alike.
"""

from __future__ import annotations

import contextlib
import copy
import math

import torch
import torch.nn.functional as F

from course_utils import attention, masks, retrieval
from course_utils.checking.cases import run_training_steps, torch_seeded
from course_utils.checking.model import AnswerRefused, Case, Exercise, KnownWrong, Prediction

# Not `from torch import nn`: CPython 3.11 compiles `nn.Linear(...)` on a name imported in the same file as LOAD_ATTR,
# and on one imported in another cell (the lesson's Setup) as LOAD_METHOD. Assigned like this, the reference's
# __init__ compiles to the same code as the stub's (the engine compares them to tell a given method from an attempt).
nn = torch.nn

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "MULTI_HEAD_MODULE",
    "WEIGHTS_FOR_ANALYSIS",
    "LOAD_FROM_TORCH",
    "TORCH_CROSS_ATTEND",
    "SOFTMAX_BACKWARD",
    "TRAIN_STEP",
    "QK_MATRIX",
    "CAUSAL_SELF_ATTENTION",
    "ALIBI_BIAS",
    "MyMultiHeadAttention",
    "CausalSelfAttention",
    "run_module",
    "weights_and_mode",
    "loaded_parameters",
    "run_backward",
    "run_torch_cross",
    "run_causal_layer",
    "forward_keys_split_with_query_length",
    "forward_inferred_batch",
    "forward_softmax_wrong_axis",
    "softmax_backward_diagonal_only",
    "nn_mha_mask_not_flipped",
]

_MHA_FORWARD = "course_utils.attention:MultiHeadAttention.forward"


@contextlib.contextmanager
def _refusing(*targets):
    """While the block runs, each ``(owner, attribute, words)`` raises AnswerRefused when called.

    For helpers that compute the whole answer but that the engine cannot see being called: PyTorch
    functions written in C, and anything the student's *module* calls after it was built.
    """
    saved = []
    try:
        for owner, attr, words in targets:
            original = vars(owner)[attr]  # as stored: a classmethod stays a classmethod when put back
            saved.append((owner, attr, original))

            def refuse(*args, _words=words, **kwargs):
                raise AnswerRefused(_words)

            setattr(owner, attr, refuse)
        yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)


def _dropout_p(mha) -> float:
    """The dropout probability of the student's class (an ``nn.Dropout``) or of the course's module (a float)."""
    dropout = getattr(mha, "dropout", 0.0)
    return float(dropout.p) if isinstance(dropout, nn.Module) else float(dropout)


# ---- 04.multi_head_module: the class MyMultiHeadAttention (split_heads, forward) -----------------------------
class MyMultiHeadAttention(nn.Module):
    """Multi-head attention: query (batch, q_len, d_model), key and value (batch, k_len, d_model)."""

    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model {d_model} is not divisible by num_heads {num_heads}")
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
        self.query_proj = nn.Linear(d_model, d_model, bias=bias)
        self.key_proj = nn.Linear(d_model, d_model, bias=bias)
        self.value_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def split_heads(self, t):
        """(batch, length, d_model) -> (batch, heads, length, d_head), at t's own length."""
        batch, length, _ = t.shape  # this tensor's own length: keys may be longer or shorter than queries
        # (batch, length, d_model) -> (batch, length, heads, d_head) -> (batch, heads, length, d_head)
        return t.view(batch, length, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        """(output (batch, q_len, d_model), weights (batch, heads, q_len, k_len)); mask: bool, broadcastable to
        the scores, True = may attend."""
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))  # (batch, heads, q_len, d_head)
        k = self.split_heads(self.key_proj(key))  # (batch, heads, k_len, d_head)
        v = self.split_heads(self.value_proj(value))  # (batch, heads, k_len, d_head)
        # (batch, heads, q_len, d_head) @ (batch, heads, d_head, k_len) -> (batch, heads, q_len, k_len)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        weights = attention.masked_softmax(scores, mask)  # lesson 02's: a query with no key gets all-zero weights
        weights = self.dropout(weights)  # dropout acts only in training mode
        heads_out = weights @ v  # (batch, heads, q_len, k_len) @ (batch, heads, k_len, d_head)
        # (batch, heads, q_len, d_head) -> (batch, q_len, heads, d_head) -> (batch, q_len, d_model)
        concat = heads_out.transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(concat), weights


def module_cases():
    """The course's weights for each case: an ``attention.MultiHeadAttention`` in float64, in eval mode."""

    def layer(d_model, heads, dropout=0.0):
        return attention.MultiHeadAttention(d_model, heads, dropout=dropout).double().eval()

    cases = []
    with torch_seeded(41):
        x = torch.randn(3, 5, 24, dtype=torch.float64)
        cases.append(Case((layer(24, 4), x, x, masks.make_causal_mask(5)), "self-attention with a causal mask"))
        cases.append(
            Case(
                (
                    layer(20, 4),
                    torch.randn(2, 6, 20, dtype=torch.float64),
                    torch.randn(2, 3, 20, dtype=torch.float64),
                    None,
                ),
                "keys shorter than queries, batch · k_len == q_len",
            )
        )
        cases.append(
            Case(
                (
                    layer(24, 4),
                    torch.randn(2, 3, 24, dtype=torch.float64),
                    torch.randn(2, 5, 24, dtype=torch.float64),
                    None,
                ),
                "keys longer than queries",
            )
        )
        padding = masks.padding_to_attention_mask(masks.make_padding_mask(torch.tensor([7, 4]), 7))
        cases.append(
            Case(
                (
                    layer(24, 4, dropout=0.3),
                    torch.randn(2, 3, 24, dtype=torch.float64),
                    torch.randn(2, 7, 24, dtype=torch.float64),
                    padding,
                ),
                "padded keys; dropout 0.3, eval mode",
            )
        )
        empty = masks.padding_to_attention_mask(masks.make_padding_mask(torch.tensor([5, 0]), 6))
        cases.append(
            Case(
                (
                    layer(16, 2),
                    torch.randn(2, 4, 16, dtype=torch.float64),
                    torch.randn(2, 6, 16, dtype=torch.float64),
                    empty,
                ),
                "sequence 1 has no real key: its weights are all 0 (lesson 02's masked softmax), not NaN",
            )
        )
        cases.append(
            Case(
                (
                    layer(8, 1),
                    torch.randn(2, 1, 8, dtype=torch.float64),
                    torch.randn(2, 9, 8, dtype=torch.float64),
                    None,
                ),
                "one head, one query (a decoding step)",
            )
        )
        cases.append(
            Case(
                (
                    layer(12, 2),
                    60 * torch.randn(3, 4, 12, dtype=torch.float64),
                    60 * torch.randn(3, 5, 12, dtype=torch.float64),
                    None,
                ),
                "scores in the thousands",
            )
        )
    return cases


_FORWARD_HELPERS = (
    (
        attention,
        "scaled_dot_product_attention",
        "your forward calls attention.scaled_dot_product_attention, a course helper that computes the attention this "
        "exercise asks you to write: compute the scores, the mask, the softmax and weights @ values yourself",
    ),
    (
        F,
        "scaled_dot_product_attention",
        "your forward calls F.scaled_dot_product_attention, which computes the attention this exercise asks you to "
        "write (Parity 2 compares with it later): compute the scores, the mask, the softmax and weights @ values "
        "yourself",
    ),
    (
        F,
        "multi_head_attention_forward",
        "your forward calls F.multi_head_attention_forward, nn.MultiheadAttention's whole forward pass: write the "
        "projections, the split, the attention and the merge yourself",
    ),
    (
        attention.MultiHeadAttention,
        "forward",
        "your forward calls attention.MultiHeadAttention.forward, a course helper: the course's module that this "
        "exercise asks you to write. Write the projections, the split, the attention and the merge yourself",
    ),
    (
        nn.MultiheadAttention,
        "forward",
        "your forward calls nn.MultiheadAttention.forward, PyTorch's module that this exercise asks you to write: "
        "write the projections, the split, the attention and the merge yourself",
    ),
)


def run_module(cls, weights_of, query, key_value, mask):
    """Build ``cls`` with the sizes of ``weights_of`` (a course module), load its weights, run it in float64.

    The student's class is built as the lesson builds it, ``cls(d_model, num_heads, dropout)``, receives
    ``weights_of``'s parameters by name (``load_state_dict``, strict: the attribute names must be the stub's),
    goes into ``weights_of``'s mode and runs ``(query, key_value, key_value)`` with ``mask`` (True = may attend),
    or without a mask when it is None. Returns what its forward returns, ``(output, weights)``.
    """
    module = cls(weights_of.d_model, weights_of.num_heads, weights_of.dropout)
    if module is None:  # not a class: a function that forgot to return
        return None
    if not isinstance(module, nn.Module):
        raise AnswerRefused(
            f"{getattr(cls, '__name__', 'the class')} did not build an nn.Module; keep the stub's "
            "class line and __init__"
        )
    module.load_state_dict(weights_of.state_dict(), strict=True)
    module = module.double().train(weights_of.training)
    with _refusing(*_FORWARD_HELPERS):
        if mask is None:
            return module(query, key_value, key_value)
        return module(query, key_value, key_value, mask=mask)


def _split_own_length(mha, t, q_len=None):
    batch, length, _ = t.shape
    return t.view(batch, length, mha.num_heads, mha.d_head).transpose(1, 2)  # (batch, heads, length, d_head)


def _forward(
    mha,
    query,
    key,
    value,
    mask=None,
    *,
    split=None,
    scale=None,
    softmax_dim=-1,
    unshifted=False,
    dropout_always=False,
    mix=True,
    merge_view=False,
    merge_no_transpose=False,
    mask_inverted=False,
    fill_minus_inf=False,
):
    """The forward pass with one thing changed; every keyword's default is the right computation."""
    batch, q_len, _ = query.shape
    split = split or _split_own_length
    q = _split_own_length(mha, mha.query_proj(query))  # (batch, heads, q_len, d_head)
    k = split(mha, mha.key_proj(key), q_len)
    v = split(mha, mha.value_proj(value), q_len)
    divisor = math.sqrt(mha.d_head) if scale is None else scale(mha)
    scores = q @ k.transpose(-2, -1) / divisor  # (batch, heads, q_len, k_len)
    if mask is not None and mask_inverted:
        mask = ~mask
    if softmax_dim == -1 and not (unshifted or fill_minus_inf):
        weights = attention.masked_softmax(scores, mask)  # lesson 02's safe softmax: a row with no key is all 0
    else:
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))  # a row with no key: exp(-inf) / 0 = NaN
        if unshifted:  # exp of the raw scores: overflows to inf for scores in the thousands
            exps = scores.exp()
            weights = exps / exps.sum(dim=-1, keepdim=True)
        else:
            weights = torch.softmax(scores, dim=softmax_dim)
    weights = F.dropout(weights, p=_dropout_p(mha), training=True if dropout_always else mha.training)
    heads_out = weights @ v  # (batch, heads, q_len, d_head)
    moved = heads_out if merge_no_transpose else heads_out.transpose(1, 2)  # (batch, q_len, heads, d_head)
    concat = moved.view(batch, q_len, mha.d_model) if merge_view else moved.reshape(batch, q_len, mha.d_model)
    return (mha.out_proj(concat) if mix else concat), weights


def _split_with_query_length(mha, t, q_len):
    return t.view(t.shape[0], q_len, mha.num_heads, mha.d_head).transpose(1, 2)  # the query's length: the bug


def _split_inferred_batch(mha, t, q_len):
    return t.view(-1, q_len, mha.num_heads, mha.d_head).transpose(1, 2)  # the batch inferred from it: the bug


def _split_single_reshape(mha, t, q_len):
    batch, length, _ = t.shape
    return t.reshape(batch, mha.num_heads, length, mha.d_head)  # right shape, positions and features mixed


def _split_no_transpose(mha, t, q_len):
    batch, length, _ = t.shape
    return t.view(batch, length, mha.num_heads, mha.d_head)  # heads where attention reads the positions


def forward_keys_split_with_query_length(mha, query, key, value, mask=None):
    """The bug zoo: ``K = key_proj(key).view(batch, q_len, heads, d_head)``, keys and values split with the
    query's length (two widely copied tutorials). Right in self-attention; a crash in most cross-attention."""
    return _forward(mha, query, key, value, mask, split=_split_with_query_length)


def forward_inferred_batch(mha, query, key, value, mask=None):
    """The bug zoo: the tempting wrong fix ``view(-1, q_len, heads, d_head)`` for the keys and values. It runs
    silently when ``batch · k_len == q_len`` (the batch becomes 1 and broadcasts: every query reads the keys of
    every sequence) and crashes for most other sizes."""
    return _forward(mha, query, key, value, mask, split=_split_inferred_batch)


def forward_softmax_wrong_axis(mha, query, key, value, mask=None):
    """The bug zoo: the softmax over the queries (``dim=-2``) instead of the keys: a wrong attention built from
    autograd's own operations (gradcheck passes it)."""
    return _forward(mha, query, key, value, mask, softmax_dim=-2)


def _buggy_class(name, **change):
    def forward(self, query, key, value, mask=None):
        return _forward(self, query, key, value, mask, **change)

    return type(name, (MyMultiHeadAttention,), {"forward": forward, "__module__": __name__})


def _buggy_split_class(name, split):
    def split_heads(self, t):
        return split(self, t, t.shape[1])

    return type(name, (MyMultiHeadAttention,), {"split_heads": split_heads, "__module__": __name__})


class ModuleViewMerge(MyMultiHeadAttention):
    """Correct: ``.contiguous().view`` for the merge, ``view(batch, -1, heads, d_head)`` for the split,
    ``torch.where`` with the dtype's lowest number for the mask, and rows with no key zeroed after the softmax."""

    def split_heads(self, t):
        return t.view(t.shape[0], -1, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q, k, v = (
            self.split_heads(proj(x))
            for proj, x in ((self.query_proj, query), (self.key_proj, key), (self.value_proj, value))
        )
        scores = torch.matmul(q, k.transpose(2, 3)) / self.d_head**0.5
        if mask is not None:
            lowest = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
            scores = torch.where(mask, scores, lowest)  # finite: a row with no key stays a number
        weights = scores.softmax(dim=-1)
        if mask is not None:
            weights = weights * mask.any(dim=-1, keepdim=True)  # a row with no key: all 0
        weights = self.dropout(weights)
        concat = (weights @ v).transpose(1, 2).contiguous().view(batch, q_len, -1)
        return self.out_proj(concat), weights


class ModuleEinsum(MyMultiHeadAttention):
    """Correct: ``unflatten`` and ``torch.einsum`` without a transpose, the course's masked softmax and
    ``F.dropout``."""

    def split_heads(self, t):
        return t.unflatten(-1, (self.num_heads, self.d_head)).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        h, d = self.num_heads, self.d_head
        q = self.query_proj(query).unflatten(-1, (h, d))  # (batch, q_len, heads, d_head)
        k = self.key_proj(key).unflatten(-1, (h, d))  # (batch, k_len, heads, d_head)
        v = self.value_proj(value).unflatten(-1, (h, d))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(d)
        weights = F.dropout(attention.masked_softmax(scores, mask), self.dropout.p, self.training)
        heads_out = torch.einsum("bhqk,bkhd->bqhd", weights, v)  # (batch, q_len, heads, d_head)
        return self.out_proj(heads_out.flatten(-2)), weights


MULTI_HEAD_MODULE = Exercise(
    id="04.multi_head_module",
    fresh=lambda batch, q_len, k_len, heads, d_head: [
        (
            attention.MultiHeadAttention(heads * d_head, heads).double().eval(),
            torch.randn(batch, q_len, heads * d_head, dtype=torch.float64),
            torch.randn(batch, k_len, heads * d_head, dtype=torch.float64),
            None,
        )
    ],
    function="MyMultiHeadAttention",
    section="04 · Build the module",
    make_cases=module_cases,
    reference=MyMultiHeadAttention,
    variants=(ModuleViewMerge, ModuleEinsum),
    driver=run_module,
    buggy={
        "keys_split_with_query_length": _buggy_class("KeysSplitWithQueryLength", split=_split_with_query_length),
        "view_minus_one_batch": _buggy_class("InferredBatch", split=_split_inferred_batch),
        "split_single_reshape": _buggy_split_class("SplitSingleReshape", _split_single_reshape),
        "split_no_transpose": _buggy_split_class("SplitNoTranspose", _split_no_transpose),
        "merge_no_transpose": _buggy_class("MergeNoTranspose", merge_no_transpose=True),
        "view_after_transpose": _buggy_class("ViewAfterTranspose", merge_view=True),
        "no_scaling": _buggy_class("NoScaling", scale=lambda mha: 1.0),
        "scaled_by_d_head": _buggy_class("ScaledByDHead", scale=lambda mha: mha.d_head),
        "scaled_by_sqrt_d_model": _buggy_class("ScaledBySqrtDModel", scale=lambda mha: math.sqrt(mha.d_model)),
        "softmax_wrong_axis": _buggy_class("SoftmaxOverQueries", softmax_dim=-2),
        "softmax_no_max_shift": _buggy_class("SoftmaxUnshifted", unshifted=True),
        "dropout_in_eval": _buggy_class("DropoutInEval", dropout_always=True),
        "no_output_projection": _buggy_class("NoOutputProjection", mix=False),
        "mask_inverted": _buggy_class("MaskInverted", mask_inverted=True),
        "fill_minus_inf": _buggy_class("FillMinusInf", fill_minus_inf=True),
    },
    output_names=("output", "weights"),
    hints=(
        "Which sizes does split_heads need, and where should each come from when the keys are longer (or shorter) "
        "than the queries?",
        "Project, split each tensor at its own length, scores scaled by sqrt(d_head), lesson 02's masked softmax over "
        "the keys (masked_softmax(scores, mask): True = may attend, a row with no key all 0), dropout, weights @ "
        "values, then undo the split (transpose back, reshape) and apply out_proj.",
        "In split_heads, read batch and length from t.shape itself and view to (batch, length, heads, d_head): the "
        "heads are then on axis 2, and attention needs them on axis 1. In forward, the merge starts from "
        "(batch, heads, q_len, d_head): undo the split in reverse order.",
    ),
)


# ---- 04.weights_for_analysis(mha, query, key, value) -> weights, with the module's mode kept -------------------
def analysis_cases():
    with torch_seeded(5):
        training = attention.MultiHeadAttention(24, 4, dropout=0.5)  # a new module is in training mode
        evaluating = attention.MultiHeadAttention(12, 2, dropout=0.3).eval()
        training_too = attention.MultiHeadAttention(20, 5, dropout=0.2)
        x = torch.randn(1, 5, 12)
        return [
            Case(
                (training, torch.randn(2, 3, 24), torch.randn(2, 5, 24), torch.randn(2, 5, 24)),
                "a module in training mode, dropout 0.5",
            ),
            Case((evaluating, x, x, x), "a module already in eval mode, self-attention"),
            Case(
                (training_too, torch.randn(3, 2, 20), torch.randn(3, 6, 20), torch.randn(3, 6, 20)),
                "a module in training mode, dropout 0.2",
            ),
        ]


def weights_and_mode(weights_for_analysis, mha, query, key, value):
    """The answer's weights, and the mode the module is left in."""
    return weights_for_analysis(mha, query, key, value), mha.training


def weights_for_analysis(mha, query, key, value):
    was_training = mha.training
    mha.eval()  # dropout off
    with torch.no_grad():
        _, weights = mha(query, key, value)
    mha.train(was_training)  # back to the mode the caller had
    return weights


def analysis_try_finally(mha, query, key, value):
    mode = mha.training
    try:
        mha.train(False)
        with torch.inference_mode():
            return mha(query, key, value)[1].clone()
    finally:
        mha.train(mode=mode)


def analysis_on_a_copy(mha, query, key, value):
    frozen = copy.deepcopy(mha).eval()  # the caller's module is never touched
    with torch.no_grad():
        return frozen(query, key, value)[1]


def analysis_weights_in_training_mode(mha, query, key, value):
    with torch.no_grad():
        return mha(query, key, value)[1]


def analysis_mode_not_restored(mha, query, key, value):
    mha.eval()
    with torch.no_grad():
        return mha(query, key, value)[1]


WEIGHTS_FOR_ANALYSIS = Exercise(
    id="04.weights_for_analysis",
    section="04 · Dropout on the attention weights: training only",
    make_cases=analysis_cases,
    reference=weights_for_analysis,
    variants=(analysis_try_finally, analysis_on_a_copy),
    buggy={
        "weights_in_training_mode": analysis_weights_in_training_mode,
        "mode_not_restored": analysis_mode_not_restored,
    },
    allowed=(_MHA_FORWARD,),
    driver=weights_and_mode,
    output_names=("weights", "mode afterwards (mha.training)"),
    hints=(
        "Dropout acts only in training mode, and mha may be training. What must you switch before the call, and "
        "what must be true of mha after your function returns?",
        "Remember mha.training, switch to eval mode, compute the weights without recording gradients, then put "
        "back the mode you remembered.",
        "mha.train(mode) sets either mode (mha.eval() is mha.train(False)); the weights are the second item of "
        "mha(query, key, value).",
    ),
)


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
    with _refusing((attention.MultiHeadAttention, "from_torch", _FROM_TORCH_WORDS)):
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
    with _refusing((attention.MultiHeadAttention, "from_torch", words)):
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
    forbidden=(_MHA_FORWARD,),
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
    with _refusing(*_BACKWARD_HELPERS):
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


# ---- 04.train_step(model, optimizer, batch) -> loss ------------------------------------------------------------
def train_step_cases():
    def batches(seed, size, n_keys):
        gen = torch.Generator().manual_seed(seed)
        out = []
        for k in range(3):
            query, keys, values, target, index = (
                t.double() if t.is_floating_point() else t for t in retrieval.make_batch(gen, size, n_keys=n_keys)
            )
            if k == 2:  # far-off targets: a gradient a thousand times the others (last, so the first two read plainly)
                target = 1e3 * target
            out.append((query, keys, values, target, index))
        return out

    cases = []
    with torch_seeded(11):
        model = attention.MultiHeadAttention(retrieval.D_MODEL, 1).double()
        cases.append(
            Case(
                (model, torch.optim.SGD(model.parameters(), lr=0.1), batches(12, 8, retrieval.N_KEYS)),
                "one head, SGD, 3 batches of 8, the last with a huge gradient",
            )
        )
        model = attention.MultiHeadAttention(retrieval.D_MODEL, 2).double()
        cases.append(
            Case(
                (model, torch.optim.Adam(model.parameters(), lr=1e-2), batches(13, 5, 6)),
                "two heads, Adam, 3 batches of 5 with 6 keys, the last with a huge gradient",
            )
        )
    return cases


def train_step(model, optimizer, batch):
    query, keys, values, target, _ = batch
    output, _ = model(query, keys, values)  # (batch, 1, d_model)
    loss = ((output - target) ** 2).mean()
    optimizer.zero_grad()  # drop whatever is left in .grad
    loss.backward()
    optimizer.step()
    return loss.item()


def train_step_module_zero_grad(model, optimizer, batch):
    query, keys, values, target, index = batch
    model.zero_grad(set_to_none=False)
    loss = F.mse_loss(model(query, keys, values)[0], target)
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def train_step_mse_by_hand(model, optimizer, batch):
    *inputs, target, _index = batch
    optimizer.zero_grad(set_to_none=True)
    output = model(*inputs)[0]
    loss = (output - target).pow(2).sum() / target.numel()
    loss.backward()
    optimizer.step()
    return loss.detach().item()


def _train_step(model, optimizer, batch, order, summed=False):
    query, keys, values, target, _ = batch
    output, _ = model(query, keys, values)
    loss = ((output - target) ** 2).sum() if summed else ((output - target) ** 2).mean()
    for action in order:
        if action == "zero_grad":
            optimizer.zero_grad()
        elif action == "backward":
            loss.backward()
        else:
            optimizer.step()
    return loss.item()


def step_without_zero_grad(model, optimizer, batch):
    return _train_step(model, optimizer, batch, ("backward", "step"))


def step_zero_grad_after_backward(model, optimizer, batch):
    return _train_step(model, optimizer, batch, ("backward", "zero_grad", "step"))


def step_before_backward(model, optimizer, batch):
    return _train_step(model, optimizer, batch, ("step", "zero_grad", "backward"))


def step_zero_grad_at_end(model, optimizer, batch):
    return _train_step(model, optimizer, batch, ("backward", "step", "zero_grad"))


def step_loss_summed(model, optimizer, batch):
    return _train_step(model, optimizer, batch, ("zero_grad", "backward", "step"), summed=True)


TRAIN_STEP = Exercise(
    id="04.train_step",
    section="04 · Your training step",
    make_cases=train_step_cases,
    reference=train_step,
    variants=(train_step_module_zero_grad, train_step_mse_by_hand),
    buggy={
        "zero_grad_missing": step_without_zero_grad,
        "zero_grad_after_backward": step_zero_grad_after_backward,
        "step_before_backward": step_before_backward,
        "zero_grad_at_end": step_zero_grad_at_end,
        "loss_summed": step_loss_summed,
    },
    allowed=(_MHA_FORWARD,),
    forbidden=("course_utils.retrieval:train_step", "course_utils.retrieval:train"),
    driver=run_training_steps,
    output_names=("losses", "parameters"),
    atol=1e-9,
    rtol=1e-7,
    hints=(
        "What must happen to .grad before backward() adds this batch's gradients to it, and in which order do "
        "backward() and step() run?",
        "Forward, the mean squared error, clear the old gradients, backward, step; return the loss as a Python number.",
        "optimizer.zero_grad() clears every parameter the optimizer holds; loss.item() turns a one-element tensor "
        "into a float.",
    ),
)


# ---- 04.qk_matrix(mha) -> (d_model, d_model) --------------------------------------------------------------
def qk_cases():
    with torch_seeded(6):
        return [
            Case((attention.MultiHeadAttention(16, 1),), "one head"),
            Case((attention.MultiHeadAttention(8, 2),)),
            Case((attention.MultiHeadAttention(6, 3, bias=False),), "no biases"),
        ]


def qk_matrix(mha):
    with torch.no_grad():
        # W_q = query_proj.weight.T, W_k = key_proj.weight.T: (d_model, d_model) @ (d_model, d_model)
        return mha.query_proj.weight.T @ mha.key_proj.weight


def qk_matrix_transposed_product(mha):
    return (mha.key_proj.weight.T @ mha.query_proj.weight).T.detach()  # (W_k^T W_q)^T = W_q^T W_k


def qk_matrix_einsum(mha):
    return torch.einsum("oi,oj->ij", mha.query_proj.weight, mha.key_proj.weight).detach()


def qk_linear_layout(mha):
    return mha.query_proj.weight @ mha.key_proj.weight.T  # the (out, in) layout taken as x @ W


def qk_transposed(mha):
    return mha.key_proj.weight.T @ mha.query_proj.weight  # W_k W_q^T: rows are key features


QK_MATRIX = Exercise(
    id="04.qk_matrix",
    section="04 · Reading a layer's query-key matrix",
    make_cases=qk_cases,
    reference=qk_matrix,
    variants=(qk_matrix_transposed_product, qk_matrix_einsum),
    buggy={"qk_linear_layout": qk_linear_layout, "qk_transposed": qk_transposed},
    hints=(
        "In NumPy notation the scores are x @ W_q @ W_k^T @ y^T. How are W_q and W_k stored in an nn.Linear?",
        "nn.Linear computes x @ weight.T, so W_q is query_proj.weight.T and W_k is key_proj.weight.T; the heads "
        "only cut the sum into pieces.",
        "Write W_q @ W_k^T with the two weights; mind which one ends up transposed twice.",
    ),
)


# ---- 04.causal_self_attention: the class CausalSelfAttention (__init__'s buffer, forward) -------------------
class CausalSelfAttention(nn.Module):
    """Causal self-attention: (batch, seq_len, d_model) -> (batch, seq_len, d_model), for seq_len <= max_len."""

    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).tril(), persistent=False)

    def forward(self, x):
        seq_len = x.shape[1]
        return self.attn(x, x, x, mask=self.causal[:seq_len, :seq_len])[0]


def causal_layer_cases():
    cases = []
    with torch_seeded(17):
        for d_model, heads, max_len, batch, seq_len in ((24, 4, 9, 2, 5), (12, 3, 7, 2, 7)):
            attn = attention.MultiHeadAttention(d_model, heads).double().eval()
            x = torch.randn(batch, seq_len, d_model, dtype=torch.float64)
            label = "a sequence shorter than max_len" if seq_len < max_len else "a sequence of max_len tokens"
            cases.append(Case((attn, max_len, x), label))
    return cases


def run_causal_layer(cls, attn_from, max_len, x):
    """Build ``cls(d_model, num_heads, max_len)``, give its ``attn`` the weights of ``attn_from``, run it in float64.

    Returns the output, the keys of its ``state_dict()`` and its buffers ``(name, dtype, shape)``.
    """
    layer = cls(attn_from.d_model, attn_from.num_heads, max_len)
    if layer is None:  # not a class: a function that forgot to return
        return None
    if not isinstance(getattr(layer, "attn", None), nn.Module):
        raise AnswerRefused("the layer needs its attention module as self.attn, as the stub builds it")
    layer.attn.load_state_dict(attn_from.state_dict(), strict=True)
    layer = layer.double().eval()
    output = layer(x)
    buffers = [(name, str(b.dtype), tuple(b.shape)) for name, b in layer.named_buffers()]
    return output, sorted(layer.state_dict()), buffers


class CausalLayerArange(CausalSelfAttention):
    def __init__(self, d_model, num_heads, max_len):
        nn.Module.__init__(self)
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        positions = torch.arange(max_len)
        self.register_buffer("causal", positions[:, None] >= positions[None, :], persistent=False)  # key j <= query i

    def forward(self, x):
        n = x.size(1)
        output, _weights = self.attn(x, x, x, mask=self.causal[:n, :n])
        return output


class CausalLayerCourseMask(CausalSelfAttention):
    def __init__(self, d_model, num_heads, max_len):
        nn.Module.__init__(self)
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", masks.make_causal_mask(max_len), persistent=False)

    def forward(self, x):
        mask = self.causal[: x.shape[1]][:, : x.shape[1]]
        return self.attn(x, x, x, mask)[0]


class CausalLayerPersistent(CausalSelfAttention):
    def __init__(self, d_model, num_heads, max_len):
        nn.Module.__init__(self)
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).tril())  # saved: the bug


class CausalLayerWholeMask(CausalSelfAttention):
    def forward(self, x):
        return self.attn(x, x, x, mask=self.causal)[0]  # (max_len, max_len), whatever seq_len: the bug


CAUSAL_SELF_ATTENTION = Exercise(
    id="04.causal_self_attention",
    function="CausalSelfAttention",
    section="04 · Exercise 1 · A causal layer with its mask as a buffer",
    make_cases=causal_layer_cases,
    reference=CausalSelfAttention,
    variants=(CausalLayerArange, CausalLayerCourseMask),
    buggy={"buffer_persistent": CausalLayerPersistent, "mask_not_sliced": CausalLayerWholeMask},
    misconceptions=("causal_triu", "causal_no_diagonal"),  # derived from the catalogue's patches of tril
    allowed=(_MHA_FORWARD,),
    driver=run_causal_layer,
    output_names=("output", "state_dict keys", "buffers"),
    hints=(
        "Which keys must the layer's state_dict() list, and which tensor must move with .to(device) without being "
        "a parameter?",
        "Make the causal mask once, for max_len, register it as a non-persistent buffer named causal, and cut out "
        "the (seq_len, seq_len) corner in forward.",
        "register_buffer stores the mask with the module (it moves with .to() and is not a parameter). For an "
        "input shorter than max_len, which rows and columns of the stored mask apply? Hand that corner to the "
        "attention module as its mask.",
    ),
)


# ---- 04.alibi_bias(num_heads, seq_len) -> (num_heads, seq_len, seq_len) ---------------------------------------
def alibi_cases():
    return [Case((8, 5)), Case((4, 7)), Case((2, 3)), Case((1, 4), "one head: slope 2^-8")]


def alibi_bias(num_heads, seq_len):
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1) / num_heads)  # (heads,): 1/2, 1/4, ... for 8 heads
    i = torch.arange(seq_len)[:, None]  # (q_len, 1): the query's position
    j = torch.arange(seq_len)[None, :]  # (1, k_len): the key's position
    bias = -slopes[:, None, None] * (i - j)  # (heads, q_len, k_len): minus slope times how far back key j is
    allowed = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()  # key j at or before query i
    return bias.masked_fill(~allowed, float("-inf"))


def alibi_bias_where(num_heads, seq_len):
    h = torch.arange(1, num_heads + 1, dtype=torch.float32)
    slopes = torch.pow(2.0, -8.0 * h / num_heads).view(-1, 1, 1)  # (heads, 1, 1)
    positions = torch.arange(seq_len)
    distance = (positions.view(-1, 1) - positions.view(1, -1)).float()  # (q_len, k_len)
    return torch.where(distance < 0, float("-inf"), -slopes * distance)


def alibi_bias_loops(num_heads, seq_len):
    bias = torch.empty(num_heads, seq_len, seq_len)
    for h in range(num_heads):
        slope = 2 ** (-8 * (h + 1) / num_heads)
        for i in range(seq_len):
            for j in range(seq_len):
                bias[h, i, j] = -slope * (i - j) if j <= i else float("-inf")
    return bias


def _alibi(num_heads, seq_len, *, first_head=1, sign=-1.0, causal=True):
    slopes = 2.0 ** (-8.0 * torch.arange(first_head, first_head + num_heads) / num_heads)
    distance = (torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]).float()
    if not causal:
        return -slopes[:, None, None] * distance.abs()  # both ways, nothing hidden
    bias = sign * slopes[:, None, None] * distance
    return bias.masked_fill(distance < 0, float("-inf"))


def alibi_slopes_from_zero(num_heads, seq_len):
    return _alibi(num_heads, seq_len, first_head=0)


def alibi_bias_grows_with_distance(num_heads, seq_len):
    return _alibi(num_heads, seq_len, sign=1.0)


def alibi_not_causal(num_heads, seq_len):
    return _alibi(num_heads, seq_len, causal=False)


ALIBI_BIAS = Exercise(
    id="04.alibi_bias",
    fresh=lambda num_heads, seq_len: [(num_heads, seq_len), (16, seq_len)],  # 16 heads: not only 4 and 8
    section="04 · Exercise 2 · A bias per head: ALiBi",
    make_cases=alibi_cases,
    reference=alibi_bias,
    variants=(alibi_bias_where, alibi_bias_loops),
    buggy={
        "alibi_slopes_from_zero": alibi_slopes_from_zero,
        "alibi_sign": alibi_bias_grows_with_distance,
        "alibi_not_causal": alibi_not_causal,
    },
    misconceptions=("causal_triu", "causal_no_diagonal"),  # derived from the catalogue's patches of tril
    hints=(
        "What are the slopes for 4 heads, and what is the bias of the key 3 positions before the query in head 1?",
        "Build the (heads,) slopes and a (q_len, k_len) table of i − j, multiply them with broadcasting, negate, "
        "and put −inf where the key comes after the query.",
        "A column of query positions against a row of key positions gives a (q_len, k_len) table of distances: "
        "which sign must the bias have for a key further back? Then give the slopes two new axes so that each "
        "head scales its own table.",
    ),
)

EXERCISES = [
    MULTI_HEAD_MODULE,
    WEIGHTS_FOR_ANALYSIS,
    LOAD_FROM_TORCH,
    TORCH_CROSS_ATTEND,
    SOFTMAX_BACKWARD,
    QK_MATRIX,
    TRAIN_STEP,
    CAUSAL_SELF_ATTENTION,
    ALIBI_BIAS,
]

PREDICTIONS = [
    Prediction(
        id="04.linear_weight_shape",
        question="What is the shape of nn.Linear(4, 3).weight?",
        kind="shape",
        answer=(3, 4),
        section="04 · From a matrix to nn.Linear",
        known_wrong=(
            KnownWrong(
                (4, 3),
                "linear_layout_as_numpy",
                "the shape of the NumPy matrix W in x @ W: think about how nn.Linear stores its weight and what its forward computes",
            ),
        ),
    ),
    Prediction(
        id="04.view_after_transpose",
        question='Does t.transpose(1, 2).view(2, 5, 24) work, or raise an error? ("works" or "error")',
        kind="choice",
        answer="error",
        choices=("works", "error"),
        section="04 · Build the module",
        known_wrong=(
            KnownWrong(
                "works",
                "view_after_transpose",
                "what reshape would do; after a transpose the memory is no longer in row order, and view never copies",
            ),
        ),
    ),
    Prediction(
        id="04.same_output",
        question="Same parameters, same input: do a 1-head and a 4-head module return the same output?",
        kind="choice",
        answer=False,
        choices=(True, False),
        section="04 · Single head versus multi-head, with the same parameters",
        known_wrong=(
            KnownWrong(
                True,
                "heads_only_reshape",
                "what you would get if heads only regrouped the same computation; but each head takes its own "
                "softmax over its own scores",
            ),
        ),
    ),
    Prediction(
        id="04.single_weights_shape",
        question="For x of shape (2, 5, 16), what is the shape of the one-head module's weights?",
        kind="shape",
        answer=(2, 1, 5, 5),
        section="04 · Single head versus multi-head, with the same parameters",
        known_wrong=(
            KnownWrong(
                (2, 5, 5),
                "heads_axis_dropped",
                "one matrix per sequence: think about which axes the module's weights always have",
            ),
            KnownWrong(
                (2, 4, 5, 5),
                "multi_head_weights",
                "the four-head module's weights: think about how many heads this module has",
            ),
            KnownWrong((2, 5, 16), "output_shape", "the output's shape; the weights have one entry per (query, key)"),
        ),
    ),
    Prediction(
        id="04.inferred_batch_outcome",
        question='view(-1, seq_len, ...) for keys and values, 2 sequences of 3 keys, 6 queries each: "error", '
        '"right shape, wrong values" or "right"?',
        kind="choice",
        answer="right shape, wrong values",
        choices=("error", "right shape, wrong values", "right"),
        section="04 · A common bug: splitting the keys with the query's length",
        known_wrong=(
            KnownWrong(
                "error",
                "inferred_batch_always_crashes",
                "what happens for most sizes; here 2 · 3 = 6 keys fill one row of length 6: the batch becomes 1 "
                "and broadcasts",
            ),
            KnownWrong(
                "right",
                "inferred_batch_harmless",
                "what a shape check would tell you; but each query now reads the keys of both sequences",
            ),
        ),
    ),
    Prediction(
        id="04.fresh_module_mode",
        question='Is a freshly built module in "training" or in "eval" mode?',
        kind="choice",
        answer="training",
        choices=("training", "eval"),
        section="04 · Dropout on the attention weights: training only",
        known_wrong=(
            KnownWrong(
                "eval",
                "fresh_module_in_eval",
                "what analysis needs; think about which mode PyTorch builds a module in, and who calls .eval()",
            ),
        ),
    ),
    Prediction(
        id="04.gradcheck_wrong_forward",
        question="A forward pass with the softmax over the queries instead of the keys: does gradcheck pass on it?",
        kind="choice",
        answer=True,
        choices=(True, False),
        section="04 · Parity 4 · gradients: what gradcheck proves",
        known_wrong=(
            KnownWrong(
                False,
                "gradcheck_checks_forward",
                "what you would get if gradcheck knew what the forward should compute; it only compares autograd's "
                "gradients with finite differences of the same forward",
            ),
        ),
    ),
    Prediction(
        id="04.weight_on_match_before",
        question="Before training, about how much attention weight does the query put on its own key, out of 8 keys?",
        kind="number",
        answer=1 / 8,
        rtol=0.25,
        section="04 · Train it: retrieval by similarity",
        rethink="how a layer that knows nothing yet shares its weight among the keys",
        known_wrong=(
            KnownWrong(
                1.0,
                "weight_after_training",
                "the weight once the layer has learned to find the key; before training nothing tells the query "
                "which key is its own",
            ),
            KnownWrong(0.0, "no_weight", "no weight at all, but a softmax gives every key some weight"),
            KnownWrong(
                0.5,
                "half_weight",
                "more than a layer that knows nothing yet would give: think about how it shares the weight among the keys",
            ),
        ),
    ),
]
