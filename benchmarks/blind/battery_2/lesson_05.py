"""Battery 2, lesson 05: wrong answers to the head-analysis exercises and predictions."""

H = ("import numpy as np\nimport torch\n\nfrom course_utils import attention, heads, role_task\n\n")


def _c(id, exercise, mistake, kind, body):
    return {"id": id, "exercise": exercise, "mistake": mistake, "kind": kind, "source": H + body}


def _p(id, prediction, mistake, kind, value):
    return {"id": id, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


ABL_HEAD = '''def ablation_table(model, task):
    num_heads = model.attention.num_heads
    with torch.no_grad():
        base = role_task.role_accuracy(model, task)
'''

CASES = [
    # ---- row_entropy ---------------------------------------------------------------------------------------------
    _c("05-001", "05.row_entropy", "-sum(w * log w) straight: a zero weight gives 0 * -inf = nan", "log-zero",
       '''def row_entropy(row):
    return float(-np.sum(row * np.log(row)))
'''),
    _c("05-002", "05.row_entropy", "log base 2 (bits, not nats)", "wrong-base",
       '''def row_entropy(row):
    w = row[row > 0]
    return float(-np.sum(w * np.log2(w)))
'''),
    _c("05-003", "05.row_entropy", "forgets the minus sign", "sign",
       '''def row_entropy(row):
    w = row[row > 0]
    return float(np.sum(w * np.log(w)))
'''),
    _c("05-004", "05.row_entropy", "divides by ln(k): the normalized entropy in [0, 1]", "normalized",
       '''def row_entropy(row):
    w = row[row > 0]
    return float(-np.sum(w * np.log(w)) / np.log(len(row)))
'''),
    _c("05-005", "05.row_entropy", "mean instead of sum over the keys", "mean-not-sum",
       '''def row_entropy(row):
    w = np.where(row > 0, row, 1.0)
    return float(-np.mean(row * np.log(w)))
'''),
    _c("05-006", "05.row_entropy", "torch.special.entr(...).sum(): a 0-d tensor, not a Python float", "wrong-type",
       '''def row_entropy(row):
    return torch.special.entr(torch.as_tensor(row)).sum()
'''),
    _c("05-007", "05.row_entropy", "-sum(log w) without the weights (sum of surprisals), zeros skipped",
       "missing-term",
       '''def row_entropy(row):
    w = row[row > 0]
    return float(-np.sum(np.log(w)))
'''),
    # ---- switch_off ----------------------------------------------------------------------------------------------
    _c("05-010", "05.switch_off", "zeroes the heads in place and returns concat itself", "in-place",
       '''def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    for h in heads_off:
        concat[..., h * d_head:(h + 1) * d_head] = 0
    return concat
'''),
    _c("05-011", "05.switch_off", "zeroes the interleaved features h, h + heads, ...", "interleaved",
       '''def switch_off(concat, heads_off, num_heads):
    out = concat.clone()
    for h in heads_off:
        out[..., h::num_heads] = 0
    return out
'''),
    _c("05-012", "05.switch_off", "slice end h * d_head + d_head - 1: the last feature of each head stays on",
       "off-by-one",
       '''def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    out = concat.clone()
    for h in heads_off:
        out[..., h * d_head:h * d_head + d_head - 1] = 0
    return out
'''),
    _c("05-013", "05.switch_off", "zeroes positions (axis 1) instead of features", "wrong-axis",
       '''def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[1] // num_heads
    out = concat.clone()
    for h in heads_off:
        out[:, h * d_head:(h + 1) * d_head] = 0
    return out
'''),
    _c("05-014", "05.switch_off", "keeps only the listed heads (zeroes all the others)", "inverted",
       '''def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    out = torch.zeros_like(concat)
    for h in heads_off:
        out[..., h * d_head:(h + 1) * d_head] = concat[..., h * d_head:(h + 1) * d_head]
    return out
'''),
    _c("05-015", "05.switch_off", "works on concat.detach().clone(): right values, but no gradient flows through "
       "the heads that stay on", "detach",
       '''def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    out = concat.detach().clone()
    for h in heads_off:
        out[..., h * d_head:(h + 1) * d_head] = 0
    return out
'''),
    _c("05-016", "05.switch_off", "returns concat itself (no copy) when no head is switched off, in place "
       "otherwise", "in-place",
       '''def switch_off(concat, heads_off, num_heads):
    if not heads_off:
        return concat
    d_head = concat.shape[-1] // num_heads
    for h in heads_off:
        concat[..., h * d_head:(h + 1) * d_head] = 0.0
    return concat
'''),
    _c("05-017", "05.switch_off", "d_head from concat.shape[1] (q_len) instead of the feature axis: right only when "
       "q_len == d_model", "square-only",
       '''def switch_off(concat, heads_off, num_heads):
    d_head = concat.shape[1] // num_heads
    out = concat.clone()
    for h in heads_off:
        out[..., h * d_head:(h + 1) * d_head] = 0
    return out
'''),
    # ---- role_scores ---------------------------------------------------------------------------------------------
    _c("05-020", "05.role_scores", "previous read from the diagonal above (key i + 1) instead of below",
       "off-by-one",
       '''def role_scores(weights):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    previous = np.diagonal(w, offset=1, axis1=-2, axis2=-1).mean(axis=(0, -1))
    first = w[:, :, 1:, 0].mean(axis=(0, 2))
    self_ = np.diagonal(w, axis1=-2, axis2=-1).mean(axis=(0, -1))
    return previous, first, self_
'''),
    _c("05-021", "05.role_scores", "first averaged over every query, including query 0 (which always puts weight 1 "
       "on key 0 under a causal mask)", "off-by-one",
       '''def role_scores(weights):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    previous = np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=(0, -1))
    first = w[:, :, :, 0].mean(axis=(0, 2))
    self_ = np.diagonal(w, axis1=-2, axis2=-1).mean(axis=(0, -1))
    return previous, first, self_
'''),
    _c("05-022", "05.role_scores", "self averaged over queries i >= 1 only (copied from the other two)",
       "off-by-one",
       '''def role_scores(weights):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    previous = np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=(0, -1))
    first = w[:, :, 1:, 0].mean(axis=(0, 2))
    self_ = np.diagonal(w, axis1=-2, axis2=-1)[..., 1:].mean(axis=(0, -1))
    return previous, first, self_
'''),
    _c("05-023", "05.role_scores", "returns torch tensors when given a tensor", "wrong-type",
       '''def role_scores(weights):
    w = torch.as_tensor(weights)
    previous = torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).mean(dim=(0, -1))
    first = w[:, :, 1:, 0].mean(dim=(0, 2))
    self_ = torch.diagonal(w, dim1=-2, dim2=-1).mean(dim=(0, -1))
    return previous, first, self_
'''),
    _c("05-024", "05.role_scores", "averages over the heads instead of the sequences: shape (batch,)", "wrong-axis",
       '''def role_scores(weights):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    previous = np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=(1, -1))
    first = w[:, :, 1:, 0].mean(axis=(1, 2))
    self_ = np.diagonal(w, axis1=-2, axis2=-1).mean(axis=(1, -1))
    return previous, first, self_
'''),
    _c("05-025", "05.role_scores", "returns (first, previous, self)", "return-order",
       '''def role_scores(weights):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    previous = np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=(0, -1))
    first = w[:, :, 1:, 0].mean(axis=(0, 2))
    self_ = np.diagonal(w, axis1=-2, axis2=-1).mean(axis=(0, -1))
    return first, previous, self_
'''),
    _c("05-026", "05.role_scores", "reads the keys as rows: w[:, :, 0, 1:] for 'first' and the transposed "
       "diagonal for 'previous'", "transpose",
       '''def role_scores(weights):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    previous = np.diagonal(w, offset=1, axis1=-1, axis2=-2).mean(axis=(0, -1))
    first = w[:, :, 0, 1:].mean(axis=(0, 2))
    self_ = np.diagonal(w, axis1=-2, axis2=-1).mean(axis=(0, -1))
    return previous, first, self_
'''),
    # ---- model_input ---------------------------------------------------------------------------------------------
    _c("05-030", "05.model_input", "looks the positions up with the token ids (position_embedding(tokens))",
       "wrong-index",
       '''def model_input(model, tokens):
    return model.token_embedding(tokens) + model.position_embedding(tokens % model.config.seq_len)
'''),
    _c("05-031", "05.model_input", "adds all model.config.seq_len position embeddings: only works for full-length "
       "input", "full-length-only",
       '''def model_input(model, tokens):
    positions = torch.arange(model.config.seq_len)
    return model.token_embedding(tokens) + model.position_embedding(positions)
'''),
    _c("05-032", "05.model_input", "concatenates token and position embeddings instead of adding them",
       "concat-not-add",
       '''def model_input(model, tokens):
    positions = torch.arange(tokens.shape[1]).expand_as(tokens)
    return torch.cat([model.token_embedding(tokens), model.position_embedding(positions)], dim=-1)
'''),
    _c("05-033", "05.model_input", "forgets the positions", "missing-term",
       '''def model_input(model, tokens):
    return model.token_embedding(tokens)
'''),
    _c("05-034", "05.model_input", "positions counted from 1 (arange(1, n + 1)), and the last one clamped to stay "
       "in the table", "off-by-one",
       '''def model_input(model, tokens):
    n = tokens.shape[1]
    positions = torch.arange(1, n + 1).clamp(max=model.config.seq_len - 1)
    return model.token_embedding(tokens) + model.position_embedding(positions)
'''),
    _c("05-035", "05.model_input", "scales the token embedding by sqrt(d_model) (the Transformer paper's habit), "
       "which this model does not do", "extra-scale",
       '''import math


def model_input(model, tokens):
    d = model.token_embedding.embedding_dim
    positions = torch.arange(tokens.shape[1])
    return model.token_embedding(tokens) * math.sqrt(d) + model.position_embedding(positions)
'''),
    _c("05-036", "05.model_input", "computes the sum under torch.no_grad() 'because it is only the input': right "
       "values, but no gradient reaches the embeddings", "no-grad",
       '''def model_input(model, tokens):
    with torch.no_grad():
        positions = torch.arange(tokens.shape[1])
        return model.token_embedding(tokens) + model.position_embedding(positions)
'''),
    # ---- matching_score ------------------------------------------------------------------------------------------
    _c("05-040", "05.matching_score", "counts every key with the query's shape, the query itself included",
       "includes-self",
       '''def matching_score(weights, shapes):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    s = np.asarray(shapes)
    same = s[:, :, None] == s[:, None, :]
    return (w * same[:, None]).sum(-1).mean(axis=(0, 2))
'''),
    _c("05-041", "05.matching_score", "mean over the keys of the masked weights (divides by seq_len) instead of the "
       "sum", "mean-not-sum",
       '''def matching_score(weights, shapes):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    s = np.asarray(shapes)
    n = s.shape[1]
    partner = (s[:, :, None] == s[:, None, :]) & ~np.eye(n, dtype=bool)
    return (w * partner[:, None]).mean(-1).mean(axis=(0, 2))
'''),
    _c("05-042", "05.matching_score", "averages over the heads axis too: one number repeated, not per head",
       "wrong-axis",
       '''def matching_score(weights, shapes):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    s = np.asarray(shapes)
    n = s.shape[1]
    partner = (s[:, :, None] == s[:, None, :]) & ~np.eye(n, dtype=bool)
    per = (w * partner[:, None]).sum(-1)
    return np.full(w.shape[1], per.mean())
'''),
    _c("05-043", "05.matching_score", "takes the FIRST position with the query's shape as its partner (for the first "
       "token of a pair that is the query itself)", "first-occurrence",
       '''def matching_score(weights, shapes):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    s = np.asarray(shapes)
    b, n = s.shape
    partner = np.argmax(s[:, :, None] == s[:, None, :], axis=-1)
    picked = np.take_along_axis(w, partner[:, None, :, None], axis=-1)[..., 0]
    return picked.mean(axis=(0, 2))
'''),
    _c("05-044", "05.matching_score", "builds the partner mask from the first sequence's shapes (shapes[0]) and "
       "uses it for the whole batch", "first-sequence-only",
       '''def matching_score(weights, shapes):
    w = np.asarray(weights.detach() if torch.is_tensor(weights) else weights)
    s = np.asarray(shapes)[0]
    n = s.shape[0]
    partner = (s[:, None] == s[None, :]) & ~np.eye(n, dtype=bool)
    return (w * partner).sum(-1).mean(axis=(0, 2))
'''),
    _c("05-045", "05.matching_score", "returns a torch tensor for tensor weights", "wrong-type",
       '''def matching_score(weights, shapes):
    w = torch.as_tensor(weights)
    s = torch.as_tensor(shapes)
    n = s.shape[1]
    partner = (s[:, :, None] == s[:, None, :]) & ~torch.eye(n, dtype=torch.bool)
    return (w * partner[:, None]).sum(-1).mean(dim=(0, 2))
'''),
    # ---- ablation_table ------------------------------------------------------------------------------------------
    _c("05-050", "05.ablation_table", "accuracy without the head minus accuracy with it (sign flipped)", "sign",
       ABL_HEAD + '''        rows = []
        for h in range(num_heads):
            with heads.ablate_heads(model.attention, h):
                off = role_task.role_accuracy(model, task)
            rows.append([off[t] - base[t] for t in role_task.TARGETS])
    return np.array(rows)
'''),
    _c("05-051", "05.ablation_table", "returns the accuracies with the head off, not the drop", "missing-term",
       ABL_HEAD + '''        rows = []
        for h in range(num_heads):
            with heads.ablate_heads(model.attention, h):
                off = role_task.role_accuracy(model, task)
            rows.append([off[t] for t in role_task.TARGETS])
    return np.array(rows)
'''),
    _c("05-052", "05.ablation_table", "switches off every head except h", "inverted",
       ABL_HEAD + '''        rows = []
        for h in range(num_heads):
            others = [g for g in range(num_heads) if g != h]
            with heads.ablate_heads(model.attention, others):
                off = role_task.role_accuracy(model, task)
            rows.append([base[t] - off[t] for t in role_task.TARGETS])
    return np.array(rows)
'''),
    _c("05-053", "05.ablation_table", "columns in sorted(dict) order (first, matching, previous), not TARGETS' order",
       "column-order",
       ABL_HEAD + '''        rows = []
        for h in range(num_heads):
            with heads.ablate_heads(model.attention, h):
                off = role_task.role_accuracy(model, task)
            rows.append([base[t] - off[t] for t in sorted(base)])
    return np.array(rows)
'''),
    _c("05-054", "05.ablation_table", "returns a list of lists", "wrong-type",
       ABL_HEAD + '''        rows = []
        for h in range(num_heads):
            with heads.ablate_heads(model.attention, h):
                off = role_task.role_accuracy(model, task)
            rows.append([base[t] - off[t] for t in role_task.TARGETS])
    return rows
'''),
    _c("05-055", "05.ablation_table", "transposed: (3, heads)", "transpose",
       ABL_HEAD + '''        rows = []
        for h in range(num_heads):
            with heads.ablate_heads(model.attention, h):
                off = role_task.role_accuracy(model, task)
            rows.append([base[t] - off[t] for t in role_task.TARGETS])
    return np.array(rows).T
'''),
    _c("05-056", "05.ablation_table", "switches heads off cumulatively (0, then 0 and 1, ...): forgets that each "
       "row is one head alone", "cumulative",
       ABL_HEAD + '''        rows = []
        for h in range(num_heads):
            with heads.ablate_heads(model.attention, list(range(h + 1))):
                off = role_task.role_accuracy(model, task)
            rows.append([base[t] - off[t] for t in role_task.TARGETS])
    return np.array(rows)
'''),
    # ---- predictions ---------------------------------------------------------------------------------------------
    _p("05-p01", "05.focused_below_1_5", "forgets that ln 4 < 1.5 caps the entropy over 4 keys", "entropy-bound",
       "some"),
    _p("05-p02", "05.focused_below_1_5", "thinks 1.5 is a low threshold", "entropy-bound", "none"),
    _p("05-p03", "05.same_self_head", "believes untrained heads have fixed roles", "untrained", True),
    _p("05-p04", "05.role_heads_off", "expects other heads to take over", "redundancy", "about the same"),
    _p("05-p05", "05.role_heads_off", "thinks switching off the head makes the answer always wrong", "chance",
       "about 0"),
    _p("05-p06", "05.deep_over_wide", "thinks one-head layers are 8 times smaller each", "per-head", 1),
    _p("05-p07", "05.deep_over_wide", "multiplies layers by heads", "per-head", 64),
    _p("05-p08", "05.previous_key", "reads 'previous' as the token after the query", "direction", 6),
    _p("05-p09", "05.previous_key", "the query itself", "off-by-one", 5),
    _p("05-p10", "05.first_key", "counts positions from 1", "off-by-one", 1),
    _p("05-p11", "05.matching_key", "the query's own position (it has the shape too)", "includes-self", 5),
    _p("05-p12", "05.matching_key", "off by one after the other occurrence", "off-by-one", 10),
]
