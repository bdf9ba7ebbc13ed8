"""The attention explorer: pick an input, click a query, read its weights. Generic: no lesson model inside.

Introduced in ``notebooks/05_inside_the_heads.ipynb``; used again in ``07_seq2seq_rnn_attention`` and
``08_transformer_reversal``. The lessons' adapters turn a model into snapshots: :mod:`course_utils.role_task`
(``explore_role_model``, lesson 05) and :mod:`course_utils.reversal.views` (``explore_seq2seq``, lessons 07, 08).

Two layers, so that the numbers can be tested without a browser:

- a :class:`Snapshot` is a model run on one input: every attention block's weights
  ``(layers, heads, q_len, k_len)`` as an :class:`AttentionView`, with its mask (True = may attend), the query and
  key labels, what each query outputs and (decoder steps) which token it reads.
  :func:`capture_attention` collects the weights of every :class:`course_utils.attention.MultiHeadAttention`
  inside a model, even those called with ``need_weights=False``, by recomputing them in a forward hook;
  :func:`mask_2d` reduces a captured mask to one ``(q_len, k_len)`` grid.
- :class:`AttentionExplorer` (ipywidgets, no custom JavaScript, nothing fetched) shows snapshots: an example
  picker and an editable input, one button per view and per query token, and for the chosen query a table of its
  weights over the keys, one row per layer and head, with the mask, each row's entropy (:func:`row_entropy`) and
  the output. :func:`render_weights_table` writes that table; each weight cell carries ``data-layer``,
  ``data-head``, ``data-key`` and ``data-weight`` attributes.

Where widgets do not render (nbval, RISE, the site, a static viewer), the explorer's output is a static figure of
the view it shows (``image/png``: every head of the last layer; it opens on the last view, the cross-attention of
a Transformer) and a one-line text summary without floats, so stored outputs stay deterministic.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "AttentionView",
    "Snapshot",
    "capture_attention",
    "mask_2d",
    "row_entropy",
    "render_weights_table",
    "AttentionExplorer",
]


@dataclass
class AttentionView:
    """One kind of attention block of a model, on one input.

    ``weights`` is ``(layers, heads, q_len, k_len)``; ``mask`` is ``(q_len, k_len)``, True = may
    attend; ``query_outputs`` (optional, ``q_len`` strings) says what each query position outputs;
    ``query_reads`` (optional, ``q_len`` strings) marks a decoder's steps: the token each step reads (the
    query label is then the token it writes, and the query buttons say ``3: writes e``).

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """

    name: str
    query_labels: list
    key_labels: list
    weights: np.ndarray
    mask: np.ndarray
    query_outputs: list | None = None
    query_reads: list | None = None

    def __post_init__(self):
        self.weights = np.asarray(self.weights, dtype=np.float64)
        if self.weights.ndim != 4:
            raise ValueError(f"weights must be (layers, heads, q_len, k_len) but has shape {tuple(self.weights.shape)}")
        _, _, q_len, k_len = self.weights.shape
        self.mask = np.broadcast_to(np.asarray(self.mask, dtype=bool), (q_len, k_len)).copy()
        if (len(self.query_labels), len(self.key_labels)) != (q_len, k_len):
            raise ValueError(
                f"{self.name}: {len(self.query_labels)} query and {len(self.key_labels)} key labels "
                f"for weights of shape {tuple(self.weights.shape)}"
            )
        for field in ("query_outputs", "query_reads"):
            labels = getattr(self, field)
            if labels is not None and len(labels) != q_len:
                raise ValueError(f"{self.name}: {len(labels)} {field} for {q_len} queries")


@dataclass
class Snapshot:
    """A model run on one input: the input as typed, the decoded output, and the views by name (in order).

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """

    model_name: str
    input_text: str
    output_text: str
    views: dict


# ------------------------------------------------------------------------------- weights


@contextlib.contextmanager
def capture_attention(model):
    """Collect the attention weights of every ``MultiHeadAttention`` inside ``model`` while the block runs.

    Yields a list that fills with ``(module name, weights (batch, heads, q_len, k_len), mask or None)``,
    one entry per call, in call order. A call made with ``need_weights=False`` (the fused kernel,
    which never builds the weights) is recomputed with ``need_weights=True`` on the same inputs by
    ``module.forward`` (no hooks), so the weights are exactly the ones the model attends with.

    Introduced for notebooks/08_transformer_reversal.ipynb (the explorer).
    """
    import torch

    from course_utils.attention import MultiHeadAttention

    records, handles = [], []

    def hook_for(name):
        def hook(module, args, kwargs, output):
            query, key, value = (list(args) + [kwargs.get(k) for k in ("query", "key", "value")])[:3]
            mask = kwargs.get("mask", args[3] if len(args) > 3 else None)
            weights = output[1]
            if weights is None:
                with torch.no_grad():
                    weights = module.forward(query, key, value, mask=mask, need_weights=True)[1]
            records.append((name, weights.detach().cpu().double().numpy(), mask))

        return hook

    for name, module in model.named_modules():
        if isinstance(module, MultiHeadAttention):
            handles.append(module.register_forward_hook(hook_for(name), with_kwargs=True))
    try:
        yield records
    finally:
        for handle in handles:
            handle.remove()


def mask_2d(mask, q_len: int, k_len: int) -> np.ndarray:
    """A captured mask (broadcastable to (batch, heads, q_len, k_len)) for batch 0, head 0: (q_len, k_len).

    ``None`` (no mask) gives all True. Introduced in notebooks/07_seq2seq_rnn_attention.ipynb (the explorer).
    """
    if mask is None:
        return np.ones((q_len, k_len), dtype=bool)
    m = mask.detach().cpu().numpy() if hasattr(mask, "detach") else np.asarray(mask)
    m = m.reshape((1,) * (4 - m.ndim) + m.shape)  # (..., q_len, k_len) -> (batch, heads, q_len, k_len)
    return np.broadcast_to(m[0, 0], (q_len, k_len)).astype(bool)


def row_entropy(weights) -> np.ndarray:
    """``-sum_j w_j ln w_j`` over the last axis, in nats (``0 ln 0 = 0``): :func:`course_utils.heads.attention_entropy`.

    Looked up through the module attribute at every call, so it is the same function lesson 05 measures with.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    from course_utils import heads

    return heads.attention_entropy(np.asarray(weights, dtype=np.float64))


