"""Issue 26 section 1 and issue 27's "a checker no answer can fool": what an answer is and does, judged.

Each test plants one wrong answer (or one attack) the way a student's cell would, through ``checks.check``, and
asserts the verdict names what breaks. Every one fails without the mechanism it tests (contract, in-place
changes, tampering, BaseException, crash site, fresh sizes, modes, gradients, stated constraints).
"""

import math
import signal
import sys

import numpy as np
import pytest
import torch

from course_utils import checks
from course_utils.checking import engine, extra_checks, integrity, preparing
from course_utils.checking.model import Case, Exercise
from course_utils.lessons.lesson_01 import core
from course_utils.lessons.lesson_01 import exercises as lesson_01

SOFTMAX = "01.softmax_along"


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _line(capsys) -> str:
    return capsys.readouterr().out


# ---- 1. the return contract ---------------------------------------------------------------------------------


def test_a_list_where_an_array_is_promised_is_refused(capsys):
    def softmax_along(x, axis=-1):
        return _softmax(x, axis).tolist()

    checks.check(SOFTMAX, softmax_along)
    out = _line(capsys)
    assert out.startswith("❌") and "must be a NumPy array" in out and "returned a list" in out


def test_a_tensor_where_an_array_is_promised_is_refused(capsys):
    def softmax_along(x, axis=-1):
        return torch.from_numpy(_softmax(x, axis))

    checks.check(SOFTMAX, softmax_along)
    out = _line(capsys)
    assert out.startswith("❌") and "must be a NumPy array" in out and "tensor" in out


def test_float32_where_float64_is_promised_is_refused(capsys):
    def softmax_along(x, axis=-1):
        return _softmax(x, axis).astype(np.float32)

    verdict = engine.judge(core.SOFTMAX_ALONG, softmax_along)
    # float32 rounding may already fail the values; if they pass, the dtype must not
    assert verdict.status == "wrong"
    if "float64" in verdict.detail:
        assert "must hold float64 values" in verdict.detail and "float32" in verdict.detail


def _number_exercise():
    return Exercise(
        id="99.scale",
        section="99 · Test",
        make_cases=lambda: [Case((64,)), Case((9,))],
        reference=lambda d_head: 1 / math.sqrt(d_head),
        variants=(),
    )


def test_a_one_element_array_or_a_tensor_that_requires_grad_where_a_number_is_promised_is_refused():
    exercise = _number_exercise()

    def as_array(d_head):
        return np.array([1 / math.sqrt(d_head)])

    def as_tensor(d_head):
        return torch.tensor(1 / math.sqrt(d_head), dtype=torch.float64, requires_grad=True) * 1.0

    for answer, words in ((as_array, "an array of shape (1,)"), (as_tensor, "still requires grad")):
        verdict = engine.judge(exercise, answer)
        assert verdict.status == "wrong" and "must be a number" in verdict.detail, verdict.detail
        assert words in verdict.detail, verdict.detail

    def as_float(d_head):
        return 1 / math.sqrt(d_head)

    assert engine.judge(exercise, as_float).status == "passed"


def test_returns_is_declared_as_data_and_a_bad_word_is_refused():
    with pytest.raises(ValueError, match="returns must be one of"):
        Exercise(id="99.x", section="s", make_cases=list, reference=len, returns="lists")
    with pytest.raises(TypeError, match="returns must be one of"):
        Exercise(id="99.x", section="s", make_cases=list, reference=len, returns=(3,))


def test_pen_and_paper_lists_stay_right_where_returns_says_array_like():
    exercise = core.BY_HAND_NEW_QUERY
    assert exercise.returns == "array_like"
    assert engine.judge(exercise, core.by_hand_new_query_rounded).status == "passed"


# ---- 2. what it touches --------------------------------------------------------------------------------------


def test_an_input_changed_in_place_is_named_by_the_answers_own_parameter_name(capsys):
    def softmax_along(scores, axis=-1):
        scores -= scores.max(axis=axis, keepdims=True)  # rewrites the lesson's own variable
        e = np.exp(scores)
        return e / e.sum(axis=axis, keepdims=True)

    checks.check(SOFTMAX, softmax_along)
    out = _line(capsys)
    assert out.startswith("❌")
    assert "changed its argument `scores` in place" in out and "the lesson's own variable would change too" in out


