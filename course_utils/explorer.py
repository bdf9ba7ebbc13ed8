"""An attention explorer for the trained models: pick an input, click a query, read its weights.

Introduced for ``notebooks/05_inside_the_heads.ipynb`` (the role model), ``07_seq2seq_rnn_attention``
(the GRU with additive attention: one "head") and ``08_transformer_reversal`` (the Transformer:
layers x heads, encoder self-attention, causal decoder self-attention and cross-attention).

Two layers, so that the numbers can be tested without a browser:

- :func:`role_model_snapshot` and :func:`seq2seq_snapshot` run a model on one input and return a
  :class:`Snapshot`: every attention block's weights ``(layers, heads, q_len, k_len)``, its mask
  (True = may attend), the query and key labels, and what each query position outputs.
  :func:`capture_attention` collects the weights of every
  :class:`course_utils.attention.MultiHeadAttention` inside a model, even those called with
  ``need_weights=False``, by recomputing them in a forward hook.
- :class:`AttentionExplorer` (ipywidgets, no custom JavaScript, nothing fetched) shows a snapshot:
  an example picker and an editable input, one button per view and per query token, and for the
  chosen query a table of its weights over the keys, one row per layer and head, with the mask,
  each row's entropy and the decoded output. :func:`render_weights_table` writes that table; each
  weight cell carries ``data-layer``, ``data-head``, ``data-key`` and ``data-weight`` attributes.

Where widgets do not render (nbval, RISE, the site, a static viewer), the explorer's output is a
static figure of the view it shows (``image/png``: every head of the last layer; it opens on the last
view, the cross-attention of a Transformer) and a one-line text summary without floats, so stored
outputs stay deterministic.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "AttentionView",
    "Snapshot",
    "capture_attention",
    "role_model_snapshot",
    "parse_role_sequence",
    "seq2seq_snapshot",
    "row_entropy",
    "render_weights_table",
    "AttentionExplorer",
    "explore_role_model",
    "explore_seq2seq",
]


@dataclass
class AttentionView:
    """One kind of attention block of a model, on one input.

    ``weights`` is ``(layers, heads, q_len, k_len)``; ``mask`` is ``(q_len, k_len)``, True = may
    attend; ``query_outputs`` (optional, ``q_len`` strings) says what each query position outputs.
    """

    name: str
    query_labels: list
    key_labels: list
    weights: np.ndarray
    mask: np.ndarray
    query_outputs: list | None = None

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


@dataclass
class Snapshot:
    """A model run on one input: the input as typed, the decoded output, and the views by name (in order)."""

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


def _mask_2d(mask, q_len: int, k_len: int) -> np.ndarray:
    """A captured mask (broadcastable to (batch, heads, q_len, k_len)) for batch 0, head 0: (q_len, k_len)."""
    if mask is None:
        return np.ones((q_len, k_len), dtype=bool)
    m = mask.detach().cpu().numpy() if hasattr(mask, "detach") else np.asarray(mask)
    m = m.reshape((1,) * (4 - m.ndim) + m.shape)  # (..., q_len, k_len) -> (batch, heads, q_len, k_len)
    return np.broadcast_to(m[0, 0], (q_len, k_len)).astype(bool)


def row_entropy(weights) -> np.ndarray:
    """``-sum_j w_j ln w_j`` over the last axis, in nats (``0 ln 0 = 0``), as in lesson 05."""
    w = np.asarray(weights, dtype=np.float64)
    logs = np.log(w, out=np.zeros_like(w), where=w > 0)
    return -(w * logs).sum(axis=-1)


# ------------------------------------------------------------------------------- lesson 05


def parse_role_sequence(text: str, config) -> list[int]:
    """``"Ar Bg Ab"`` -> token ids of the role task: shape letter then colour letter, separated by spaces.

    Introduced for notebooks/05_inside_the_heads.ipynb (the explorer).
    """
    from course_utils.heads import _COLOUR_NAMES, _SHAPE_NAMES

    if not isinstance(text, str):
        raise TypeError(f"sequence must be a string like 'Ar Bg Ab' but is {type(text).__name__}")
    words = text.split()
    shapes, colours = _SHAPE_NAMES[: config.num_shapes], _COLOUR_NAMES[: config.num_colours]
    if not 1 <= len(words) <= config.seq_len:
        raise ValueError(f"sequence must hold 1 to {config.seq_len} tokens but holds {len(words)}")
    ids = []
    for word in words:
        if len(word) != 2 or word[0] not in shapes or word[1] not in colours:
            raise ValueError(
                f"sequence token {word!r} is not a shape in {shapes!r} followed by a colour in {colours!r} (e.g. 'Ar')"
            )
        ids.append(shapes.index(word[0]) * config.num_colours + colours.index(word[1]))
    return ids


def role_model_snapshot(model, text: str) -> Snapshot:
    """Run lesson 05's :class:`course_utils.heads.RoleModel` on ``text`` (e.g. ``"Ar Bg Ab Bk"``).

    One view, ``"self-attention"``: weights ``(1, heads, seq_len, seq_len)`` as the model returns
    them, no mask; each query's output is its three predicted colours (previous, first, matching).

    Introduced for notebooks/05_inside_the_heads.ipynb.
    """
    import torch

    from course_utils.heads import _COLOUR_NAMES, TARGETS

    ids = parse_role_sequence(text, model.config)
    labels = text.split()
    with torch.no_grad():
        logits, weights = model(torch.tensor([ids]))  # weights: (1, heads, seq_len, seq_len)
    predicted = {name: logits[name][0].argmax(-1).tolist() for name in TARGETS}  # name -> seq_len colour ids
    outputs = [" ".join(f"{name} {_COLOUR_NAMES[predicted[name][i]]}" for name in TARGETS) for i in range(len(ids))]
    view = AttentionView("self-attention", labels, labels, weights.double().numpy(), np.ones((len(ids),) * 2), outputs)
    per_position = " ".join("".join(_COLOUR_NAMES[predicted[name][i]] for name in TARGETS) for i in range(len(ids)))
    output_text = f"colours (previous, first, matching) {per_position}"
    return Snapshot("RoleModel", " ".join(labels), output_text, {view.name: view})


# ------------------------------------------------------------------------------- lessons 07, 08

_VIEW_NAMES = {
    "encoder_layers.self_attn": "encoder self-attention",
    "decoder_layers.self_attn": "decoder self-attention (causal)",
    "decoder_layers.cross_attn": "cross-attention",
}


def _token_label(i: int) -> str:
    from course_utils import data

    return data.TOKENS[i] if i < 3 else data.decode([i])


def seq2seq_snapshot(model, text: str) -> Snapshot:
    """Reverse ``text`` (symbols ``a`` to ``j``) with a lesson 07/08 model and collect its attention.

    - ``AttentionGRUSeq2Seq``: one view, ``"additive attention"``: ``greedy_decode``'s weights
      ``(steps, src_len)`` as one layer with one head; each decoder step is a query.
    - ``TransformerSeq2Seq``: greedy decoding gives the output; then one teacher-forced forward pass
      on ``BOS + output`` (the same computation, causal) collects every layer's weights:
      encoder self-attention, decoder self-attention (causal mask) and cross-attention.

    Query positions of the decoder are labelled with the token they read (``<bos>``, then the
    previous output); ``query_outputs`` holds the token each one writes.

    Introduced for notebooks/07_seq2seq_rnn_attention.ipynb and 08_transformer_reversal.ipynb.
    """
    import torch

    from course_utils import data
    from course_utils.reversal import decoding, rnn, transformer

    if not isinstance(text, str):
        raise TypeError(f"text must be a string of the symbols {data.SYMBOLS!r} but is {type(text).__name__}")
    text = text.strip()
    if not text:
        raise ValueError(f"text is empty: type a sequence of the symbols {data.SYMBOLS!r}")
    batch = data.collate([data.encode(text)])
    if isinstance(model, rnn.GRUSeq2Seq):
        raise ValueError("model is a GRU without attention: it has no attention weights to explore")
    out, weights = decoding.greedy_decode(model, batch.src, batch.src_lengths, return_attention=True)
    steps = out.shape[1]
    written = [_token_label(i) for i in out[0].tolist()]
    read = ["<bos>", *written[:-1]]
    src_labels = list(text)
    name = type(model).__name__
    output_text = data.decode(out[0])
    if isinstance(model, rnn.AttentionGRUSeq2Seq):
        w = weights[0].double().numpy()[None, None]  # (steps, src_len) -> (1 layer, 1 head, steps, src_len)
        view = AttentionView("additive attention", read, src_labels, w, np.ones((steps, len(text))), written)
        return Snapshot(name, text, output_text, {view.name: view})
    if not isinstance(model, transformer.TransformerSeq2Seq):
        raise TypeError(f"model must be one of course_utils.reversal's attention models but is {name}")
    decoder_input = torch.cat([torch.tensor([[data.BOS]]), out[:, :-1]], dim=1)  # (1, steps): BOS + output
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), capture_attention(model) as records:
            model(batch.src, batch.src_lengths, decoder_input)
    finally:
        model.train(was_training)
    grouped: dict = {}
    for module_name, w, mask in records:
        kind = re.sub(r"\.\d+\.", ".", module_name)  # "decoder_layers.0.cross_attn" -> "decoder_layers.cross_attn"
        grouped.setdefault(kind, []).append((w[0], mask))  # w[0]: (heads, q_len, k_len)
    views = {}
    for kind, layers in grouped.items():
        view_name = _VIEW_NAMES.get(kind, kind)
        stacked = np.stack([w for w, _ in layers])  # layers x (heads, q_len, k_len) -> (layers, heads, q_len, k_len)
        q_len, k_len = stacked.shape[-2:]
        encoder = kind.startswith("encoder")
        queries = src_labels if encoder else read
        keys = src_labels if encoder or kind.endswith("cross_attn") else read
        views[view_name] = AttentionView(
            view_name, queries, keys, stacked, _mask_2d(layers[0][1], q_len, k_len), None if encoder else written
        )
    return Snapshot(name, text, output_text, views)


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
    writes = f" — outputs <b>{e(str(view.query_outputs[query]))}</b>" if view.query_outputs else ""
    parts = [
        f'<p class="attn-query-info">query {query}: <b>{label}</b>{writes}</p>',
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
                writes = f" → outputs {view.query_outputs[i]}" if view.query_outputs else ""
                button = w.Button(
                    description=f"{i}: {label}", tooltip=f"query {i}: {label}{writes}", layout=w.Layout(width="auto")
                )
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


def explore_role_model(model, task=None, num_examples: int = 6) -> AttentionExplorer:
    """The explorer on lesson 05's trained :class:`course_utils.heads.RoleModel`, examples from a role task.

    Introduced for notebooks/05_inside_the_heads.ipynb.
    """
    from course_utils import heads

    if task is None:
        cfg = model.config
        task = heads.make_role_task(num_examples, cfg.seq_len, cfg.num_shapes, cfg.num_colours, seed=123)
    n = min(num_examples, task.tokens.shape[0])
    examples = [" ".join(heads.token_labels(task, i)) for i in range(n)]
    return AttentionExplorer(
        lambda text: role_model_snapshot(model, text), examples, "Attention explorer: the role model's heads"
    )


def explore_seq2seq(model, examples) -> AttentionExplorer:
    """The explorer on a lesson 07/08 reversal model; ``examples`` are strings of the symbols ``a`` to ``j``.

    Introduced for notebooks/07_seq2seq_rnn_attention.ipynb and 08_transformer_reversal.ipynb.
    """
    return AttentionExplorer(
        lambda text: seq2seq_snapshot(model, text), examples, f"Attention explorer: {type(model).__name__}"
    )
