"""Lesson 04's first exercises: the module itself (``04.multi_head_module``) and its weights in training and
evaluation mode (``04.weights_for_analysis``).

Moved out of ``exercises.py`` whole (issue 26 section 5): one block per exercise, as there; ``exercises.py`` lists
them in ``EXERCISES``. ``_refusing`` and ``_MHA_FORWARD`` are now ``refusing`` and ``MHA_FORWARD``.
"""

from __future__ import annotations

import contextlib
import copy
import math

import torch
import torch.nn.functional as F

from course_utils import attention, masks
from course_utils.checking.cases import torch_seeded
from course_utils.checking.model import AnswerRefused, Case, Exercise

__all__ = [
    "MULTI_HEAD_MODULE",
    "WEIGHTS_FOR_ANALYSIS",
    "MyMultiHeadAttention",
    "run_module",
    "weights_and_mode",
    "forward_keys_split_with_query_length",
    "forward_inferred_batch",
    "forward_softmax_wrong_axis",
]

# Not `from torch import nn`: CPython 3.11 compiles `nn.Linear(...)` on a name imported in the same file as LOAD_ATTR,
# and on one imported in another cell (the lesson's Setup) as LOAD_METHOD. Assigned like this, the reference's
# __init__ compiles to the same code as the stub's (the engine compares them to tell a given method from an attempt).
nn = torch.nn

MHA_FORWARD = "course_utils.attention:MultiHeadAttention.forward"


@contextlib.contextmanager
def refusing(*targets):
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
    with refusing(*_FORWARD_HELPERS):
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
    allowed=(MHA_FORWARD,),
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