def test_a_module_parameter_changed_by_a_forward_pass_is_named():
    from course_utils.lessons.lesson_04 import module

    base = module.MULTI_HEAD_MODULE.variants[0]

    class Drifting(base):
        def forward(self, *args, **kwargs):
            result = super().forward(*args, **kwargs)
            with torch.no_grad():
                self.query_proj.bias.add_(1e-3)  # right this time; every call moves the weights a little
            return result

    Drifting.__name__ = base.__name__
    verdict = engine.judge(module.MULTI_HEAD_MODULE, Drifting)
    assert verdict.status == "wrong"
    assert "query_proj.bias" in verdict.detail and "in place" in verdict.detail, verdict.detail


# ---- 8. no answer can fool the checker -------------------------------------------------------------------------


class _Liar(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(self), dtype=bool)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return np.ones(np.broadcast_shapes(*(np.shape(x) for x in inputs)), dtype=bool)


def test_an_ndarray_subclass_whose_eq_says_yes_is_judged_as_its_plain_data(capsys):
    def softmax_along(x, axis=-1):
        return np.zeros(np.shape(x)).view(_Liar)

    checks.check(SOFTMAX, softmax_along)
    out = _line(capsys)
    assert out.startswith("❌"), out


@pytest.mark.parametrize("name", ["allclose", "isclose", "array_equal"])
def test_replacing_a_numpy_comparison_is_refused_by_name_and_put_back(name, capsys):
    original = getattr(np, name)

    def softmax_along(x, axis=-1):
        setattr(np, name, lambda *a, **k: True)
        return np.zeros(np.shape(x))

    try:
        checks.check(SOFTMAX, softmax_along)
    finally:
        assert getattr(np, name) is original  # the check put it back
        setattr(np, name, original)
    out = _line(capsys)
    assert out.startswith("❌") and f"replaced `np.{name}`" in out


def test_replacing_the_engines_compare_is_refused(capsys):
    from course_utils.checking import compare as comparer
    from course_utils.checking import naming  # the engine's comparison of a result with the right one

    original_engine, original_module = naming.compare, comparer.compare

    def softmax_along(x, axis=-1):
        naming.compare = lambda *a, **k: None
        comparer.compare = lambda *a, **k: None
        return np.zeros(np.shape(x))

    checks.check(SOFTMAX, softmax_along)
    out = _line(capsys)
    assert naming.compare is original_engine and comparer.compare is original_module
    assert out.startswith("❌") and "replaced" in out and "compare" in out


def test_switching_off_the_delegation_watcher_is_refused(capsys):
    from course_utils import numpy_attention

    def softmax_along(x, axis=-1):
        sys.setprofile(None)  # so that the course's softmax is not seen
        return numpy_attention.softmax(x, axis=axis)

    checks.check(SOFTMAX, softmax_along)
    out = _line(capsys)
    assert out.startswith("❌") and "switched off the check's watcher (sys.setprofile)" in out


def test_a_trace_function_set_by_the_answer_is_refused(capsys):
    def softmax_along(x, axis=-1):
        sys.settrace(lambda *a: None)
        return _softmax(x, axis)

    previous = sys.gettrace()
    checks.check(SOFTMAX, softmax_along)
    out = _line(capsys)
    assert sys.gettrace() is previous
    assert out.startswith("❌") and "sys.settrace" in out


@pytest.mark.parametrize("raised", [SystemExit, KeyboardInterrupt, GeneratorExit])
def test_a_base_exception_raised_by_an_answer_does_not_escape_the_check(raised, capsys):
    def softmax_along(x, axis=-1):
        raise raised()

    returned = checks.check(SOFTMAX, softmax_along)
    out = _line(capsys)
    assert out.startswith("💥") and raised.__name__ in out
    assert returned is core.softmax_along


def test_a_real_interrupt_still_stops_the_check():
    import os

    def softmax_along(x, axis=-1):
        os.kill(os.getpid(), signal.SIGINT)  # what the kernel's ■ button sends
        for _ in range(10_000_000):
            pass
        return _softmax(x, axis)

    with pytest.raises(KeyboardInterrupt):
        checks.check(SOFTMAX, softmax_along)


def test_plain_keeps_plain_objects_and_converts_subclasses():
    a = np.arange(3.0)
    assert integrity.plain(a) is a
    assert type(integrity.plain(a.view(_Liar))) is np.ndarray

    class Float(float):
        def __float__(self):
            return 9.0

    assert type(integrity.plain(Float(2.0))) is float and integrity.plain(Float(2.0)) == 2.0


# ---- 7. where a crash is ---------------------------------------------------------------------------------------


def test_a_crash_inside_another_of_the_students_functions_names_that_function(capsys):
    namespace: dict = {}
    exec(compile("def my_softmax(x, axis):\n    return x.no_such_method()\n", "<cell-12>", "exec"), namespace)
    helper = namespace["my_softmax"]

    def softmax_along(x, axis=-1):
        return helper(x, axis)

    checks.check(SOFTMAX, softmax_along)
    out = _line(capsys)
    assert out.startswith("💥") and "in `my_softmax`" in out and "your line" not in out


