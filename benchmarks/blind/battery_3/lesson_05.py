"""Blind battery 3, lesson 05: wrong answers a student could write (see README.md). Never edited to pass."""

from textwrap import dedent

HEAD = "import numpy as np\nimport torch\n\nfrom course_utils import heads, role_task\n\n"

SWITCH_OFF_OK = dedent("""
    def switch_off(concat, heads_off, num_heads):
        out = concat.clone()
        d_head = concat.shape[-1] // num_heads
        for h in heads_off:
            out[..., h * d_head : (h + 1) * d_head] = 0
        return out
""")


def _c(cid, exercise, mistake, kind, body, pre=""):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": HEAD + pre + dedent(body)}


def _p(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # ---- 05.row_entropy
    _c(
        "05-001",
        "05.row_entropy",
        "log base 2 (bits) instead of nats",
        "log-base",
        """
    def row_entropy(row):
        w = row[row > 0]
        return float(-(w * np.log2(w)).sum())
    """,
    ),
    _c(
        "05-002",
        "05.row_entropy",
        "no 0 · ln 0 = 0 rule: a row with a zero weight gives NaN",
        "zero-log",
        """
    def row_entropy(row):
        return float(-np.sum(row * np.log(row)))
    """,
    ),
    _c(
        "05-003",
        "05.row_entropy",
        "forgets the minus sign",
        "sign",
        """
    def row_entropy(row):
        nz = row[row > 0]
        return float(np.sum(nz * np.log(nz)))
    """,
    ),
    _c(
        "05-004",
        "05.row_entropy",
        "returns a 0-d NumPy array (np.asarray of the sum) instead of a Python float",
        "return-type",
        """
    def row_entropy(row):
        p = row[row > 0]
        return np.asarray(-(p * np.log(p)).sum())
    """,
    ),
    _c(
        "05-005",
        "05.row_entropy",
        "mean over the entries instead of the sum",
        "mean-not-sum",
        """
    def row_entropy(row):
        safe = np.where(row > 0, row, 1.0)
        return float(-(row * np.log(safe)).mean())
    """,
    ),
    _c(
        "05-006",
        "05.row_entropy",
        "normalises by ln(k_len) (entropy as a fraction of the maximum)",
        "normalised",
        """
    def row_entropy(row):
        w = row[row > 0]
        return float(-(w * np.log(w)).sum() / np.log(len(row)))
    """,
    ),
    _c(
        "05-007",
        "05.row_entropy",
        "uses log10",
        "log-base",
        """
    import math

    def row_entropy(row):
        return -sum(p * math.log10(p) for p in row if p > 0)
    """,
    ),
    # ---- 05.switch_off
    _c(
        "05-008",
        "05.switch_off",
        "zeros the heads in place: concat itself changes",
        "in-place",
        """
    def switch_off(concat, heads_off, num_heads):
        d_head = concat.shape[-1] // num_heads
        for h in heads_off:
            concat[..., h * d_head : (h + 1) * d_head] = 0
        return concat
    """,
    ),
    _c(
        "05-009",
        "05.switch_off",
        "copies with .detach() (shares memory) and so still zeros concat itself",
        "detach-shares-memory",
        """
    def switch_off(concat, heads_off, num_heads):
        out = concat.detach()
        d_head = out.shape[-1] // num_heads
        for h in heads_off:
            out[:, :, h * d_head : (h + 1) * d_head] = 0.0
        return out
    """,
    ),
    _c(
        "05-010",
        "05.switch_off",
        "zeros every head NOT listed (keeps only the listed heads)",
        "inverted",
        """
    def switch_off(concat, heads_off, num_heads):
        d_head = concat.shape[-1] // num_heads
        keep = torch.zeros(concat.shape[-1], dtype=concat.dtype)
        for h in heads_off:
            keep[h * d_head : (h + 1) * d_head] = 1
        return concat * keep
    """,
    ),
    _c(
        "05-011",
        "05.switch_off",
        "slices h : h + d_head (forgets to multiply the head index by d_head)",
        "index-not-scaled",
        """
    def switch_off(concat, heads_off, num_heads):
        out = concat.clone()
        d_head = concat.shape[-1] // num_heads
        for h in heads_off:
            out[..., h : h + d_head] = 0
        return out
    """,
    ),
    _c(
        "05-012",
        "05.switch_off",
        "builds the feature mask with .repeat (tiles h0 h1 h2 h3 h0 ...) instead of repeat_interleave",
        "tile-not-repeat",
        """
    def switch_off(concat, heads_off, num_heads):
        keep = torch.ones(num_heads, dtype=concat.dtype)
        keep[list(heads_off)] = 0
        return concat * keep.repeat(concat.shape[-1] // num_heads)
    """,
    ),
    _c(
        "05-013",
        "05.switch_off",
        "zeros along the position axis (dim 1) instead of the features",
        "wrong-axis",
        """
    def switch_off(concat, heads_off, num_heads):
        out = concat.clone()
        for h in heads_off:
            out[:, h] = 0
        return out
    """,
    ),
    _c(
        "05-014",
        "05.switch_off",
        "returns a NumPy array",
        "return-type",
        """
    def switch_off(concat, heads_off, num_heads):
        out = concat.detach().numpy().copy()
        d_head = out.shape[-1] // num_heads
        for h in heads_off:
            out[..., h * d_head : (h + 1) * d_head] = 0
        return out
    """,
    ),
    # ---- 05.role_scores
    _c(
        "05-015",
        "05.role_scores",
        "previous taken from the diagonal above (key i + 1: the next token)",
        "offset-sign",
        """
    def role_scores(weights):
        w = np.asarray(weights)
        previous = np.diagonal(w, offset=1, axis1=2, axis2=3).mean(axis=(0, 2))
        first = w[:, :, 1:, 0].mean(axis=(0, 2))
        self_ = np.diagonal(w, axis1=2, axis2=3).mean(axis=(0, 2))
        return previous, first, self_
    """,
    ),
    _c(
        "05-016",
        "05.role_scores",
        "first averaged over every query, query 0 included",
        "off-by-one",
        """
    def role_scores(weights):
        w = np.asarray(weights)
        previous = np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=(0, -1))
        first = w[..., 0].mean(axis=(0, 2))
        self_ = np.diagonal(w, axis1=-2, axis2=-1).mean(axis=(0, -1))
        return previous, first, self_
    """,
    ),
    _c(
        "05-017",
        "05.role_scores",
        "averages over the heads instead of the sequences: shape (batch,)",
        "wrong-axis",
        """
    def role_scores(weights):
        w = np.asarray(weights)
        previous = np.diagonal(w, offset=-1, axis1=2, axis2=3).mean(axis=(1, 2))
        first = w[:, :, 1:, 0].mean(axis=(1, 2))
        self_ = np.diagonal(w, axis1=2, axis2=3).mean(axis=(1, 2))
        return previous, first, self_
    """,
    ),
    _c(
        "05-018",
        "05.role_scores",
        "returns torch tensors when given a tensor",
        "return-type",
        """
    def role_scores(weights):
        w = torch.as_tensor(weights)
        previous = torch.diagonal(w, offset=-1, dim1=2, dim2=3).mean(dim=(0, 2))
        first = w[:, :, 1:, 0].mean(dim=(0, 2))
        self_ = torch.diagonal(w, dim1=2, dim2=3).mean(dim=(0, 2))
        return previous, first, self_
    """,
    ),
    _c(
        "05-019",
        "05.role_scores",
        "returns the three scores in the order (self, previous, first)",
        "order",
        """
    def role_scores(weights):
        w = np.asarray(weights)
        n = w.shape[-1]
        previous = w[:, :, np.arange(1, n), np.arange(n - 1)].mean(axis=(0, 2))
        first = w[:, :, 1:, 0].mean(axis=(0, 2))
        self_ = w[:, :, np.arange(n), np.arange(n)].mean(axis=(0, 2))
        return self_, previous, first
    """,
    ),
    _c(
        "05-020",
        "05.role_scores",
        "self averaged over queries 1.. only (copies the slice of the other two)",
        "off-by-one",
        """
    def role_scores(weights):
        w = np.asarray(weights)
        n = w.shape[-1]
        q = np.arange(1, n)
        return w[:, :, q, q - 1].mean(axis=(0, 2)), w[:, :, q, 0].mean(axis=(0, 2)), w[:, :, q, q].mean(axis=(0, 2))
    """,
    ),
    _c(
        "05-021",
        "05.role_scores",
        "reads weights[..., key, query] (rows as keys): previous becomes next",
        "transpose",
        """
    def role_scores(weights):
        w = np.asarray(weights)
        n = w.shape[-1]
        previous = np.mean([w[:, :, i - 1, i] for i in range(1, n)], axis=(0, 1))
        first = np.mean([w[:, :, 0, i] for i in range(1, n)], axis=(0, 1))
        self_ = np.mean([w[:, :, i, i] for i in range(n)], axis=(0, 1))
        return previous, first, self_
    """,
    ),
    # ---- 05.model_input
    _c(
        "05-022",
        "05.model_input",
        "forgets the position embedding",
        "missing-positions",
        """
    def model_input(model, tokens):
        return model.token_embedding(tokens)
    """,
    ),
    _c(
        "05-023",
        "05.model_input",
        "looks the token ids up in the position table",
        "wrong-index",
        """
    def model_input(model, tokens):
        return model.token_embedding(tokens) + model.position_embedding(tokens % model.config.seq_len)
    """,
    ),
    _c(
        "05-024",
        "05.model_input",
        "concatenates the two embeddings instead of adding them",
        "concat-not-add",
        """
    def model_input(model, tokens):
        pos = torch.arange(tokens.shape[1])
        tok = model.token_embedding(tokens)
        return torch.cat([tok, model.position_embedding(pos).expand_as(tok)], dim=-1)
    """,
    ),
    _c(
        "05-025",
        "05.model_input",
        "scales the token embedding by sqrt(d_model) (a Transformer habit this model does not have)",
        "extra-scale",
        """
    import math

    def model_input(model, tokens):
        pos = torch.arange(tokens.shape[1])
        return model.token_embedding(tokens) * math.sqrt(model.config.d_model) + model.position_embedding(pos)
    """,
    ),
    _c(
        "05-026",
        "05.model_input",
        "positions counted from 1",
        "off-by-one",
        """
    def model_input(model, tokens):
        positions = torch.arange(1, tokens.shape[1] + 1) % model.config.seq_len
        return model.token_embedding(tokens) + model.position_embedding(positions)
    """,
    ),
    _c(
        "05-027",
        "05.model_input",
        "computes it under torch.no_grad(): the embeddings get no gradient",
        "cuts-grad",
        """
    def model_input(model, tokens):
        with torch.no_grad():
            positions = torch.arange(tokens.size(1))
            return model.token_embedding(tokens) + model.position_embedding(positions)[None]
    """,
    ),
    # ---- 05.matching_score
    _c(
        "05-028",
        "05.matching_score",
        "counts every key with the query's shape, the query itself included",
        "includes-self",
        """
    def matching_score(weights, shapes):
        w = np.asarray(weights)
        s = np.asarray(shapes)
        same = s[:, :, None] == s[:, None, :]  # (batch, query, key)
        return (w * same[:, None]).sum(-1).mean(axis=(0, 2))
    """,
    ),
    _c(
        "05-029",
        "05.matching_score",
        "takes the first position with the query's shape, which is the query itself for the first of each pair",
        "first-occurrence",
        """
    def matching_score(weights, shapes):
        w = np.asarray(weights)
        s = np.asarray(shapes)
        b, h, n, _ = w.shape
        total = np.zeros(h)
        for bi in range(b):
            for i in range(n):
                j = int(np.argmax(s[bi] == s[bi, i]))
                total += w[bi, :, i, j]
        return total / (b * n)
    """,
    ),
    _c(
        "05-030",
        "05.matching_score",
        "measures how often the twin is the strongest key (an accuracy) instead of the weight on it",
        "argmax-not-weight",
        """
    def matching_score(weights, shapes):
        w = np.asarray(weights)
        s = np.asarray(shapes)
        n = s.shape[1]
        same = (s[:, :, None] == s[:, None, :]) & ~np.eye(n, dtype=bool)
        twin = same.argmax(-1)  # (batch, query)
        return (w.argmax(-1) == twin[:, None]).mean(axis=(0, 2))
    """,
    ),
    _c(
        "05-031",
        "05.matching_score",
        "uses only the first sequence of the batch",
        "first-sequence",
        """
    def matching_score(weights, shapes):
        w = np.asarray(weights)[0]
        s = np.asarray(shapes)[0]
        n = len(s)
        same = (s[:, None] == s[None, :]) & ~np.eye(n, dtype=bool)
        return (w * same).sum(-1).mean(-1)
    """,
    ),
    _c(
        "05-032",
        "05.matching_score",
        "sums over the queries instead of averaging",
        "sum-not-mean",
        """
    def matching_score(weights, shapes):
        w = np.asarray(weights)
        s = np.asarray(shapes)
        n = s.shape[1]
        same = (s[:, :, None] == s[:, None, :]) & ~np.eye(n, dtype=bool)
        return (w * same[:, None]).sum(axis=(2, 3)).mean(0)
    """,
    ),
    # ---- 05.ablation_table
    _c(
        "05-033",
        "05.ablation_table",
        "returns the accuracies with the head off, not the drop",
        "not-a-difference",
        """
    def ablation_table(model, task):
        rows = []
        for h in range(model.config.num_heads):
            with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
                acc = role_task.role_accuracy(model, task)
            rows.append([acc[t] for t in role_task.TARGETS])
        return np.array(rows)
    """,
        pre=SWITCH_OFF_OK,
    ),
    _c(
        "05-034",
        "05.ablation_table",
        "sign flipped: off minus on",
        "sign",
        """
    def ablation_table(model, task):
        base = role_task.role_accuracy(model, task)
        table = np.zeros((model.config.num_heads, len(role_task.TARGETS)))
        for h in range(model.config.num_heads):
            with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
                acc = role_task.role_accuracy(model, task)
            table[h] = [acc[t] - base[t] for t in role_task.TARGETS]
        return table
    """,
        pre=SWITCH_OFF_OK,
    ),
    _c(
        "05-035",
        "05.ablation_table",
        "switches off every head except h",
        "inverted",
        """
    def ablation_table(model, task):
        n = model.config.num_heads
        base = role_task.role_accuracy(model, task)
        table = []
        for h in range(n):
            others = [g for g in range(n) if g != h]
            with heads.ablate_heads(model.attention, others, switch_off=switch_off):
                acc = role_task.role_accuracy(model, task)
            table.append([base[t] - acc[t] for t in role_task.TARGETS])
        return np.array(table)
    """,
        pre=SWITCH_OFF_OK,
    ),
    _c(
        "05-036",
        "05.ablation_table",
        "accumulates the heads switched off (head h's row has heads 0..h off)",
        "cumulative",
        """
    def ablation_table(model, task):
        base = role_task.role_accuracy(model, task)
        off, table = [], []
        for h in range(model.config.num_heads):
            off.append(h)
            with heads.ablate_heads(model.attention, list(off), switch_off=switch_off):
                acc = role_task.role_accuracy(model, task)
            table.append([base[t] - acc[t] for t in role_task.TARGETS])
        return np.array(table)
    """,
        pre=SWITCH_OFF_OK,
    ),
    _c(
        "05-037",
        "05.ablation_table",
        "columns in the order of sorted(acc) (alphabetical) instead of TARGETS",
        "column-order",
        """
    def ablation_table(model, task):
        base = role_task.role_accuracy(model, task)
        table = []
        for h in range(model.config.num_heads):
            with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
                acc = role_task.role_accuracy(model, task)
            table.append([base[k] - acc[k] for k in sorted(acc)])
        return np.array(table)
    """,
        pre=SWITCH_OFF_OK,
    ),
    _c(
        "05-038",
        "05.ablation_table",
        "returns the table transposed, (3, heads)",
        "transpose",
        """
    def ablation_table(model, task):
        base = role_task.role_accuracy(model, task)
        cols = []
        for h in range(model.config.num_heads):
            with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
                acc = role_task.role_accuracy(model, task)
            cols.append([base[t] - acc[t] for t in role_task.TARGETS])
        return np.array(cols).T
    """,
        pre=SWITCH_OFF_OK,
    ),
    _c(
        "05-039",
        "05.ablation_table",
        "returns a list of lists",
        "return-type",
        """
    def ablation_table(model, task):
        base = role_task.role_accuracy(model, task)
        out = []
        for h in range(model.config.num_heads):
            with heads.ablate_heads(model.attention, [h], switch_off=switch_off):
                acc = role_task.role_accuracy(model, task)
            out.append([base[t] - acc[t] for t in role_task.TARGETS])
        return out
    """,
        pre=SWITCH_OFF_OK,
    ),
    # ---- predictions
    _p("05-p01", "05.focused_below_1_5", "thinks 1.5 nats is a low bar over 4 keys", "entropy-scale", "some"),
    _p("05-p02", "05.focused_below_1_5", "thinks uniform rows are never focused", "entropy-scale", "none"),
    _p("05-p03", "05.same_self_head", "thinks a head's role is fixed by its index", "seed", True),
    _p("05-p04", "05.previous_key", "takes the next position", "offset", 6),
    _p("05-p05", "05.first_key", "positions from 1", "off-by-one", 1),
    _p("05-p06", "05.matching_key", "matches the colour g instead of the shape C", "shape-colour", 2),
    _p("05-p07", "05.role_heads_off", "thinks other heads take over", "ablation", "about the same"),
    _p("05-p08", "05.role_heads_off", "thinks the answer becomes always wrong", "ablation", "about 0"),
    _p("05-p09", "05.deep_over_wide", "thinks heads multiply the parameters", "parameters", 1),
]