# ------------------------------------------------------------------------------- rendering


def _colour(weight: float) -> str:
    return f"rgba(33, 102, 172, {0.08 + 0.85 * weight:.3f})"


def render_weights_table(view: AttentionView, query: int) -> str:
    """An HTML table of query ``query``'s weights in ``view``: one row per (layer, head), one column per key.

    A mask row shows which keys the query may attend (✓) and which it may not (✗, their cells
    read ``masked``). Each weight cell has ``data-layer``, ``data-head``, ``data-key``,
    ``data-masked`` and ``data-weight`` (the full float); the last column is the row's entropy in
    nats (``data-entropy``) with ``ln(allowed keys)``, the uniform row's, for scale.
    """
    layers, heads, q_len, k_len = view.weights.shape
    if isinstance(query, bool) or not isinstance(query, (int, np.integer)) or not 0 <= query < q_len:
        raise ValueError(f"query must be an int in range(q_len={q_len}) but is {query!r}")
    e = html.escape
    allowed = view.mask[query]
    label = e(str(view.query_labels[query]))
    if view.query_reads is not None:  # a decoder step: labelled by what it writes
        info = f"query {query}: writes <b>{label}</b>, reads <b>{e(str(view.query_reads[query]))}</b>"
    else:
        writes = f" — outputs <b>{e(str(view.query_outputs[query]))}</b>" if view.query_outputs else ""
        info = f"query {query}: <b>{label}</b>{writes}"
    parts = [
        f'<p class="attn-query-info">{info}</p>',
        f'<table class="attn-weights" data-view="{e(view.name)}" data-query="{query}" data-query-label="{label}" '
        'style="border-collapse:collapse;font-family:monospace;font-size:12px">',
        '<thead><tr><th style="text-align:left;padding:2px 6px">layer · head</th>',
    ]
    parts += [f'<th data-key="{j}" style="padding:2px 6px">{e(str(view.key_labels[j]))}</th>' for j in range(k_len)]
    uniform = float(np.log(max(int(allowed.sum()), 1)))
    parts.append(f'<th style="padding:2px 6px">entropy (max {uniform:.3f})</th></tr>')
    parts.append('<tr class="attn-mask"><th style="text-align:left;padding:2px 6px">mask</th>')
    parts += [
        f'<td data-key="{j}" data-allowed="{str(bool(allowed[j])).lower()}" style="text-align:center">'
        f"{'✓' if allowed[j] else '✗'}</td>"
        for j in range(k_len)
    ]
    parts.append("<td></td></tr></thead><tbody>")
    for layer in range(layers):
        for head in range(heads):
            row = view.weights[layer, head, query]
            parts.append(
                f'<tr data-layer="{layer}" data-head="{head}"><th style="text-align:left;padding:2px 6px">'
                f"L{layer + 1} · h{head}</th>"
            )
            for j, w in enumerate(row):
                masked = not allowed[j]
                style = (
                    "background:repeating-linear-gradient(45deg,#eee,#eee 3px,#ccc 3px,#ccc 6px)"
                    if masked
                    else (f"background:{_colour(float(w))}")
                )
                text = "masked" if masked else f"{w:.2f}"
                parts.append(
                    f'<td data-layer="{layer}" data-head="{head}" data-key="{j}" data-masked="{str(masked).lower()}" '
                    f'data-weight="{float(w)!r}" style="{style};padding:2px 6px;text-align:right">{text}</td>'
                )
            entropy = float(row_entropy(row))
            parts.append(
                f'<td class="attn-entropy" data-entropy="{entropy!r}" style="padding:2px 6px">{entropy:.3f}</td>'
            )
            parts.append("</tr>")
    parts.append("</tbody></table>")
    return "\n".join(parts)