# ---- 5. fresh sizes --------------------------------------------------------------------------------------------


def _sized_exercise():
    def make(q_len, k_len):
        rng = np.random.default_rng(0)
        return [Case((rng.normal(size=(q_len, k_len)),), "fresh")]

    return Exercise(
        id="99.fresh_softmax",
        section="99 · Test",
        make_cases=lambda: [Case((np.arange(8.0).reshape(2, 4),))],
        reference=lambda x: _softmax(x, -1),
        fresh=make,
    )


def test_fresh_sizes_are_distinct_never_2_or_4_and_reproducible():
    exercise = _sized_exercise()
    sizes = extra_checks.draw_sizes(exercise)
    assert sizes == extra_checks.draw_sizes(exercise)
    assert len(set(sizes.values())) == len(sizes) and not {2, 4} & set(sizes.values())


def test_an_answer_right_only_at_the_fixed_sizes_fails_at_fresh_sizes_reported_by_their_sizes():
    exercise = _sized_exercise()

    def only_four_keys(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e[:, :4].sum(axis=-1, keepdims=True)  # right only when k_len is 4

    verdict = engine.judge(exercise, only_four_keys)
    sizes = extra_checks.draw_sizes(exercise)
    assert verdict.status == "wrong" and "at fresh sizes" in verdict.detail
    assert f"q_len={sizes['q_len']}" in verdict.detail and f"k_len={sizes['k_len']}" in verdict.detail
    assert engine.judge(exercise, lambda x: _softmax(x, -1)).status == "passed"


# ---- 3. gradients and 4. modes (lesson 04's module) --------------------------------------------------------------


def _module_variant():
    from course_utils.lessons.lesson_04 import module

    return module.MULTI_HEAD_MODULE, module.MULTI_HEAD_MODULE.variants[0]


def test_a_module_whose_output_is_detached_is_named_as_cutting_the_gradient():
    exercise, base = _module_variant()

    class Detached(base):
        def forward(self, *args, **kwargs):
            output, weights = super().forward(*args, **kwargs)
            return output.detach(), weights.detach()  # the values are right; nothing trains through them

    Detached.__name__ = base.__name__
    verdict = engine.judge(exercise, Detached)
    assert verdict.status == "wrong" and "cut from the graph" in verdict.detail, verdict.detail


def test_a_module_that_detaches_its_query_is_named_with_what_receives_no_gradient():
    exercise, base = _module_variant()

    class QueryDetached(base):
        def forward(self, query, *args, **kwargs):
            return super().forward(query.detach(), *args, **kwargs)

    QueryDetached.__name__ = base.__name__
    verdict = engine.judge(exercise, QueryDetached)
    # case 1 is self-attention (query and key_value are one tensor): it receives less than the course's
    assert verdict.status == "wrong" and "the gradient" in verdict.detail, verdict.detail
    assert "`query`" in verdict.detail  # the answer's own name for the input


def test_a_module_that_never_applies_dropout_is_refused_in_training_mode():
    exercise, base = _module_variant()

    class NoDropout(base):
        def forward(self, *args, **kwargs):
            saved, self.dropout.p = self.dropout.p, 0.0
            try:
                return super().forward(*args, **kwargs)
            finally:
                self.dropout.p = saved

    NoDropout.__name__ = base.__name__
    verdict = engine.judge(exercise, NoDropout)
    assert verdict.status == "wrong" and "training mode" in verdict.detail, verdict.detail
    assert engine.judge(exercise, base).status == "passed"


# ---- 6. the exercise's own stated constraint ----------------------------------------------------------------------


def test_a_tiled_pass_that_builds_the_whole_score_matrix_is_refused():
    from course_utils.lessons.lesson_06 import tiling

    def tiled_attention(q, k, v, block):
        scores = q @ k.T / math.sqrt(q.shape[1])  # (q_len, k_len): every tile at once
        return _softmax(scores, -1) @ v

    verdict = engine.judge(tiling.TILED_ATTENTION, tiled_attention)
    assert verdict.status == "wrong" and "more than one tile" in verdict.detail, verdict.detail


def test_a_causal_tiled_pass_that_computes_future_tiles_is_refused():
    from course_utils.lessons.lesson_06 import exercises as lesson_06
    from course_utils.lessons.lesson_06 import tiling

    def causal_tiled_attention(q, k, v, block):
        out = np.zeros((len(q), v.shape[1]))
        for qs in range(0, len(q), block):
            q_blk = q[qs : qs + block]
            state = (np.full((len(q_blk), 1), -np.inf), np.zeros((len(q_blk), 1)), np.zeros((len(q_blk), v.shape[1])))
            for ks in range(0, len(k), block):  # every key tile, the future ones masked away afterwards
                tile = q_blk @ k[ks : ks + block].T / math.sqrt(q.shape[1])
                rows, cols = np.arange(qs, qs + len(q_blk))[:, None], np.arange(ks, ks + tile.shape[1])[None, :]
                tile = np.where(cols <= rows, tile, -np.inf)
                if np.isneginf(tile).all():
                    continue
                state = tiling.flash_step(*state, tile, v[ks : ks + block])
            out[qs : qs + block] = state[2] / state[1]
        return out

    verdict = engine.judge(lesson_06.CAUSAL_TILED_ATTENTION, causal_tiled_attention)
    assert verdict.status == "wrong" and "wholly in the future" in verdict.detail, verdict.detail


def test_a_per_head_loop_that_projects_every_head_at_once_is_refused():
    from course_utils.lessons.lesson_03 import core

    exercise = core.MULTI_HEAD_ATTENTION_LOOP

    def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
        Q, K, V = query @ W_q, key @ W_k, value @ W_v  # every head projected together, split below
        d_head = W_q.shape[1] // num_heads
        total = 0
        for h in range(num_heads):
            cols = slice(h * d_head, (h + 1) * d_head)
            scores = Q[..., cols] @ np.swapaxes(K[..., cols], -1, -2) / math.sqrt(d_head)
            total = total + (_softmax(scores, -1) @ V[..., cols]) @ W_o[cols]
        return total

    verdict = engine.judge(exercise, multi_head_attention_loop)
    assert verdict.status == "wrong" and "projects every head together" in verdict.detail, verdict.detail


# ---- more of 3: lesson 07's attention under torch.no_grad(), an in-place change autograd refuses ---------------


def test_scores_computed_under_no_grad_are_named_with_the_parameters_that_receive_none():
    from course_utils.lessons.lesson_07 import parts

    class MyAdditiveAttention(parts.MyAdditiveAttention):
        def forward(self, s, keys, key_mask, projected_keys):
            with torch.no_grad():  # "the scores are only used to pick weights"
                query_part = self.query_proj(s)
                scores = self.score_proj(torch.tanh(query_part[:, None, :] + projected_keys)).squeeze(-1)
            weights = torch.softmax(scores.masked_fill(~key_mask, float("-inf")), dim=-1)
            return (weights[:, None, :] @ keys).squeeze(1), weights

    verdict = engine.judge(parts.MY_ADDITIVE_ATTENTION, MyAdditiveAttention)
    assert verdict.status == "wrong" and "cuts the gradient" in verdict.detail, verdict.detail
    assert "`query_proj.weight`" in verdict.detail and "`score_proj.weight`" in verdict.detail


def test_an_in_place_change_autograd_refuses_is_named():
    from course_utils.lessons.lesson_07 import parts

    class MyAdditiveAttention(parts.MyAdditiveAttention):
        def forward(self, s, keys, key_mask, projected_keys):
            hidden = torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)
            scores = self.score_proj(hidden).squeeze(-1)
            scores = scores.masked_fill(~key_mask, float("-inf"))
            weights = torch.softmax(scores, dim=-1)
            context = (weights[:, None, :] @ keys).squeeze(1)
            weights.mul_(1.0)  # in place on softmax's output, which its backward needs
            return context, weights

    verdict = engine.judge(parts.MY_ADDITIVE_ATTENTION, MyAdditiveAttention)
    assert verdict.status == "wrong" and "in-place change" in verdict.detail, verdict.detail


