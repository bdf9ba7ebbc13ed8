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

import torch
import torch.nn.functional as F

from course_utils import attention, masks, retrieval
from course_utils.checking.cases import run_training_steps, torch_seeded
from course_utils.checking.model import AnswerRefused, Case, Exercise, KnownWrong, Prediction
from course_utils.lessons.lesson_04.module import MHA_FORWARD, MULTI_HEAD_MODULE, WEIGHTS_FOR_ANALYSIS
from course_utils.lessons.lesson_04.parity import LOAD_FROM_TORCH, SOFTMAX_BACKWARD, TORCH_CROSS_ATTEND

# As in module.py: `nn` assigned, not imported, so a reference's methods compile like the stub's.
nn = torch.nn


__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "TRAIN_STEP",
    "QK_MATRIX",
    "CAUSAL_SELF_ATTENTION",
    "ALIBI_BIAS",
    "CausalSelfAttention",
    "run_causal_layer",
]


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
    allowed=(MHA_FORWARD,),
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
    allowed=(MHA_FORWARD,),
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