def _static_png(view: AttentionView) -> str:
    """Base64 PNG of the view's last layer, one heatmap per head (course_utils.plotting)."""
    import matplotlib.pyplot as plt

    from course_utils import plotting

    fig = plotting.plot_attention_heads(
        view.weights[-1], view.query_labels, view.key_labels, ncols=4, title=f"{view.name}, layer {len(view.weights)}"
    )
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=72)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


# ------------------------------------------------------------------------------- the widget


def _widgets():
    import ipywidgets

    return ipywidgets


class AttentionExplorer:
    """The interactive explorer (an ipywidgets ``VBox`` in :attr:`widget`), displayed by displaying this object.

    Parameters
    ----------
    compute : callable ``str -> Snapshot`` (e.g. ``lambda text: seq2seq_snapshot(model, text)``)
    examples : list of str, the inputs offered in the picker (the first is shown)
    title : str, shown above the controls

    Controls: an example picker, an editable input (press Enter to run the model on it), one
    button per view (e.g. encoder self-attention / cross-attention), one button per query token
    (``attn-query-<i>`` classes). Methods :meth:`set_input`, :meth:`select_view` and
    :meth:`select_query` do what the controls do (for tests and for scripted demos).

    Introduced for notebooks/05_inside_the_heads.ipynb, 07_seq2seq_rnn_attention.ipynb and
    08_transformer_reversal.ipynb.
    """

    def __init__(self, compute: Callable[[str], Snapshot], examples, title: str = "Attention explorer"):
        if not callable(compute):
            raise TypeError(f"compute must be a callable str -> Snapshot but is {type(compute).__name__}")
        examples = [examples] if isinstance(examples, str) else list(examples)
        if not examples or not all(isinstance(x, str) for x in examples):
            raise ValueError(f"examples must be a non-empty list of strings but is {examples!r}")
        w = _widgets()
        self.compute, self.examples = compute, examples
        self.snapshot = compute(examples[0])
        self.view_name = list(self.snapshot.views)[-1]  # the last view: the cross-attention of a Transformer
        self.query = 0
        self.error = ""
        self._title = w.HTML(f"<b>{html.escape(title)}</b>")
        self._picker = w.Dropdown(options=[(x, i) for i, x in enumerate(examples)], value=0, description="example")
        self._text = w.Text(value=examples[0], description="input", continuous_update=False)
        self._views = w.ToggleButtons(
            options=list(self.snapshot.views), value=self.view_name, style={"button_width": "auto"}
        )
        self._queries = w.HBox(layout=w.Layout(flex_flow="row wrap"))
        self._output = w.HTML()
        self._table = w.HTML()
        self._picker.observe(lambda change: self.set_input(self.examples[change["new"]]), names="value")
        self._text.observe(self._on_text, names="value")
        self._views.observe(lambda change: self.select_view(change["new"]), names="value")
        self.widget = w.VBox(
            [self._title, w.HBox([self._picker, self._text]), self._views, self._queries, self._output, self._table]
        )
        self.widget.add_class("attn-explorer")
        self._refresh(rebuild=True)

    # ---- actions -------------------------------------------------------------------------------
    def set_input(self, text: str) -> None:
        """Run the model on ``text``; a bad input is shown in red and the last good snapshot stays."""
        try:
            snapshot = self.compute(text)
        except (TypeError, ValueError) as exc:
            self.error = str(exc)
            self._refresh(rebuild=False)
            return
        self.error = ""
        self.snapshot = snapshot
        if self._text.value != snapshot.input_text:
            self._text.value = snapshot.input_text
        self._views.options = list(snapshot.views)
        if self.view_name not in snapshot.views:
            self.view_name = list(snapshot.views)[-1]
        self._views.value = self.view_name
        self._refresh(rebuild=True)

    def _on_text(self, change) -> None:
        if change["new"] != self.snapshot.input_text:  # not the echo of set_input's own update
            self.set_input(change["new"])

    def select_view(self, name: str) -> None:
        if name not in self.snapshot.views:
            raise ValueError(f"view must be one of {list(self.snapshot.views)} but is {name!r}")
        if name != self.view_name:
            self.view_name = name
            self._views.value = name
            self._refresh(rebuild=True)

    def select_query(self, index: int) -> None:
        q_len = len(self.view.query_labels)
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < q_len:
            raise ValueError(f"index must be an int in range(q_len={q_len}) but is {index!r}")
        self.query = int(index)
        self._refresh(rebuild=False)

    # ---- state ---------------------------------------------------------------------------------
    @property
    def view(self) -> AttentionView:
        return self.snapshot.views[self.view_name]

    @property
    def table_html(self) -> str:
        return self._table.value

    def _refresh(self, rebuild: bool) -> None:
        w = _widgets()
        view = self.view
        self.query = min(self.query, len(view.query_labels) - 1)
        if rebuild:
            buttons = []
            for i, label in enumerate(view.query_labels):
                if view.query_reads is not None:  # a decoder step: "3: writes e", hover "reads d"
                    description, tooltip = f"{i}: writes {label}", f"reads {view.query_reads[i]}"
                else:
                    writes = f" → outputs {view.query_outputs[i]}" if view.query_outputs else ""
                    description, tooltip = f"{i}: {label}", f"query {i}: {label}{writes}"
                button = w.Button(description=description, tooltip=tooltip, layout=w.Layout(width="auto"))
                button.add_class("attn-query")
                button.add_class(f"attn-query-{i}")
                button.on_click(lambda _, i=i: self.select_query(i))
                buttons.append(button)
            self._queries.children = buttons
        for i, button in enumerate(self._queries.children):
            button.button_style = "info" if i == self.query else ""
        error = f'<p style="color:#b00020">{html.escape(self.error)}</p>' if self.error else ""
        self._output.value = (
            f"{error}<p>{html.escape(self.snapshot.model_name)}: input <code>{html.escape(self.snapshot.input_text)}"
            f"</code> → output <code>{html.escape(self.snapshot.output_text)}</code></p>"
        )
        self._table.value = render_weights_table(view, self.query)

    # ---- display -------------------------------------------------------------------------------
    def summary(self) -> str:
        """One line without floats (what nbval compares): model, input, output and views."""
        views = ", ".join(
            f"{name} ({v.weights.shape[0]} layer(s) x {v.weights.shape[1]} head(s))"
            for name, v in self.snapshot.views.items()
        )
        return (
            f"AttentionExplorer: {self.snapshot.model_name} on {self.snapshot.input_text!r} -> "
            f"{self.snapshot.output_text!r}; {views}"
        )

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        bundle["text/plain"] = self.summary()
        bundle["image/png"] = _static_png(self.view)
        return bundle