# ---- more of 5: every fresh field, and a floored square root --------------------------------------------------


def test_every_exercise_with_fresh_sizes_draws_distinct_sizes_and_its_reference_runs_on_them():
    from course_utils.checking import registry
    from course_utils.checking.runner import course_defaults

    with_fresh = [e for e in registry.EXERCISES.values() if e.fresh is not None]
    assert len(with_fresh) >= 20
    lessons = {e.lesson for e in with_fresh}
    assert {"00", "01", "02", "03", "04", "06"} <= lessons
    for exercise in with_fresh:
        sizes, cases = extra_checks.fresh_cases(exercise)
        values = list(sizes.values())
        assert len(set(values)) == len(values) and not {2, 4} & set(values), (exercise.id, sizes)
        with course_defaults():
            for args in cases:
                preparing.call(exercise, exercise.reference, args, as_given=True)


def test_a_floored_square_root_passes_the_fixed_cases_and_fails_at_fresh_sizes():

    def score_scale(d_head, variance):
        return float(math.isqrt(d_head) * variance)  # right for 64, 16, 100 and 1: perfect squares

    verdict = engine.judge(lesson_01.SCORE_SCALE, score_scale)
    assert verdict.status == "wrong" and "at fresh sizes (d_head=" in verdict.detail, verdict.detail


