"""Blind battery, lesson 05 (inside the heads): wrong answers and wrong predictions."""

HEAD = '''import numpy as np
import torch

from course_utils import attention, heads, role_task
'''

SWITCH_OFF = '''

def switch_off(concat, heads_off, num_heads):
    out = concat.clone()
    d_head = concat.shape[-1] // num_heads
    for h in heads_off:
        out[..., h * d_head : (h + 1) * d_head] = 0
    return out
'''


def _entropy(body):
    return HEAD + '''

def row_entropy(row):
''' + body


def _switch(body):
    return HEAD + '''

def switch_off(concat, heads_off, num_heads):
''' + body


def _roles(body):
    return HEAD + '''

def role_scores(weights):
    w = weights.detach().cpu().numpy() if isinstance(weights, torch.Tensor) else np.asarray(weights)
''' + body


def _model_input(body):
    return HEAD + '''

def model_input(model, tokens):
''' + body


def _matching(body):
    return HEAD + '''

def matching_score(weights, shapes):
    w = weights.detach().cpu().numpy() if isinstance(weights, torch.Tensor) else np.asarray(weights)
    s = shapes.detach().cpu().numpy() if isinstance(shapes, torch.Tensor) else np.asarray(shapes)
''' + body


def _ablation(body):
    return HEAD + SWITCH_OFF + '''

def ablation_table(model, task):
''' + body


