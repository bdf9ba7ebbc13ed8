"""Schematic figures drawn by code: the Q/K/V flow, the head split and merge, the multi-head block.

Drawn with matplotlib from the same names the lessons use (``W_q``, ``query_proj``, ``out_proj``,
``batch``, ``q_len``, ``k_len``, ``d_model``, ``heads``, ``d_head``), so a renamed variable is a
one-line change here and the test in ``tests/test_diagrams.py`` catches a figure that drifts.

Public functions (each takes an optional ``ax``, returns the Axes it drew on, never calls
``plt.show()``):

- :func:`draw_qkv_flow` — one attention, ``X -> W_q/W_k/W_v -> Q, K, V -> scores -> softmax ->
  weights -> output`` with every tensor's shape (lesson 01);
- :func:`draw_head_split` — ``d_model`` split into ``heads x d_head``: view, transpose, attention per
  head, transpose back and concat, ``out_proj`` (lesson 03, Step 2);
- :func:`draw_multi_head_block` — the block: ``query_proj/key_proj/value_proj``, split, ``heads``
  attentions side by side, concat, ``out_proj`` (lessons 03 and 04);
- :func:`box_labels` — the titles drawn on an Axes by the functions above, in drawing order (what the
  tests and the figure alt texts compare against).

Introduced in notebooks/01_attention_numpy.ipynb.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from course_utils._validation import as_int, describe

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["box_labels", "draw_head_split", "draw_multi_head_block", "draw_qkv_flow"]

_TITLE_GID = "diagram-title"  # gid of every box title, so box_labels can find them
_ROLE_COLOURS = {  # light fills; text stays black (contrast above 7:1 on each)
    "input": "#e8e8e8",
    "weight": "#fde3b8",  # learned parameters: light orange
    "tensor": "#d4e8f7",  # activations: light blue
    "op": "#ffffff",  # operations without parameters
    "output": "#cdebdc",
}
# Okabe-Ito colours, one per head in draw_head_split (as plotting.LINE_STYLES)
_HEAD_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
_MAX_SPLIT_HEADS = len(_HEAD_COLOURS)


def _pyplot():
    """matplotlib.pyplot, imported on first use: importing this module does not load matplotlib."""
    import matplotlib.pyplot as plt

    return plt


def _is_axes(ax) -> bool:
    from matplotlib.axes import Axes

    return isinstance(ax, Axes)


def _axes(ax, figsize) -> Axes:
    if ax is None:
        _, ax = _pyplot().subplots(figsize=figsize)
    elif not _is_axes(ax):
        raise TypeError(f"ax must be a matplotlib Axes or None but is {describe(ax)}")
    ax.set_axis_off()
    return ax


def _box(ax, x, y, title, detail="", role="tensor", width=1.9, height=0.9):
    """A rounded box centred at (x, y): a bold title and an optional second line (a shape)."""
    from matplotlib import patches

    ax.add_patch(
        patches.FancyBboxPatch(
            (x - width / 2, y - height / 2),
            width,
            height,
            boxstyle="round,pad=0.03,rounding_size=0.12",
            facecolor=_ROLE_COLOURS[role],
            edgecolor="#333333",
            linewidth=1.2,
        )
    )
    two_lines = "\n" in detail
    dy = (0.28 if two_lines else 0.16) if detail else 0.0
    ax.text(x, y + dy, title, ha="center", va="center", fontsize=10, fontweight="bold", gid=_TITLE_GID)
    if detail:
        ax.text(x, y - (0.12 if two_lines else 0.2), detail, ha="center", va="center", fontsize=8, linespacing=1.1)


def _arrow(ax, start, end, text=""):
    ax.annotate(
        "",
        xy=end,
        xytext=start,
        arrowprops={"arrowstyle": "-|>", "color": "#333333", "linewidth": 1.2, "shrinkA": 0, "shrinkB": 0},
    )
    if text:
        mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
        ax.text(*mid, text, ha="center", va="bottom", fontsize=8, style="italic")


def box_labels(ax) -> list[str]:
    """The box titles a ``draw_*`` function drew on ``ax``, in drawing order.

    Introduced in notebooks/01_attention_numpy.ipynb.

    Examples
    --------
    >>> box_labels(draw_qkv_flow())[:4]
    ['X', 'W_q', 'W_k', 'W_v']
    """
    if not _is_axes(ax):
        raise TypeError(f"ax must be a matplotlib Axes but is {describe(ax)}")
    return [t.get_text() for t in ax.texts if t.get_gid() == _TITLE_GID]


def draw_qkv_flow(ax=None) -> Axes:
    """The data flow of one (self-)attention, with each tensor's shape.

    ``X (batch, seq_len, d_model)`` passes through three learned matrices ``W_q``, ``W_k``, ``W_v``
    ``(d_model, d_head)`` into ``Q``, ``K`` and ``V``; ``scores = Q K^T / sqrt(d_head)`` are
    ``(batch, q_len, k_len)``; the softmax over the keys gives the ``weights``; ``output = weights V``
    is ``(batch, q_len, d_head)``. In self-attention ``q_len = k_len = seq_len``.

    Parameters
    ----------
    ax : matplotlib Axes, optional
        Where to draw; a new 13 x 4.6 inch figure when omitted.

    Returns
    -------
    matplotlib Axes

    Introduced in notebooks/01_attention_numpy.ipynb.

    Examples
    --------
    >>> box_labels(draw_qkv_flow())
    ['X', 'W_q', 'W_k', 'W_v', 'Q', 'K', 'V', 'scores', 'softmax', 'weights', 'output']
    """
    ax = _axes(ax, (13.0, 4.6))
    rows = {"q": 1.5, "k": 0.0, "v": -1.5}
    _box(ax, 0.0, 0.0, "X", "(batch, seq_len, d_model)", role="input", width=2.5)
    for name in "qkv":
        _box(ax, 2.7, rows[name], f"W_{name}", "(d_model, d_head)", role="weight", width=1.9)
    for name in "qkv":
        length = "q_len" if name == "q" else "k_len"
        _box(ax, 5.3, rows[name], name.upper(), f"(batch, {length}, d_head)", width=2.2)
    _box(ax, 8.1, 0.75, "scores", "Q K^T / sqrt(d_head)", width=2.1)
    _box(ax, 10.5, 0.75, "softmax", "over the keys", role="op", width=1.6)
    _box(ax, 10.5, -0.75, "weights", "(batch, q_len, k_len)", width=2.1)
    _box(ax, 13.4, -0.75, "output", "weights V\n(batch, q_len, d_head)", role="output", width=2.6, height=1.1)
    for name in "qkv":
        _arrow(ax, (1.25, 0.0), (1.75, rows[name]))
        _arrow(ax, (3.65, rows[name]), (4.2, rows[name]))
    _arrow(ax, (6.4, rows["q"]), (7.05, 0.9))
    _arrow(ax, (6.4, rows["k"]), (7.05, 0.6))
    _arrow(ax, (9.15, 0.75), (9.7, 0.75))
    _arrow(ax, (10.5, 0.3), (10.5, -0.3))
    _arrow(ax, (11.55, -0.75), (12.1, -0.75))
    # V goes around the weights: along its own row, then up into the output box
    ax.plot([6.4, 13.4], [rows["v"], rows["v"]], color="#333333", linewidth=1.2)
    _arrow(ax, (13.4, rows["v"]), (13.4, -1.3))
    ax.text(9.8, rows["v"] + 0.05, "V", fontsize=8, style="italic", va="bottom")
    ax.set_xlim(-1.4, 14.8)
    ax.set_ylim(-2.2, 2.2)
    ax.set_title("One attention: self-attention reads Q, K and V from the same X", fontsize=11)
    return ax


def _grid(ax, x0, y0, n_rows, n_cols, colours, cell=0.22, gap_every=None, gap=0.08):
    """n_rows x n_cols cells from the top-left corner (x0, y0); column j has colour colours[j]."""
    from matplotlib import patches

    for j in range(n_cols):
        offset = (j // gap_every) * gap if gap_every else 0.0
        for i in range(n_rows):
            ax.add_patch(
                patches.Rectangle(
                    (x0 + j * cell + offset, y0 - (i + 1) * cell),
                    cell,
                    cell,
                    facecolor=colours[j],
                    edgecolor="white",
                    linewidth=0.8,
                )
            )
    width = n_cols * cell + ((n_cols - 1) // gap_every) * gap if gap_every else n_cols * cell
    return width


def _stage_title(ax, x, y, title, shape):
    """A stage's title over its shape, the shape broken after its second comma (two short lines)."""
    parts = shape.split(", ")
    shape = ", ".join(parts[:2]) + ",\n" + ", ".join(parts[2:]) if len(parts) > 2 else shape
    ax.text(x, y + 0.5, title, ha="center", va="bottom", fontsize=10, fontweight="bold", gid=_TITLE_GID)
    ax.text(x, y + 0.45, shape, ha="center", va="top", fontsize=8, linespacing=1.1)