# ---- more of 7: the cell's number under IPython ------------------------------------------------------------------


def test_the_crash_site_names_the_cell_by_its_execution_count(monkeypatch):
    import types

    from course_utils.checking import crash_site

    shell = types.SimpleNamespace(compile=types.SimpleNamespace(_filename_map={"/tmp/ipykernel_1/123.py": 12}))
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert crash_site.cell_number("/tmp/ipykernel_1/123.py") == 12

    namespace: dict = {}
    exec(compile("def softmax(x):\n    return x.nope()\n", "/tmp/ipykernel_1/123.py", "exec"), namespace)

    def attend(x):
        return namespace["softmax"](x)

    try:
        attend(np.ones(2))
    except AttributeError as exc:
        words = crash_site.crash_words(exc, attend, {attend.__code__}, {"/tmp/ipykernel_1/123.py": "softmax_along"})
    assert words.startswith(" (in `softmax`, defined in the cell of softmax_along (In [12]), its line 2"), words


def test_cross_attention_on_detached_memory_names_memory():
    from course_utils.checking import registry

    exercise = registry.get("08.decoder_layer")
    base = exercise.variants[0]

    class DecoderLayer(base):
        def forward(self, x, memory, *args, **kwargs):
            return super().forward(x, memory.detach(), *args, **kwargs)  # the encoder would never learn

    verdict = engine.judge(exercise, DecoderLayer)
    assert verdict.status == "wrong" and "cuts the gradient: `memory` receives none" in verdict.detail, verdict.detail


def test_a_notebook_with_grad_switched_off_does_not_make_a_right_module_look_cut():
    exercise, base = _module_variant()
    previous = torch.is_grad_enabled()
    torch.set_grad_enabled(False)  # a notebook cell that left grad off
    try:
        verdict = engine.judge(exercise, base)
    finally:
        torch.set_grad_enabled(previous)
    assert verdict.status == "passed", verdict.detail


def test_a_tiled_pass_that_broadcasts_the_whole_score_matrix_is_refused_by_its_memory():
    from course_utils.lessons.lesson_06 import tiling

    def tiled_attention(q, k, v, block):
        scores = (q[:, None, :] * k[None, :, :]).sum(-1) / math.sqrt(q.shape[1])  # no @: a broadcast product
        return _softmax(scores, -1) @ v

    verdict = engine.judge(tiling.TILED_ATTENTION, tiled_attention)
    assert verdict.status == "wrong" and "KiB at once" in verdict.detail, verdict.detail
    assert engine.judge(tiling.TILED_ATTENTION, tiling.tiled_attention_lists).status == "passed"


def test_an_answer_that_rebinds_the_engines_own_guards_is_still_refused(capsys):
    originals = engine.output_problem, engine._tampered, integrity.replaced

    def softmax_along(x, axis=-1):
        engine.output_problem = lambda *a, **k: None  # every value "right"
        engine._tampered = lambda *a, **k: None  # and nothing "replaced"
        integrity.replaced = list
        return np.zeros(np.shape(x))

    checks.check(SOFTMAX, softmax_along)
    out = _line(capsys)
    assert (engine.output_problem, engine._tampered, integrity.replaced) == originals  # put back
    assert out.startswith("❌") and "replaced" in out and "engine.output_problem" in out, out


def test_an_index_where_a_label_is_promised_is_a_broken_promise():
    from course_utils.checking import contract, registry

    assert contract.breach(["k4", "k1"], [4, 1]) == (
        "result[0]: must be a str (a label or a name), as the course's is, but your function returned int 4"
    )
    assert contract.breach(["k4"], [np.str_("k4")]) is None  # NumPy's str is a str

    def strongest_key(weights, query_labels, key_labels):
        return [int(i) for i in np.argmax(weights, axis=-1)]  # the positions, not the keys' labels

    verdict = engine.judge(registry.get("01.strongest_key"), strongest_key)
    # named by the contract, or (more precisely) by the relation that finds the positions of `key_labels`
    assert verdict.status == "wrong" and verdict.relation in ("contract", "positions:key_labels"), verdict
    assert "label" in verdict.detail, verdict