CASES = [
    # ---- 05.row_entropy -----------------------------------------------------------------------------
    {
        "id": "05-001",
        "exercise": "05.row_entropy",
        "mistake": "log base 2 (bits) instead of the natural log (nats)",
        "kind": "log_base",
        "source": _entropy('''    w = row[row > 0]
    return float(-(w * np.log2(w)).sum())
'''),
    },
    {
        "id": "05-002",
        "exercise": "05.row_entropy",
        "mistake": "no 0 * ln 0 = 0 rule: a row with a zero weight gives nan",
        "kind": "zero_log_zero",
        "source": _entropy('''    return float(-(row * np.log(row)).sum())
'''),
    },
    {
        "id": "05-003",
        "exercise": "05.row_entropy",
        "mistake": "divides by ln(k_len) (a normalized entropy in [0, 1]) though the docstring asks for nats",
        "kind": "normalized",
        "source": _entropy('''    w = row[row > 0]
    return float(-(w * np.log(w)).sum() / np.log(len(row)))
'''),
    },
    {
        "id": "05-004",
        "exercise": "05.row_entropy",
        "mistake": "forgets the minus sign: returns sum w ln w, which is negative",
        "kind": "sign",
        "source": _entropy('''    w = row[row > 0]
    return float((w * np.log(w)).sum())
'''),
    },
    {
        "id": "05-005",
        "exercise": "05.row_entropy",
        "mistake": "mean over the keys instead of the sum: -mean(w ln w)",
        "kind": "mean_not_sum",
        "source": _entropy('''    safe = np.where(row > 0, row, 1.0)
    return float(-(row * np.log(safe)).mean())
'''),
    },
    {
        "id": "05-006",
        "exercise": "05.row_entropy",
        "mistake": "returns a torch tensor (computed with torch.special.entr) instead of a Python float",
        "kind": "wrong_type",
        "source": _entropy('''    return torch.special.entr(torch.as_tensor(row)).sum()
'''),
    },
    # ---- 05.switch_off ------------------------------------------------------------------------------
    {
        "id": "05-007",
        "exercise": "05.switch_off",
        "mistake": "zeroes the heads in place: concat itself is changed",
        "kind": "in_place",
        "source": _switch('''    d_head = concat.shape[-1] // num_heads
    for h in heads_off:
        concat[..., h * d_head : (h + 1) * d_head] = 0
    return concat
'''),
    },
    {
        "id": "05-008",
        "exercise": "05.switch_off",
        "mistake": "zeroes positions (dim 1) instead of features",
        "kind": "wrong_axis",
        "source": _switch('''    out = concat.clone()
    d_head = concat.shape[-1] // num_heads
    for h in heads_off:
        out[:, h * d_head : (h + 1) * d_head] = 0
    return out
'''),
    },
    {
        "id": "05-009",
        "exercise": "05.switch_off",
        "mistake": "slice one feature too long ((h + 1) * d_head + 1): also zeroes the next head's first feature",
        "kind": "off_by_one",
        "source": _switch('''    out = concat.clone()
    d_head = concat.shape[-1] // num_heads
    for h in heads_off:
        out[..., h * d_head : (h + 1) * d_head + 1] = 0
    return out
'''),
    },
    {
        "id": "05-010",
        "exercise": "05.switch_off",
        "mistake": "keeps only the listed heads (zeroes every other head)",
        "kind": "inverted_selection",
        "source": _switch('''    out = torch.zeros_like(concat)
    d_head = concat.shape[-1] // num_heads
    for h in heads_off:
        out[..., h * d_head : (h + 1) * d_head] = concat[..., h * d_head : (h + 1) * d_head]
    return out
'''),
    },
    {
        "id": "05-011",
        "exercise": "05.switch_off",
        "mistake": "takes head h's features as the strided set h, h + heads, ... instead of one block",
        "kind": "head_split_order",
        "source": _switch('''    out = concat.clone()
    for h in heads_off:
        out[..., h::num_heads] = 0
    return out
'''),
    },
    {
        "id": "05-012",
        "exercise": "05.switch_off",
        "mistake": "uses d_head = num_heads (confuses the two sizes)",
        "kind": "wrong_size",
        "source": _switch('''    out = concat.clone()
    for h in heads_off:
        out[..., h * num_heads : (h + 1) * num_heads] = 0
    return out
'''),
    },
    # ---- 05.role_scores -----------------------------------------------------------------------------
    {
        "id": "05-013",
        "exercise": "05.role_scores",
        "mistake": "previous score from the diagonal above (key i + 1): the next token, not the previous one",
        "kind": "diagonal_offset",
        "source": _roles('''    previous = np.diagonal(w, offset=1, axis1=2, axis2=3).mean(axis=(0, 2))
    first = w[:, :, 1:, 0].mean(axis=(0, 2))
    self_score = np.diagonal(w, axis1=2, axis2=3).mean(axis=(0, 2))
    return previous, first, self_score
'''),
    },
    {
        "id": "05-014",
        "exercise": "05.role_scores",
        "mistake": "first score averaged over every query, including query 0 (which is itself)",
        "kind": "off_by_one",
        "source": _roles('''    previous = np.diagonal(w, offset=-1, axis1=2, axis2=3).mean(axis=(0, 2))
    first = w[:, :, :, 0].mean(axis=(0, 2))
    self_score = np.diagonal(w, axis1=2, axis2=3).mean(axis=(0, 2))
    return previous, first, self_score
'''),
    },
    {
        "id": "05-015",
        "exercise": "05.role_scores",
        "mistake": "averages over the heads instead of over the sequences: arrays of shape (batch,)",
        "kind": "wrong_axis",
        "source": _roles('''    previous = np.diagonal(w, offset=-1, axis1=2, axis2=3).mean(axis=(1, 2))
    first = w[:, :, 1:, 0].mean(axis=(1, 2))
    self_score = np.diagonal(w, axis1=2, axis2=3).mean(axis=(1, 2))
    return previous, first, self_score
'''),
    },
    {
        "id": "05-016",
        "exercise": "05.role_scores",
        "mistake": "previous: sums the weights on key i - 1 and divides by seq_len instead of by the seq_len - 1 queries",
        "kind": "off_by_one",
        "source": _roles('''    seq_len = w.shape[-1]
    previous = np.diagonal(w, offset=-1, axis1=2, axis2=3).sum(axis=2).mean(axis=0) / seq_len
    first = w[:, :, 1:, 0].mean(axis=(0, 2))
    self_score = np.diagonal(w, axis1=2, axis2=3).mean(axis=(0, 2))
    return previous, first, self_score
'''),
    },
    {
        "id": "05-017",
        "exercise": "05.role_scores",
        "mistake": "returns (self, previous, first): the docstring's order mixed up",
        "kind": "return_order",
        "source": _roles('''    previous = np.diagonal(w, offset=-1, axis1=2, axis2=3).mean(axis=(0, 2))
    first = w[:, :, 1:, 0].mean(axis=(0, 2))
    self_score = np.diagonal(w, axis1=2, axis2=3).mean(axis=(0, 2))
    return self_score, previous, first
'''),
    },
    {
        "id": "05-018",
        "exercise": "05.role_scores",
        "mistake": "first score reads row 0 (query 0's weights on the keys) instead of column 0 (the key 0 of every query)",
        "kind": "row_column_confusion",
        "source": _roles('''    previous = np.diagonal(w, offset=-1, axis1=2, axis2=3).mean(axis=(0, 2))
    first = w[:, :, 0, 1:].mean(axis=(0, 2))
    self_score = np.diagonal(w, axis1=2, axis2=3).mean(axis=(0, 2))
    return previous, first, self_score
'''),
    },
    # ---- 05.model_input -----------------------------------------------------------------------------
    {
        "id": "05-019",
        "exercise": "05.model_input",
        "mistake": "forgets the positions: returns the token embedding alone",
        "kind": "missing_positions",
        "source": _model_input('''    return model.token_embedding(tokens)
'''),
    },
    {
        "id": "05-020",
        "exercise": "05.model_input",
        "mistake": "concatenates token and position embeddings (2 * d_model features) instead of adding them",
        "kind": "concat_not_add",
        "source": _model_input('''    positions = torch.arange(tokens.shape[1])
    pos = model.position_embedding(positions).expand(tokens.shape[0], -1, -1)
    return torch.cat([model.token_embedding(tokens), pos], dim=-1)
'''),
    },
    {
        "id": "05-021",
        "exercise": "05.model_input",
        "mistake": "positions counted from 1 (arange(1, seq_len + 1)): every token gets the next position's row, and a full-length sequence crashes",
        "kind": "off_by_one",
        "source": _model_input('''    positions = torch.arange(1, tokens.shape[1] + 1)
    return model.token_embedding(tokens) + model.position_embedding(positions)
'''),
    },
    {
        "id": "05-022",
        "exercise": "05.model_input",
        "mistake": "scales the token embedding by sqrt(d_model), a habit from the Transformer paper that this model does not have",
        "kind": "extra_scale",
        "source": _model_input('''    d_model = model.token_embedding.embedding_dim
    positions = torch.arange(tokens.shape[1])
    return model.token_embedding(tokens) * d_model**0.5 + model.position_embedding(positions)
'''),
    },
    {
        "id": "05-023",
        "exercise": "05.model_input",
        "mistake": "positions in reverse order (counts from the end of the sequence)",
        "kind": "position_order",
        "source": _model_input('''    positions = torch.arange(tokens.shape[1]).flip(0)
    return model.token_embedding(tokens) + model.position_embedding(positions)
'''),
    },
    {
        "id": "05-024",
        "exercise": "05.model_input",
        "mistake": "multiplies the token and position embeddings instead of adding them",
        "kind": "wrong_operation",
        "source": _model_input('''    positions = torch.arange(tokens.shape[1])
    return model.token_embedding(tokens) * model.position_embedding(positions)
'''),
    },
    # ---- 05.matching_score --------------------------------------------------------------------------
    {
        "id": "05-025",
        "exercise": "05.matching_score",
        "mistake": "the same-shape mask includes the query itself: adds the self weight to the twin's",
        "kind": "includes_self",
        "source": _matching('''    same = s[:, :, None] == s[:, None, :]
    return (w * same[:, None]).sum(axis=-1).mean(axis=(0, 2))
'''),
    },
    {
        "id": "05-026",
        "exercise": "05.matching_score",
        "mistake": "finds the twin with list.index(shape), which returns the first occurrence: the query itself for the first of a pair",
        "kind": "first_occurrence",
        "source": _matching('''    batch, num_heads, seq_len, _ = w.shape
    total = np.zeros(num_heads)
    for b in range(batch):
        row = s[b].tolist()
        for i in range(seq_len):
            j = row.index(row[i])
            total += w[b, :, i, j]
    return total / (batch * seq_len)
'''),
    },
    {
        "id": "05-027",
        "exercise": "05.matching_score",
        "mistake": "uses the first sequence's shapes for every sequence of the batch",
        "kind": "batch_mixing",
        "source": _matching('''    same = (s[0][:, None] == s[0][None, :]) & ~np.eye(s.shape[1], dtype=bool)
    return (w * same[None, None]).sum(axis=-1).mean(axis=(0, 2))
'''),
    },
    {
        "id": "05-028",
        "exercise": "05.matching_score",
        "mistake": "sums over the queries instead of averaging: scores grow with seq_len",
        "kind": "sum_not_mean",
        "source": _matching('''    same = (s[:, :, None] == s[:, None, :]) & ~np.eye(s.shape[1], dtype=bool)
    return (w * same[:, None]).sum(axis=(-1, -2)).mean(axis=0)
'''),
    },
    {
        "id": "05-029",
        "exercise": "05.matching_score",
        "mistake": "works in torch and returns a tensor of shape (heads,) instead of a NumPy array",
        "kind": "wrong_type",
        "source": HEAD + '''

def matching_score(weights, shapes):
    weights, shapes = torch.as_tensor(weights), torch.as_tensor(shapes)
    seq_len = shapes.shape[1]
    same = (shapes[:, :, None] == shapes[:, None, :]) & ~torch.eye(seq_len, dtype=torch.bool)
    return (weights * same[:, None]).sum(dim=-1).mean(dim=(0, 2))
''',
    },
    # ---- 05.ablation_table --------------------------------------------------------------------------
    {
        "id": "05-030",
        "exercise": "05.ablation_table",
        "mistake": "records the accuracy with the head off instead of the accuracy lost",
        "kind": "wrong_quantity",
        "source": _ablation('''    rows = []
    for h in range(model.config.num_heads):
        with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
            acc = role_task.role_accuracy(model, task)
        rows.append([acc[name] for name in role_task.TARGETS])
    return np.array(rows)
'''),
    },
    {
        "id": "05-031",
        "exercise": "05.ablation_table",
        "mistake": "sign flipped: accuracy with the head off minus accuracy with every head on",
        "kind": "sign",
        "source": _ablation('''    base = role_task.role_accuracy(model, task)
    rows = []
    for h in range(model.config.num_heads):
        with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
            acc = role_task.role_accuracy(model, task)
        rows.append([acc[name] - base[name] for name in role_task.TARGETS])
    return np.array(rows)
'''),
    },
    {
        "id": "05-032",
        "exercise": "05.ablation_table",
        "mistake": "switches off heads 0 .. h cumulatively instead of head h alone",
        "kind": "cumulative",
        "source": _ablation('''    base = role_task.role_accuracy(model, task)
    rows = []
    for h in range(model.config.num_heads):
        with heads.ablate_heads(model.attention, list(range(h + 1)), switch_off=switch_off):
            acc = role_task.role_accuracy(model, task)
        rows.append([base[name] - acc[name] for name in role_task.TARGETS])
    return np.array(rows)
'''),
    },
    {
        "id": "05-033",
        "exercise": "05.ablation_table",
        "mistake": "returns the table transposed: (3, heads)",
        "kind": "transpose",
        "source": _ablation('''    base = role_task.role_accuracy(model, task)
    rows = []
    for h in range(model.config.num_heads):
        with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
            acc = role_task.role_accuracy(model, task)
        rows.append([base[name] - acc[name] for name in role_task.TARGETS])
    return np.array(rows).T
'''),
    },
    {
        "id": "05-034",
        "exercise": "05.ablation_table",
        "mistake": "orders the columns by sorted(acc) (alphabetical: first, matching, previous) instead of role_task.TARGETS",
        "kind": "column_order",
        "source": _ablation('''    base = role_task.role_accuracy(model, task)
    rows = []
    for h in range(model.config.num_heads):
        with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
            acc = role_task.role_accuracy(model, task)
        rows.append([base[name] - acc[name] for name in sorted(acc)])
    return np.array(rows)
'''),
    },
    {
        "id": "05-035",
        "exercise": "05.ablation_table",
        "mistake": "switches off every head except h (keeps only head h)",
        "kind": "inverted_selection",
        "source": _ablation('''    num_heads = model.config.num_heads
    base = role_task.role_accuracy(model, task)
    rows = []
    for h in range(num_heads):
        others = [g for g in range(num_heads) if g != h]
        with heads.ablate_heads(model.attention, others, switch_off=switch_off):
            acc = role_task.role_accuracy(model, task)
        rows.append([base[name] - acc[name] for name in role_task.TARGETS])
    return np.array(rows)
'''),
    },
    # ---- predictions ---------------------------------------------------------------------------------
    {"id": "05-p01", "prediction": "05.focused_below_1_5", "mistake": "reads 1.5 as a sensible threshold whatever k_len", "kind": "entropy_scale", "value": "some"},
    {"id": "05-p02", "prediction": "05.focused_below_1_5", "mistake": "thinks near-uniform rows are far above 1.5", "kind": "entropy_scale", "value": "none"},
    {"id": "05-p03", "prediction": "05.same_self_head", "mistake": "believes the 'self-attentive' label belongs to the head", "kind": "untrained_roles", "value": True},
    {"id": "05-p04", "prediction": "05.previous_key", "mistake": "the token after the query", "kind": "off_by_one", "value": 6},
    {"id": "05-p05", "prediction": "05.first_key", "mistake": "counts positions from 1", "kind": "off_by_one", "value": 1},
    {"id": "05-p06", "prediction": "05.matching_key", "mistake": "the query itself has shape C", "kind": "includes_self", "value": 5},
    {"id": "05-p07", "prediction": "05.role_heads_off", "mistake": "without the head the answer is always wrong", "kind": "chance_level", "value": "about 0"},
    {"id": "05-p08", "prediction": "05.role_heads_off", "mistake": "other heads take over", "kind": "redundancy", "value": "about the same"},
    {"id": "05-p09", "prediction": "05.deep_over_wide", "mistake": "eight heads or eight layers: the same number of attention units, so the same parameters", "kind": "per_head_count", "value": 1},
    {"id": "05-p10", "prediction": "05.deep_over_wide", "mistake": "8 layers times 8 heads' worth", "kind": "per_head_count", "value": 64},
]
