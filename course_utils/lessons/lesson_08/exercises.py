"""Lesson 08 · A Transformer that reverses sequences: the exercises of ``notebooks/08_transformer_reversal.ipynb``.

Each exercise is one block, in the lesson's order: cases, reference, correct variants, hand-written buggy
versions, ``Exercise``; then the lesson's ``Prediction``s. The student builds what the lesson trains: the
positions, the decoder's masks, the encoder and decoder layers (class exercises: the course's weights are loaded
into the student's layer, ``cases.run_module``), the training step (``cases.run_training_steps``: a stale gradient
shows a missing ``zero_grad``, a batch with a large gradient a missing clip) and batched greedy decoding.
``08.my_decoder_masks`` goes through ``course_utils.masks``, so every mask patch of the catalogue applies to it,
also to one of its two masks alone. ``08.my_greedy_decode`` decodes a whole batch with a trained model (the
model a case hands in runs unpatched), where rows reach EOS at different steps.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from course_utils import data
from course_utils.checking.cases import run_training_steps, torch_seeded
from course_utils.checking.model import Case, Exercise, Prediction
from course_utils.data import BOS, EOS, PAD
from course_utils.lessons.lesson_08.layers import (
    DECODER_LAYER,
    ENCODER_LAYER,
    GREEDY_SECTION,
    MY_DECODER_MASKS,
    MY_POSITIONS,
)
from course_utils.reversal import decoding, training, transformer

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "MY_TRAIN_STEP",
    "MY_GREEDY_DECODE",
    "TRANSFORMER_PARAMETERS",
    "TEACHER_FORCED_ACCURACY",
]


# ---- 08.my_train_step(model, optimizer, batch) -> loss -----------------------------------------------------------
_TRAIN = "08 · The training step"


def train_step_cases():
    sources = [("abcdefg", "hij", "dc"), ("jihgf", "abab", "cdecde"), ("aaaaaaaaaa", "b", "jjj")]
    batches = [data.collate([data.encode(s) for s in group]) for group in sources]
    cases = []
    with torch_seeded(83):
        for optimizer_name, d_model, heads in (("SGD", 8, 2), ("Adam", 12, 3)):
            config = transformer.TransformerConfig(d_model=d_model, num_heads=heads, d_ff=2 * d_model)
            model = transformer.TransformerSeq2Seq(config).double()
            with torch.no_grad():
                model.out_proj.weight.mul_(20.0)  # confident, wrong logits: a gradient norm far above 1
            if optimizer_name == "SGD":
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            else:
                optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
            label = f"{optimizer_name}, 3 padded batches, gradient norms far above 1"
            cases.append(Case((model, optimizer, batches), label))
    return cases


def my_train_step(model, optimizer, batch):
    return training.train_step(model, optimizer, batch, grad_clip=1.0)


def train_step_course_loss(model, optimizer, batch):
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)  # (batch, tgt_len, vocab)
    loss = training.sequence_loss(logits, batch.target)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return float(loss.detach())


def train_step_masked_mean(model, optimizer, batch):
    model.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.target != PAD  # (batch, tgt_len)
    per_token = F.cross_entropy(logits.transpose(1, 2), batch.target, reduction="none")  # (batch, tgt_len)
    loss = per_token[real].mean()
    loss.backward()
    params = [p for p in model.parameters() if p.grad is not None]
    norm = torch.sqrt(sum((p.grad**2).sum() for p in params))
    scale = min(1.0, 1.0 / (float(norm) + 1e-6))  # clip_grad_norm_'s rule, by hand
    for p in params:
        p.grad.mul_(scale)
    optimizer.step()
    return loss.item()


def _train_step(model, optimizer, batch, *, clip=True, zero_grad=True, ignore_pad=True):
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    vocab = logits.shape[-1]
    loss = F.cross_entropy(
        logits.reshape(-1, vocab), batch.target.reshape(-1), ignore_index=PAD if ignore_pad else -100
    )
    if zero_grad:
        optimizer.zero_grad()
    loss.backward()
    if clip:  # clipping after step() moves the weights exactly as no clipping: the same buggy version
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()


def step_not_clipped(model, optimizer, batch):
    return _train_step(model, optimizer, batch, clip=False)


def step_without_zero_grad(model, optimizer, batch):
    return _train_step(model, optimizer, batch, zero_grad=False)


def step_loss_counts_padding(model, optimizer, batch):
    return _train_step(model, optimizer, batch, ignore_pad=False)


MY_TRAIN_STEP = Exercise(
    id="08.my_train_step",
    section=_TRAIN,
    make_cases=train_step_cases,
    reference=my_train_step,
    variants=(train_step_course_loss, train_step_masked_mean),
    buggy={
        "grad_not_clipped": step_not_clipped,
        "zero_grad_missing": step_without_zero_grad,
        "loss_counts_padding": step_loss_counts_padding,
    },
    allowed=("course_utils.reversal.training:sequence_loss",),
    forbidden=("course_utils.reversal.training:train_step", "course_utils.reversal.training:train"),
    driver=run_training_steps,
    output_names=("losses", "parameters"),
    atol=1e-9,
    rtol=1e-7,
    noun="training step",
    hints=(
        "Forward with teacher forcing, a loss, backward, an update: which two more calls keep one bad batch (or "
        "an old gradient) from steering the update, and where do they go?",
        "The loss is the cross-entropy between the logits and batch.target over real tokens only (PAD ignored). "
        "Clear the old gradients before backward(); clip the gradient norm at 1 after backward() and before step().",
        "F.cross_entropy(logits.reshape(-1, vocab), batch.target.reshape(-1), ignore_index=data.PAD); "
        "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0); return loss.item().",
    ),
)


# ---- 08.my_greedy_decode(model, src, src_lengths, max_steps) -> (batch, steps) --------------------------------
def greedy_cases():
    from course_utils import data
    from course_utils.reversal import checkpoints

    model = checkpoints.load_pretrained("transformer")  # trained: rows reach EOS at their own steps
    gru = checkpoints.load_pretrained("gru_attention")
    mixed = data.collate([data.encode(s) for s in ("abcd", "edcba", "ca")])  # src (3, 5)
    wide = torch.cat([mixed.src, torch.full((3, 1), PAD)], dim=1)  # (3, 6): one more column of padding
    return [
        Case((model, wide, mixed.src_lengths, 7), "rows finish at different steps; no row fills the padded width"),
        Case((model, mixed.src, mixed.src_lengths, 3), "max_steps binds before any EOS"),
        Case((gru, mixed.src, mixed.src_lengths, mixed.src.shape[1] + 2), "another model, the same contract"),
    ]


def my_greedy_decode(model, src, src_lengths, max_steps):
    return decoding.greedy_decode(model, src, src_lengths, max_steps)


def _greedy_loop(
    model, src, src_lengths, max_steps, *, feed_back=True, pad_after_eos=True, stop_at_first=False, position=-1
):
    """Greedy decoding by re-running ``model`` on the growing prefix, with one mistake switched on."""
    model.eval()
    batch = src.shape[0]
    decoder_input = torch.full((batch, 1), BOS, dtype=torch.long)  # (batch, 1)
    done = torch.zeros(batch, dtype=torch.bool)
    outputs = []
    with torch.no_grad():
        for _ in range(max_steps):
            logits = model(src, src_lengths, decoder_input)  # (batch, t, vocab)
            tokens = logits[:, position].argmax(dim=-1)  # (batch,)
            if pad_after_eos:
                tokens = tokens.masked_fill(done, PAD)
            outputs.append(tokens)
            done = done | (tokens == EOS)
            if bool(done.all()) or (stop_at_first and bool(done.any())):
                break
            if feed_back:
                decoder_input = torch.cat([decoder_input, tokens[:, None]], dim=1)  # (batch, t) -> (batch, t + 1)
            else:
                decoder_input = torch.cat([decoder_input, decoder_input[:, -1:]], dim=1)  # never the argmax
    return torch.stack(outputs, dim=1)  # steps x (batch,) -> (batch, steps)


def greedy_prefix_loop(model, src, src_lengths, max_steps):
    return _greedy_loop(model, src, src_lengths, max_steps)


def greedy_token_lists(model, src, src_lengths, max_steps):
    model.eval()
    rows = [[BOS] for _ in range(src.shape[0])]
    finished = [False] * src.shape[0]
    steps = []
    with torch.no_grad():
        while len(steps) < max_steps and not all(finished):
            logits = model(src, src_lengths, torch.tensor(rows))  # (batch, t, vocab)
            step = []
            for b in range(len(rows)):
                token = PAD if finished[b] else int(logits[b, -1].argmax())
                finished[b] = finished[b] or token == EOS
                rows[b].append(token)
                step.append(token)
            steps.append(step)
    return torch.tensor(steps, dtype=torch.long).T  # (steps, batch) -> (batch, steps)


def greedy_argmax_not_fed_back(model, src, src_lengths, max_steps):
    return _greedy_loop(model, src, src_lengths, max_steps, feed_back=False)


def greedy_no_pad_after_eos(model, src, src_lengths, max_steps):
    return _greedy_loop(model, src, src_lengths, max_steps, pad_after_eos=False)


def greedy_stops_at_first_eos(model, src, src_lengths, max_steps):
    return _greedy_loop(model, src, src_lengths, max_steps, stop_at_first=True)


def greedy_wrong_position(model, src, src_lengths, max_steps):
    return _greedy_loop(model, src, src_lengths, max_steps, position=0)


MY_GREEDY_DECODE = Exercise(
    id="08.my_greedy_decode",
    section=GREEDY_SECTION,
    make_cases=greedy_cases,
    reference=my_greedy_decode,
    variants=(greedy_prefix_loop, greedy_token_lists),
    buggy={
        "greedy_argmax_not_fed_back": greedy_argmax_not_fed_back,
        "greedy_no_pad_after_eos": greedy_no_pad_after_eos,
        "greedy_stops_at_first_eos": greedy_stops_at_first_eos,
        "greedy_wrong_position": greedy_wrong_position,
    },
    hints=(
        "Every row starts from BOS. After each step, what goes back into the decoder, and when is a row finished? "
        "When is the whole batch finished?",
        "Each step: run the model on the whole prefix, take the argmax of the last position's logits, and append it "
        "to the prefix. A row that has emitted EOS writes PAD from then on; stop when every row is done, or after "
        "max_steps steps.",
        "Keep done = torch.zeros(batch, dtype=torch.bool) and update it with tokens == EOS; tokens.masked_fill(done, "
        "PAD) writes PAD in finished rows. Stack the steps along dim=1: (batch, steps).",
    ),
    time_limit=20.0,
)

# ---- 08.transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers) -> int (Exercise 1) ------------------
_EX1 = "08 · Exercise 1 · Count the parameters"


def parameter_cases():
    return [
        Case((13, 32, 4, 64, 1), "this lesson's model"),
        Case((13, 8, 2, 16, 2), "two layers on each side"),
        Case((20, 12, 3, 20, 3)),
        Case((5, 6, 1, 10, 1), "one head"),
    ]


def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    config = transformer.TransformerConfig(
        vocab=vocab, d_model=d_model, num_heads=num_heads, d_ff=d_ff, num_layers=num_layers
    )
    return sum(p.numel() for p in transformer.TransformerSeq2Seq(config).parameters())


def parameters_formula(vocab, d_model, num_heads, d_ff, num_layers):
    attention_block = 4 * (d_model * d_model + d_model)  # four projections, each with a bias
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    norm = 2 * d_model  # weight and bias
    encoder_layer = 2 * norm + attention_block + ffn
    decoder_layer = 3 * norm + 2 * attention_block + ffn
    ends = 2 * vocab * d_model + 2 * norm + d_model * vocab + vocab  # embeddings, final norms, out_proj
    return num_layers * (encoder_layer + decoder_layer) + ends


def parameters_by_part(vocab, d_model, num_heads, d_ff, num_layers):
    linear = lambda n_in, n_out: n_in * n_out + n_out  # noqa: E731
    parts = {
        "embeddings": [vocab * d_model] * 2,
        "encoder": [2 * d_model] * 2 + [linear(d_model, d_model)] * 4 + [linear(d_model, d_ff), linear(d_ff, d_model)],
        "decoder": [2 * d_model] * 3 + [linear(d_model, d_model)] * 8 + [linear(d_model, d_ff), linear(d_ff, d_model)],
        "top": [2 * d_model] * 2 + [linear(d_model, vocab)],
    }
    layered = sum(parts["encoder"]) + sum(parts["decoder"])
    return sum(parts["embeddings"]) + num_layers * layered + sum(parts["top"])


def parameters_without_norms(vocab, d_model, num_heads, d_ff, num_layers):
    attention_block = 4 * (d_model * d_model + d_model)
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    per_layer = attention_block + ffn + 2 * attention_block + ffn  # LayerNorms not counted
    return num_layers * per_layer + 2 * vocab * d_model + d_model * vocab + vocab


def _parameters(vocab, d_model, d_ff, num_layers, *, decoder_attentions=2, biases=True):
    bias = 1 if biases else 0
    attention_block = 4 * (d_model * d_model + bias * d_model)
    ffn = d_model * d_ff + bias * d_ff + d_ff * d_model + bias * d_model
    norm = 2 * d_model
    per_layer = (2 * norm + attention_block + ffn) + (3 * norm + decoder_attentions * attention_block + ffn)
    return num_layers * per_layer + 2 * vocab * d_model + 2 * norm + d_model * vocab + bias * vocab


def parameters_one_attention_in_decoder(vocab, d_model, num_heads, d_ff, num_layers):
    return _parameters(vocab, d_model, d_ff, num_layers, decoder_attentions=1)


def parameters_without_biases(vocab, d_model, num_heads, d_ff, num_layers):
    return _parameters(vocab, d_model, d_ff, num_layers, biases=False)


TRANSFORMER_PARAMETERS = Exercise(
    id="08.transformer_parameters",
    fresh=lambda vocab, heads, d_head, d_ff, layers: [(vocab, heads * d_head, heads, d_ff, layers)],
    section=_EX1,
    make_cases=parameter_cases,
    reference=transformer_parameters,
    variants=(parameters_formula, parameters_by_part),
    buggy={
        "layernorm_not_counted": parameters_without_norms,
        "decoder_one_attention": parameters_one_attention_in_decoder,
        "params_no_biases": parameters_without_biases,
    },
    forbidden=(
        "course_utils.reversal.transformer:TransformerSeq2Seq.__init__",
        "course_utils.reversal.transformer:EncoderLayer.__init__",
        "course_utils.reversal.transformer:DecoderLayer.__init__",
        "course_utils.reversal.checkpoints:build_model",
        "course_utils.attention:MultiHeadAttention.__init__",
    ),
    noun="parameter count",
    hints=(
        "List the model's parts (embeddings, each layer's sub-layers, the final norms, out_proj): which of them "
        "hold parameters, and does num_heads change any of their shapes?",
        "An attention block is four (d_model, d_model) projections with biases; a LayerNorm has a weight and a bias "
        "of d_model each; the feed-forward network is two Linear layers. The decoder layer has two attention blocks "
        "and three LayerNorms.",
        "A Linear(n_in, n_out) holds n_in * n_out + n_out parameters; an embedding table vocab * d_model. Count one "
        "encoder layer and one decoder layer, multiply by num_layers, then add the parts outside the layers.",
    ),
)


# ---- 08.teacher_forced_token_accuracy(model, batch) -> float (Exercise 2) ------------------------------------------
_EX2 = "08 · Exercise 2 · Teacher-forced accuracy"


def teacher_forced_cases():
    from course_utils.reversal import checkpoints

    beyond = data.collate([data.encode(s) for s in ("abcdefghijabcd", "jihgfedcbaj", "cabbage")])  # some past 12
    short = data.collate([data.encode(s) for s in ("abc", "jjjjj", "abcdefgh")])
    with torch_seeded(84):
        fresh = transformer.TransformerSeq2Seq(transformer.TransformerConfig(d_model=8, num_heads=2, d_ff=16))
    return [
        Case((checkpoints.load_pretrained("transformer_short"), beyond), "a model trained on 4-12, rows of 14, 11, 7"),
        Case((checkpoints.load_pretrained("gru_attention"), short), "another model, rows of 3, 5, 8"),
        Case((fresh, short), "an untrained model"),
    ]


def teacher_forced_token_accuracy(model, batch):
    return training.teacher_forced_accuracy(model, batch)


def teacher_forced_masked_mean(model, batch):
    model.eval()
    with torch.no_grad():
        predicted = model(batch.src, batch.src_lengths, batch.decoder_input).argmax(dim=-1)  # (batch, tgt_len)
    real = batch.target != PAD
    return (predicted[real] == batch.target[real]).float().mean().item()


def teacher_forced_rows(model, batch):
    model.eval()
    hits = total = 0
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    for b, length in enumerate(batch.src_lengths.tolist()):
        predicted = logits[b, : length + 1].argmax(dim=-1)  # y + EOS: length + 1 real targets
        hits += int((predicted == batch.target[b, : length + 1]).sum())
        total += length + 1
    return hits / total


def _teacher_forced(model, batch, *, count_padding=False, against_input=False):
    model.eval()
    with torch.no_grad():
        predicted = model(batch.src, batch.src_lengths, batch.decoder_input).argmax(dim=-1)
    wanted = batch.decoder_input if against_input else batch.target
    if count_padding:
        return (predicted == wanted).float().mean().item()
    real = batch.target != PAD
    return (predicted[real] == wanted[real]).float().mean().item()


def teacher_forced_counts_padding(model, batch):
    return _teacher_forced(model, batch, count_padding=True)


def teacher_forced_against_input(model, batch):
    return _teacher_forced(model, batch, against_input=True)


TEACHER_FORCED_ACCURACY = Exercise(
    id="08.teacher_forced_token_accuracy",
    section=_EX2,
    make_cases=teacher_forced_cases,
    reference=teacher_forced_token_accuracy,
    variants=(teacher_forced_masked_mean, teacher_forced_rows),
    buggy={
        "accuracy_counts_padding": teacher_forced_counts_padding,
        "accuracy_against_decoder_input": teacher_forced_against_input,
    },
    forbidden=("course_utils.reversal.training:teacher_forced_accuracy", "course_utils.reversal.training:evaluate"),
    atol=1e-6,
    noun="teacher-forced accuracy",
    hints=(
        "Teacher forcing: what does the decoder get as input, and which tokens are its predictions compared with? "
        "Which positions of the target count?",
        "Run the model once on (src, src_lengths, decoder_input); the argmax over the vocabulary is each step's "
        "prediction; compare it with batch.target where the target is not PAD.",
        "real = batch.target != data.PAD is a (batch, tgt_len) mask; predicted[real] == batch.target[real] gives "
        "one bool per real token; their mean is the accuracy.",
    ),
)


EXERCISES = [
    MY_POSITIONS,
    MY_DECODER_MASKS,
    ENCODER_LAYER,
    DECODER_LAYER,
    MY_TRAIN_STEP,
    MY_GREEDY_DECODE,
    TRANSFORMER_PARAMETERS,
    TEACHER_FORCED_ACCURACY,
]

PREDICTIONS = [
    Prediction(
        id="08.layernorm_scaled_row",
        question="A fresh nn.LayerNorm(4) gets the rows [1, 2, 3, 4] and [10, 20, 30, 40]: are the two outputs equal?",
        kind="choice",
        answer=True,
        choices=(True, False),
        section="08 · LayerNorm and pre-norm",
        known_wrong={
            False: (
                None,
                "what a layer without normalization would give; LayerNorm removes each row's own mean "
                "and divides by its own standard deviation, so a row times 10 comes out the same",
            )
        },
    ),
    Prediction(
        id="08.clipped_norm",
        question="A gradient of total norm 50 goes through clip_grad_norm_(parameters, max_norm=1.0): what is its "
        "total norm afterwards?",
        kind="number",
        answer=1.0,
        rtol=0.05,
        section="08 · Gradient clipping",
        rethink="what clip_grad_norm_ does to a gradient whose norm is above max_norm",
        known_wrong={
            50.0: (
                None,
                "the norm before clipping, which clip_grad_norm_ returns: think about what it does to the gradient itself",
            ),
            0.02: (None, "the scale factor: think about the norm of the gradient once it is multiplied by it"),
        },
    ),
    Prediction(
        id="08.later_inputs_move",
        question="The decoder inputs of both rows change from step 4 on (8 steps): which steps' logits move?",
        kind="set",
        answer={4, 5, 6, 7},
        section="08 · The whole model",
        known_wrong={
            (0, 1, 2, 3, 4, 5, 6, 7): (
                "decoder_self_attention_not_causal",
                "every step; but the causal mask hides the later inputs from the earlier steps",
            ),
            (5, 6, 7): (None, "the steps after 4: think about the diagonal of the causal mask"),
        },
    ),
    Prediction(
        id="08.shuffled_source",
        question="Without positional encodings, shuffle the source symbols: how do the decoder's logits change? "
        "('not at all', 'a little' or 'completely')",
        kind="choice",
        answer="not at all",
        choices=("not at all", "a little", "completely"),
        section="08 · Ablation: no positional encoding",
        known_wrong={
            "a little": (
                None,
                "what a model that knew the order would give; without positions nothing in it "
                "depends on the order of the source",
            ),
            "completely": (
                None,
                "what a model that knew the order would give; without positions nothing in it "
                "depends on the order of the source",
            ),
        },
    ),
    Prediction(
        id="08.length_14",
        question="Trained on lengths 4-12, which keeps more exact accuracy at length 14: 'gru with attention' or "
        "'transformer' (plain positions)?",
        kind="choice",
        answer="gru with attention",
        choices=("gru with attention", "transformer"),
        section="08 · Beyond the training lengths",
        known_wrong={
            "transformer": (
                None,
                "the model that is better on the training lengths; past them the plain "
                "Transformer meets position encodings it never saw",
            ),
        },
    ),
    Prediction(
        id="08.long_run_enough",
        question="Plain positions trained with the randomized-position model's long run: more than half of "
        "lengths 13-16 exact? (True or False)",
        kind="choice",
        answer=False,
        choices=(True, False),
        section="08 · Beyond the training lengths",
        known_wrong={True: (None, "the story 'it just needed more training'; the run below tests it")},
    ),
    Prediction(
        id="08.decoder_self_attention",
        question="In the explorer, which attention spreads its rows more evenly over the keys they may read: "
        "'decoder self-attention' or 'cross-attention'?",
        kind="choice",
        answer="decoder self-attention",
        choices=("decoder self-attention", "cross-attention"),
        section="08 · Explore it yourself",
        known_wrong={
            "cross-attention": (
                None,
                "the attention whose rows sit on one or two source positions (the anti-diagonal above); compare its "
                "rows with the decoder's self-attention rows in the explorer",
            ),
        },
    ),
]
