"""Exercises of lesson 08 in which the student writes a part of the model the lesson trains.

Introduced in ``notebooks/08_*.ipynb``. Kept apart from :mod:`course_utils.exercises.lessons_05_08` so
that each lesson's model exercises live next to their cases, references and misconceptions.

``08.my_greedy_decode``: the lesson decodes one sequence by hand; the exercise decodes a whole batch, where
rows reach EOS at different steps. The buggy references below reproduce the mistakes students make there;
:data:`MISCONCEPTIONS` names them, and importing this module makes them known to ``checks.check`` (as
:mod:`course_utils.exercises.lesson_07_models` does). Nothing here runs torch at import time.
"""

from __future__ import annotations

from course_utils import misconceptions as _misconceptions
from course_utils.exercises._model import Exercise

__all__ = ["EXERCISES", "PREDICTIONS", "MISCONCEPTIONS"]

_GREEDY_SECTION = "08 · Greedy decoding, by hand"


# 08 · my_greedy_decode(model, src, src_lengths, max_len) -> (batch, steps) ---------------------
def _greedy_cases():
    from course_utils import data
    from course_utils.reversal import checkpoints

    transformer = checkpoints.load_pretrained("transformer")  # trained: rows reach EOS at their own steps
    gru = checkpoints.load_pretrained("gru_attention")
    mixed = data.collate([data.encode(s) for s in ("abcd", "jihgfedcba", "cab", "aabbcc")])
    long_ = data.collate([data.encode(s) for s in ("abcdefghijabcd", "fade", "bedbeddec")])
    return [
        (transformer, mixed.src, mixed.src_lengths, mixed.src.shape[1] + 2),  # rows finish at different steps
        (transformer, long_.src, long_.src_lengths, long_.src.shape[1] + 2),
        (transformer, mixed.src, mixed.src_lengths, 3),  # max_len binds before any EOS
        (gru, mixed.src, mixed.src_lengths, mixed.src.shape[1] + 2),  # the same contract, another model
    ]


def _greedy_reference(model, src, src_lengths, max_len):
    from course_utils.reversal import decoding

    return decoding.greedy_decode(model, src, src_lengths, max_len)


def _greedy_loop(model, src, src_lengths, max_len, *, feed_back=True, pad_after_eos=True, stop_at_first=False):
    """Greedy decoding by re-running ``model`` on the growing prefix, with one mistake switched on."""
    import torch

    from course_utils.data import BOS, EOS, PAD

    model.eval()
    batch = src.shape[0]
    decoder_input = torch.full((batch, 1), BOS, dtype=torch.long)  # (batch, 1)
    done = torch.zeros(batch, dtype=torch.bool)
    outputs = []
    with torch.no_grad():
        for _ in range(max_len):
            logits = model(src, src_lengths, decoder_input)  # (batch, t, vocab)
            tokens = logits[:, -1].argmax(dim=-1)  # (batch,)
            if pad_after_eos:
                tokens = tokens.masked_fill(done, PAD)
            outputs.append(tokens)
            done = done | (tokens == EOS)
            if bool(done.all()) or (stop_at_first and bool(done.any())):
                break
            if feed_back:
                decoder_input = torch.cat([decoder_input, tokens[:, None]], dim=1)  # (batch, t) -> (batch, t + 1)
            else:
                decoder_input = torch.cat([decoder_input, decoder_input[:, -1:]], dim=1)  # BOS again, never the argmax
    return torch.stack(outputs, dim=1)  # steps x (batch,) -> (batch, steps)


def greedy_argmax_not_fed_back(model, src, src_lengths, max_len):
    return _greedy_loop(model, src, src_lengths, max_len, feed_back=False)


def greedy_no_pad_after_eos(model, src, src_lengths, max_len):
    return _greedy_loop(model, src, src_lengths, max_len, pad_after_eos=False)


def greedy_stops_at_first_eos(model, src, src_lengths, max_len):
    return _greedy_loop(model, src, src_lengths, max_len, stop_at_first=True)


MISCONCEPTIONS = [
    _misconceptions.Misconception(
        "greedy_argmax_not_fed_back",
        "the argmax is not fed back: each step's decoder input must be BOS followed by every token decoded so far",
        _GREEDY_SECTION,
    ),
    _misconceptions.Misconception(
        "greedy_no_pad_after_eos",
        "rows that already emitted EOS keep decoding: after a row's EOS, write PAD in that row",
        _GREEDY_SECTION,
    ),
    _misconceptions.Misconception(
        "greedy_stops_at_first_eos",
        "decoding stops when the first row emits EOS: stop only once every row has emitted it (or at max_len)",
        _GREEDY_SECTION,
    ),
]

_misconceptions.register(MISCONCEPTIONS)  # make them known to checks.check, which names them by id


EXERCISES = [
    Exercise(
        id="08.my_greedy_decode",
        title="my_greedy_decode",
        section=_GREEDY_SECTION,
        function="my_greedy_decode",
        make_cases=_greedy_cases,
        reference=_greedy_reference,
        misconceptions={
            "greedy_argmax_not_fed_back": greedy_argmax_not_fed_back,
            "greedy_no_pad_after_eos": greedy_no_pad_after_eos,
            "greedy_stops_at_first_eos": greedy_stops_at_first_eos,
        },
        forbidden=(
            "course_utils.reversal.decoding:greedy_decode",
            "course_utils.reversal.training:evaluate",
        ),
        hints=(
            "Start every row from BOS: decoder_input = torch.full((batch, 1), data.BOS). Each step, run the model "
            "on the whole prefix, take the argmax of the last step's logits, and append it to the prefix.",
            "Keep done = torch.zeros(batch, dtype=torch.bool). Each step: tokens = logits[:, -1].argmax(-1), then "
            "tokens.masked_fill(done, data.PAD) so finished rows write PAD; done |= tokens == data.EOS; stop when "
            "done.all() or after max_len steps. Return torch.stack(outputs, dim=1): (batch, steps).",
        ),
    ),
]

PREDICTIONS: list = []