_SPLIT_NAMES = {  # api -> (the split's reshape, the axis move, the output projection)
    "torch": ("view", "transpose(1, 2)", "out_proj"),
    "numpy": ("reshape", "transpose(0, 2, 1, 3)", "@ W_o"),
}


def draw_head_split(ax=None, *, heads: int = 4, d_head: int = 2, seq_len: int = 3, api: str = "torch") -> Axes:
    """How ``d_model = heads * d_head`` features are split into heads and merged back.

    One sequence of the batch, drawn as coloured cells (one colour per head): ``x (batch, seq_len,
    d_model)`` → ``view`` to ``(batch, seq_len, heads, d_head)`` → ``transpose(1, 2)`` to
    ``(batch, heads, seq_len, d_head)`` → attention in every head at once → ``transpose(1, 2)`` and
    ``reshape`` back to ``(batch, seq_len, d_model)`` (the concat) → ``out_proj``, which mixes the heads.
    With ``api="numpy"`` the stages carry NumPy's names instead: ``reshape``, ``transpose(0, 2, 1, 3)``
    and ``@ W_o`` (NumPy's ``transpose`` takes the whole order of the axes, not a pair).

    Parameters
    ----------
    ax : matplotlib Axes, optional
        Where to draw; a new 14 x 4.8 inch figure when omitted.
    heads, d_head, seq_len : int
        Sizes drawn (``heads`` at most 8, ``d_head`` and ``seq_len`` at most 6, so the cells stay legible).
    api : {"torch", "numpy"}
        Whose names label the stages: PyTorch's (``view``, ``transpose(1, 2)``, ``out_proj``) or
        NumPy's (``reshape``, ``transpose(0, 2, 1, 3)``, ``@ W_o``).

    Returns
    -------
    matplotlib Axes

    Introduced in notebooks/01_attention_numpy.ipynb; used in notebooks/03_multi_head_numpy.ipynb.

    Examples
    --------
    >>> box_labels(draw_head_split(heads=2, d_head=3))[:3]
    ['x', 'view', 'transpose(1, 2)']
    >>> box_labels(draw_head_split(heads=2, d_head=3, api="numpy"))[:3]
    ['x', 'reshape', 'transpose(0, 2, 1, 3)']
    """
    if api not in _SPLIT_NAMES:
        raise ValueError(f"api must be 'torch' or 'numpy' but is {api!r}")
    split_name, move_name, out_name = _SPLIT_NAMES[api]
    heads = as_int("heads", heads, 1)
    d_head = as_int("d_head", d_head, 1)
    seq_len = as_int("seq_len", seq_len, 1)
    if heads > _MAX_SPLIT_HEADS:
        raise ValueError(f"heads must be at most {_MAX_SPLIT_HEADS} to stay legible but is {heads}")
    for name, value in (("d_head", d_head), ("seq_len", seq_len)):
        if value > 6:
            raise ValueError(f"{name} must be at most 6 to stay legible but is {value}")
    ax = _axes(ax, (14.0, 4.8))
    d_model = heads * d_head
    cell = 0.22
    head_of = [_HEAD_COLOURS[j // d_head] for j in range(d_model)]
    top = 2.0
    xs = []  # left edge of each stage
    x = 0.0
    stage_gap = 1.1

    def stage(title, shape, width, draw):
        nonlocal x
        draw(x)
        _stage_title(ax, x + width / 2, top + 0.35, title, shape)
        xs.append((x, width))
        x += width + stage_gap

    flat_width = d_model * cell
    split_width = d_model * cell + (heads - 1) * 0.08
    per_head_width = d_head * cell
    stage("x", "(batch, seq_len, d_model)", flat_width, lambda x0: _grid(ax, x0, top, seq_len, d_model, head_of, cell))
    stage(
        split_name,
        "(batch, seq_len, heads, d_head)",
        split_width,
        lambda x0: _grid(ax, x0, top, seq_len, d_model, head_of, cell, gap_every=d_head),
    )

    def stacked(x0, label_prefix):
        for h in range(heads):
            y0 = top - h * (seq_len * cell + 0.18)
            _grid(ax, x0, y0, seq_len, d_head, [_HEAD_COLOURS[h]] * d_head, cell)
            ax.text(x0 - 0.06, y0 - seq_len * cell / 2, f"{label_prefix}{h}", ha="right", va="center", fontsize=7)

    stage(move_name, "(batch, heads, seq_len, d_head)", per_head_width + 0.9, lambda x0: stacked(x0 + 0.9, "h"))
    stage(
        "attention per head", "(batch, heads, seq_len, d_head)", per_head_width + 0.9, lambda x0: stacked(x0 + 0.9, "h")
    )
    stage(
        "concat",
        "(batch, seq_len, d_model)",
        flat_width,
        lambda x0: _grid(ax, x0, top, seq_len, d_model, head_of, cell),
    )
    stage(
        f"{out_name} (mixes heads)",
        "(batch, seq_len, d_model)",
        flat_width,
        lambda x0: _grid(ax, x0, top, seq_len, d_model, ["#777777"] * d_model, cell),
    )
    arrow_y = top - seq_len * cell / 2
    for (x_a, w_a), (x_b, _) in zip(xs[:-1], xs[1:], strict=True):
        _arrow(ax, (x_a + w_a + 0.1, arrow_y), (x_b - 0.1, arrow_y))
    bottom = top - heads * (seq_len * cell + 0.18)
    ax.text(
        0.0,
        bottom - 0.25,
        f"d_model = heads * d_head = {heads} * {d_head} = {d_model}; one colour per head, one row per token;"
        f" concat = {move_name}, then reshape",
        fontsize=9,
        va="top",
    )
    ax.set_xlim(-0.3, x - stage_gap + 0.3)
    ax.set_ylim(bottom - 0.7, top + 1.4)
    ax.set_aspect("equal")
    return ax


def draw_multi_head_block(ax=None, *, heads: int = 4, mask_and_dropout: bool = False) -> Axes:
    """The multi-head attention block, as ``nn.MultiheadAttention`` and the course's module compute it.

    ``query (batch, q_len, d_model)``, ``key`` and ``value (batch, k_len, d_model)`` pass through
    ``query_proj``, ``key_proj`` and ``value_proj`` (each ``Linear(d_model, d_model)``); ``split heads``
    gives ``(batch, heads, len, d_head)``; every head runs ``softmax(Q K^T / sqrt(d_head)) V`` on its own
    ``d_head`` features; ``concat heads`` gives ``(batch, q_len, d_model)``; ``out_proj`` mixes the heads.

    Parameters
    ----------
    ax : matplotlib Axes, optional
        Where to draw; a new 12 x 5.5 inch figure when omitted.
    heads : int
        Number of heads; more than 4 are drawn as the first two, an ellipsis and the last.
    mask_and_dropout : bool
        Also draw the ``mask`` input (True = may attend) that every head's masked softmax reads, and the dropout
        on the weights, as the PyTorch module of lesson 04 computes them: each head then runs
        ``dropout(masked_softmax(Q K^T / sqrt(d_head), mask)) V``.

    Returns
    -------
    matplotlib Axes

    Introduced in notebooks/01_attention_numpy.ipynb; used in notebooks/03_multi_head_numpy.ipynb and
    notebooks/04_multi_head_pytorch.ipynb (with ``mask_and_dropout=True``).

    Examples
    --------
    >>> box_labels(draw_multi_head_block(heads=2))
    ['query', 'key', 'value', 'query_proj', 'key_proj', 'value_proj', 'split heads', 'head 0', 'head 1', 'concat heads', 'out_proj', 'output']
    """
    heads = as_int("heads", heads, 1)
    if not isinstance(mask_and_dropout, bool):
        raise TypeError(f"mask_and_dropout must be True or False but is {describe(mask_and_dropout)}")
    ax = _axes(ax, (12.0, 5.5))
    columns = {"query": -3.0, "key": 0.0, "value": 3.0}
    for name, x in columns.items():
        length = "q_len" if name == "query" else "k_len"
        _box(ax, x, 0.0, name, f"(batch, {length}, d_model)", role="input", width=2.4)
    for name, x in columns.items():
        _box(ax, x, 1.5, f"{name}_proj", "Linear(d_model, d_model)", role="weight", width=2.4)
        _arrow(ax, (x, 0.45), (x, 1.05))
    _box(ax, 0.0, 3.0, "split heads", "-> (batch, heads, len, d_head)", role="op", width=3.4)
    for x in columns.values():
        _arrow(ax, (x, 1.95), (0.0 + 0.6 * x / 3.0, 2.55))
    shown = list(range(heads)) if heads <= 4 else [0, 1, None, heads - 1]
    xs = [(-4.6 + 9.2 * i / (len(shown) - 1)) if len(shown) > 1 else 0.0 for i in range(len(shown))]
    for h, x in zip(shown, xs, strict=True):
        if h is None:
            ax.text(x, 4.5, "...", ha="center", va="center", fontsize=14)
            continue
        detail = "dropout(masked softmax) V" if mask_and_dropout else "softmax(Q K^T / sqrt(d_head)) V"
        _box(ax, x, 4.5, f"head {h}", detail, width=2.9)
        _arrow(ax, (0.3 * x / 4.5, 3.45), (x, 4.05))
        _arrow(ax, (x, 4.95), (0.3 * x / 4.5, 5.55))
    _box(ax, 0.0, 6.0, "concat heads", "-> (batch, q_len, d_model)", role="op", width=3.4)
    _box(ax, 0.0, 7.3, "out_proj", "Linear(d_model, d_model): mixes the heads", role="weight", width=3.8)
    _box(ax, 0.0, 8.6, "output", "(batch, q_len, d_model)", role="output", width=2.6)
    _arrow(ax, (0.0, 6.45), (0.0, 6.85))
    _arrow(ax, (0.0, 7.75), (0.0, 8.15))
    ax.text(6.3, 4.5, f"heads = {heads}\nd_head = d_model // heads", ha="left", va="center", fontsize=9, style="italic")
    if mask_and_dropout:
        _box(ax, 6.4, 3.0, "mask", "True = may attend", role="input", width=2.3)
        _arrow(ax, (5.8, 3.45), (xs[-1] + 0.6, 4.05))
        ax.text(
            6.3,
            6.0,
            "each head: softmax(Q K^T / sqrt(d_head)),\n0 where the mask is False (a row with no key: all 0),\n"
            "then dropout on the weights (training only)",
            ha="left",
            va="center",
            fontsize=8,
            style="italic",
        )
    ax.set_xlim(-6.2, 10.8 if mask_and_dropout else 8.6)
    ax.set_ylim(-0.7, 9.3)
    return ax
