"""Blind battery 4, lesson 05: wrong answers a student could give (see README.md)."""

_HEAD = "import numpy as np\nimport torch\n"

_SWITCH_OFF = """

def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    out = concat.clone()
    for h in heads_off:
        out[..., h * d_head : (h + 1) * d_head] = 0
    return out
"""


def _case(cid, exercise, mistake, kind, source):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": source}


def _pred(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # row_entropy
    _case(
        "05-001",
        "05.row_entropy",
        "log of zero weights gives nan (0 * -inf) instead of 0",
        "zero-log",
        _HEAD
        + """

def row_entropy(row):
    return float(-(row * np.log(row)).sum())
""",
    ),
    _case(
        "05-002",
        "05.row_entropy",
        "uses log2 (bits) instead of the natural log (nats)",
        "wrong-base",
        _HEAD
        + """

def row_entropy(row):
    p = row[row > 0]
    return float(-(p * np.log2(p)).sum())
""",
    ),
    _case(
        "05-003",
        "05.row_entropy",
        "adds an epsilon of 1e-3 to every weight before the log: the "
        "entropy is biased, and a one-hot row gets a nonzero entropy",
        "epsilon",
        _HEAD
        + """

def row_entropy(row):
    return float(-np.sum((row + 1e-3) * np.log(row + 1e-3)))
""",
    ),
    _case(
        "05-004",
        "05.row_entropy",
        "forgets the minus sign",
        "sign",
        _HEAD
        + """

def row_entropy(row):
    p = row[row > 0]
    return float(np.sum(p * np.log(p)))
""",
    ),
    _case(
        "05-005",
        "05.row_entropy",
        "returns a 0-d NumPy array instead of a Python float",
        "wrong-type",
        _HEAD
        + """

def row_entropy(row):
    logs = np.log(np.where(row > 0, row, 1.0))
    return np.array(-np.sum(row * logs))
""",
    ),
    _case(
        "05-006",
        "05.row_entropy",
        "normalizes by log(len(row)) (entropy as a share of the maximum)",
        "normalized",
        _HEAD
        + """

def row_entropy(row):
    p = row[row > 0]
    return float(-(p * np.log(p)).sum() / np.log(len(row)))
""",
    ),
    # switch_off
    _case(
        "05-007",
        "05.switch_off",
        "zeroes the heads in place: concat itself changes",
        "in-place",
        _HEAD
        + """

def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    for h in heads_off:
        concat[..., h * d_head : (h + 1) * d_head] = 0
    return concat
""",
    ),
    _case(
        "05-008",
        "05.switch_off",
        "slices h*d_head to h*d_head + d_head - 1: the last feature of each head stays on",
        "off-by-one",
        _HEAD
        + """

def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    out = concat.clone()
    for h in heads_off:
        out[..., h * d_head : h * d_head + d_head - 1] = 0
    return out
""",
    ),
    _case(
        "05-009",
        "05.switch_off",
        "zeroes positions (axis 1) instead of features",
        "wrong-axis",
        _HEAD
        + """

def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    out = concat.clone()
    for h in heads_off:
        out[:, h * d_head : (h + 1) * d_head] = 0
    return out
""",
    ),
    _case(
        "05-010",
        "05.switch_off",
        "interleaved heads: zeroes every num_heads-th feature starting at h",
        "interleaved",
        _HEAD
        + """

def switch_off(concat, heads_off, num_heads):
    out = concat.clone()
    for h in heads_off:
        out[..., h::num_heads] = 0
    return out
""",
    ),
    _case(
        "05-011",
        "05.switch_off",
        "copies with .detach().clone(): the result no longer carries the gradient",
        "detach",
        _HEAD
        + """

def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    out = concat.detach().clone()
    for h in heads_off:
        out[..., h * d_head : (h + 1) * d_head] = 0.0
    return out
""",
    ),
    _case(
        "05-012",
        "05.switch_off",
        "switches off only heads_off[0], the first listed head",
        "first-only",
        _HEAD
        + """

def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    out = concat.clone()
    if len(heads_off):
        h = heads_off[0]
        out[..., h * d_head : (h + 1) * d_head] = 0
    return out
""",
    ),
    # role_scores
    _case(
        "05-013",
        "05.role_scores",
        "previous = diagonal offset +1 (key i + 1, the next token)",
        "offset-sign",
        _HEAD
        + """

def role_scores(weights):
    w = torch.as_tensor(weights).double()
    n = w.shape[-1]
    previous = torch.diagonal(w, offset=1, dim1=-2, dim2=-1).mean(dim=(0, 2))
    first = w[..., 1:, 0].mean(dim=(0, 2))
    self_ = torch.diagonal(w, dim1=-2, dim2=-1).mean(dim=(0, 2))
    return previous.numpy(), first.numpy(), self_.numpy()
""",
    ),
    _case(
        "05-014",
        "05.role_scores",
        "first includes query 0 (which reads key 0 as itself)",
        "off-by-one",
        _HEAD
        + """

def role_scores(weights):
    w = np.asarray(weights, dtype=float)
    previous = np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=(0, 2))
    first = w[..., :, 0].mean(axis=(0, 2))
    self_ = np.diagonal(w, axis1=-2, axis2=-1).mean(axis=(0, 2))
    return previous, first, self_
""",
    ),
    _case(
        "05-015",
        "05.role_scores",
        "averages over the heads instead of the sequences: shape (batch,)",
        "wrong-axis",
        _HEAD
        + """

def role_scores(weights):
    w = np.asarray(weights, dtype=float)
    previous = np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=(1, 2))
    first = w[..., 1:, 0].mean(axis=(1, 2))
    self_ = np.diagonal(w, axis1=-2, axis2=-1).mean(axis=(1, 2))
    return previous, first, self_
""",
    ),
    _case(
        "05-016",
        "05.role_scores",
        "averages the whole block w[..., 1:, :-1] instead of its diagonal (key i - 1 of query i)",
        "block-mean",
        _HEAD
        + """

def role_scores(weights):
    w = np.asarray(torch.as_tensor(weights).detach(), dtype=float)
    previous = w[..., 1:, :-1].mean(axis=(0, 2, 3))
    first = w[..., 1:, 0].mean(axis=(0, 2))
    self_ = np.diagonal(w, axis1=-2, axis2=-1).mean(axis=(0, 2))
    return previous, first, self_
""",
    ),
    _case(
        "05-017",
        "05.role_scores",
        "returns torch tensors instead of NumPy arrays",
        "wrong-type",
        _HEAD
        + """

def role_scores(weights):
    w = torch.as_tensor(weights).double()
    previous = torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 2))
    first = w[..., 1:, 0].mean(dim=(0, 2))
    self_ = torch.diagonal(w, dim1=-2, dim2=-1).mean(dim=(0, 2))
    return previous, first, self_
""",
    ),
    _case(
        "05-018",
        "05.role_scores",
        "returns (self, previous, first) in the wrong order",
        "return-order",
        _HEAD
        + """

def role_scores(weights):
    w = np.asarray(weights, dtype=float)
    previous = np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=(0, 2))
    first = w[..., 1:, 0].mean(axis=(0, 2))
    self_ = np.diagonal(w, axis1=-2, axis2=-1).mean(axis=(0, 2))
    return self_, previous, first
""",
    ),
    # model_input
    _case(
        "05-019",
        "05.model_input",
        "forgets the position embedding",
        "missing-term",
        _HEAD
        + """

def model_input(model, tokens):
    return model.token_embedding(tokens)
""",
    ),
    _case(
        "05-020",
        "05.model_input",
        "looks up positions 1..seq_len instead of 0..seq_len-1",
        "off-by-one",
        _HEAD
        + """

def model_input(model, tokens):
    positions = torch.arange(1, tokens.shape[1] + 1) % model.config.seq_len
    return model.token_embedding(tokens) + model.position_embedding(positions)
""",
    ),
    _case(
        "05-021",
        "05.model_input",
        "adds the whole position table, right only when seq_len == config.seq_len",
        "full-length",
        _HEAD
        + """

def model_input(model, tokens):
    return model.token_embedding(tokens) + model.position_embedding.weight
""",
    ),
    _case(
        "05-022",
        "05.model_input",
        "uses the token ids as positions (position_embedding(tokens))",
        "wrong-index",
        _HEAD
        + """

def model_input(model, tokens):
    return model.token_embedding(tokens) + model.position_embedding(tokens % model.config.seq_len)
""",
    ),
    _case(
        "05-023",
        "05.model_input",
        "positions along the batch axis (arange(batch))",
        "wrong-axis",
        _HEAD
        + """

def model_input(model, tokens):
    positions = torch.arange(tokens.shape[0])[:, None].expand_as(tokens)
    return model.token_embedding(tokens) + model.position_embedding(positions)
""",
    ),
    _case(
        "05-024",
        "05.model_input",
        "multiplies the token and position embeddings instead of adding them",
        "multiply-not-add",
        _HEAD
        + """

def model_input(model, tokens):
    pos = model.position_embedding(torch.arange(tokens.shape[1]))  # (seq_len, d_model)
    return model.token_embedding(tokens) * pos
""",
    ),
    # matching_score
    _case(
        "05-025",
        "05.matching_score",
        "includes the query itself among the matches",
        "includes-self",
        _HEAD
        + """

def matching_score(weights, shapes):
    w = np.asarray(weights, dtype=float)
    s = np.asarray(shapes)
    same = s[:, :, None] == s[:, None, :]  # (batch, q, k)
    return (w * same[:, None]).sum(axis=-1).mean(axis=(0, 2))
""",
    ),
    _case(
        "05-026",
        "05.matching_score",
        "averages the weights over all matching-mask entries, also the zeros (mean over keys instead of sum)",
        "mean-not-sum",
        _HEAD
        + """

def matching_score(weights, shapes):
    w = np.asarray(weights, dtype=float)
    s = np.asarray(shapes)
    n = s.shape[1]
    other = (s[:, :, None] == s[:, None, :]) & ~np.eye(n, dtype=bool)
    return (w * other[:, None]).mean(axis=-1).mean(axis=(0, 2))
""",
    ),
    _case(
        "05-027",
        "05.matching_score",
        "finds the match with list.index (the first key with that shape): for the "
        "first token of a pair that is the query itself",
        "first-occurrence",
        _HEAD
        + """

def matching_score(weights, shapes):
    w = np.asarray(weights, dtype=float)
    s = np.asarray(shapes)
    batch, num_heads, n, _ = w.shape
    total = np.zeros(num_heads)
    for b in range(batch):
        row = list(s[b])
        for i in range(n):
            j = row.index(s[b, i])
            total += w[b, :, i, j]
    return total / (batch * n)
""",
    ),
    _case(
        "05-028",
        "05.matching_score",
        "only the first sequence of the batch",
        "first-only",
        _HEAD
        + """

def matching_score(weights, shapes):
    w = np.asarray(weights, dtype=float)[0]
    s = np.asarray(shapes)[0]
    n = len(s)
    other = (s[:, None] == s[None, :]) & ~np.eye(n, dtype=bool)
    return (w * other).sum(axis=-1).mean(axis=-1)
""",
    ),
    _case(
        "05-029",
        "05.matching_score",
        "takes the max weight of each row instead of the weight on the match",
        "max-not-match",
        _HEAD
        + """

def matching_score(weights, shapes):
    w = np.asarray(weights, dtype=float)
    return w.max(axis=-1).mean(axis=(0, 2))
""",
    ),
    # ablation_table
    _case(
        "05-030",
        "05.ablation_table",
        "switched-off minus full accuracy: the signs flipped",
        "sign",
        _HEAD
        + """
from course_utils import heads, role_task
"""
        + _SWITCH_OFF
        + """

def ablation_table(model, task):
    full = role_task.role_accuracy(model, task)
    rows = []
    for h in range(model.config.num_heads):
        with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
            off = role_task.role_accuracy(model, task)
        rows.append([off[name] - full[name] for name in role_task.TARGETS])
    return np.array(rows)
""",
    ),
    _case(
        "05-031",
        "05.ablation_table",
        "switches off every head except h (keeps h alone)",
        "inverted-ablation",
        _HEAD
        + """
from course_utils import heads, role_task
"""
        + _SWITCH_OFF
        + """

def ablation_table(model, task):
    full = role_task.role_accuracy(model, task)
    num = model.config.num_heads
    rows = []
    for h in range(num):
        others = [g for g in range(num) if g != h]
        with heads.ablate_heads(model.attention, others, switch_off=switch_off):
            off = role_task.role_accuracy(model, task)
        rows.append([full[name] - off[name] for name in role_task.TARGETS])
    return np.array(rows)
""",
    ),
    _case(
        "05-032",
        "05.ablation_table",
        "measures the full accuracy inside the with block too (both with the head off): a table of zeros",
        "baseline-inside",
        _HEAD
        + """
from course_utils import heads, role_task
"""
        + _SWITCH_OFF
        + """

def ablation_table(model, task):
    rows = []
    for h in range(model.config.num_heads):
        with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
            full = role_task.role_accuracy(model, task)
            off = role_task.role_accuracy(model, task)
        rows.append([full[name] - off[name] for name in role_task.TARGETS])
    return np.array(rows)
""",
    ),
    _case(
        "05-033",
        "05.ablation_table",
        "orders the columns alphabetically (sorted dict keys), not as TARGETS",
        "column-order",
        _HEAD
        + """
from course_utils import heads, role_task
"""
        + _SWITCH_OFF
        + """

def ablation_table(model, task):
    full = role_task.role_accuracy(model, task)
    rows = []
    for h in range(model.config.num_heads):
        with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
            off = role_task.role_accuracy(model, task)
        rows.append([full[name] - off[name] for name in sorted(full)])
    return np.array(rows)
""",
    ),
    _case(
        "05-034",
        "05.ablation_table",
        "returns the transposed table (3, heads)",
        "transpose",
        _HEAD
        + """
from course_utils import heads, role_task
"""
        + _SWITCH_OFF
        + """

def ablation_table(model, task):
    full = role_task.role_accuracy(model, task)
    table = np.zeros((3, model.config.num_heads))
    for h in range(model.config.num_heads):
        with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
            off = role_task.role_accuracy(model, task)
        for r, name in enumerate(role_task.TARGETS):
            table[r, h] = full[name] - off[name]
    return table
""",
    ),
    # predictions
    _pred("05-p01", "05.focused_below_1_5", "thinks 1.5 nats is a low entropy for any row", "pred-entropy", "some"),
    _pred("05-p02", "05.same_self_head", "thinks a head's role is fixed by its index", "pred-seed", True),
    _pred("05-p03", "05.previous_key", "takes the next token for the previous one", "pred-role", 6),
    _pred("05-p04", "05.first_key", "counts from 1", "pred-role", 1),
    _pred("05-p05", "05.matching_key", "matches the colour (g) instead of the shape (C)", "pred-role", 2),
    _pred("05-p06", "05.matching_key", "answers the query itself", "pred-role", 5),
    _pred("05-p07", "05.role_heads_off", "thinks other heads make up for it", "pred-ablation", "about the same"),
    _pred("05-p08", "05.role_heads_off", "thinks accuracy collapses to 0", "pred-ablation", "about 0"),
    _pred(
        "05-p09", "05.deep_over_wide", "thinks 8 heads hold 8 times the parameters of one, so the same", "pred-count", 1
    ),
]
