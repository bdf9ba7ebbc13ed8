"""Property tests: the comparer and the prediction judge never raise, whatever they are given, and answer in one short line."""

import math

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from course_utils import checks
from course_utils.checking import compare as comparer
from course_utils.checking import predictions
from course_utils.checking.model import Prediction


class _Hostile:
    """Every dunder a comparer might touch raises."""

    def __init__(self, which):
        self.which = which

    def __repr__(self):
        raise RuntimeError("repr")

    def __str__(self):
        raise RuntimeError("str")

    def __eq__(self, other):
        raise RuntimeError("eq")

    def __ne__(self, other):
        raise RuntimeError("ne")

    def __len__(self):
        raise RuntimeError("len")

    def __iter__(self):
        raise RuntimeError("iter")

    def __array__(self, *args, **kwargs):
        raise RuntimeError("array")

    def __float__(self):
        raise RuntimeError("float")

    __hash__ = object.__hash__


class _ArrayEq:
    """`==` returns an array: `if a == b` raises."""

    def __eq__(self, other):
        return np.array([True, False])

    __hash__ = object.__hash__


TORCH_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool, torch.complex64]

numpy_arrays = hnp.arrays(
    dtype=st.sampled_from([np.float64, np.float32, np.float16, np.int32, np.bool_, np.complex128, np.uint8]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
)


@st.composite
def tensors(draw):
    array = draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)))
    dtype = draw(st.sampled_from(TORCH_DTYPES))
    t = torch.from_numpy(np.asarray(np.nan_to_num(array, posinf=1e4, neginf=-1e4).clip(-1e4, 1e4))).to(dtype)
    if draw(st.booleans()) and t.dim() >= 1 and dtype not in (torch.bool, torch.complex64):
        t = t.to_sparse()
    return t


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.complex_numbers(),
    st.text(max_size=20),
    st.just(Ellipsis),
)
leaves = st.one_of(
    scalars,
    numpy_arrays,
    tensors(),
    st.builds(_Hostile, st.integers()),
    st.builds(_ArrayEq),
    st.builds(lambda n: (i for i in range(n)), st.integers(0, 3)),  # generators
    st.builds(lambda n: np.zeros(n), st.integers(0, 50_000)),  # large arrays
    st.builds(lambda: np.array([[1.0], [2.0, 3.0]], dtype=object)),  # ragged
)
values = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=5), children, max_size=3),
    ),
    max_leaves=8,
)
references = st.recursive(  # what a reference returns: arrays, tensors, numbers, booleans, tuples of them
    st.one_of(numpy_arrays, tensors(), st.integers(-1000, 1000), st.floats(), st.booleans()),
    lambda children: st.lists(children, min_size=1, max_size=3).map(tuple),
    max_leaves=4,
)


def _one_short_line(message):
    assert message is None or (isinstance(message, str) and "\n" not in message and 0 < len(message) <= 400)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expected=references, got=values, atol=st.floats(0, 1), reveal=st.booleans(), equal_nan=st.booleans())
def test_compare_never_raises(expected, got, atol, reveal, equal_nan):
    _one_short_line(checks.compare(expected, got, atol=atol, reveal=reveal, equal_nan=equal_nan))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expected=values, got=values)
def test_compare_never_raises_on_any_pair(expected, got):
    _one_short_line(checks.compare(expected, got))


@settings(max_examples=100, deadline=None)
@given(value=references)
def test_a_value_matches_itself(value):
    has_nan = False
    try:
        flat = [value] if not isinstance(value, tuple) else list(value)
        for v in flat:
            arr = comparer.to_numpy(v)
            if np.issubdtype(arr.dtype, np.number) and np.isnan(arr.astype(complex)).any():
                has_nan = True
    except Exception:
        has_nan = True
    if isinstance(value, float) and math.isnan(value):
        has_nan = True
    if not has_nan:
        assert checks.compare(value, value) is None
    assert checks.compare(value, value, equal_nan=True) is None


def test_deep_nesting_and_cycles_are_explained():
    deep = [1.0]
    for _ in range(5000):
        deep = [deep]
    _one_short_line(checks.compare([[1.0]], deep))
    cyclic = []
    cyclic.append(cyclic)
    _one_short_line(checks.compare([[1.0]], cyclic))


_NUMBER = Prediction("99.number", "a number?", "number", 1_050_624, known_wrong=())
_SMALL = Prediction("99.small", "a small number?", "number", 0.125, rtol=0.25)
_SHAPE = Prediction("99.shape", "a shape?", "shape", (2, 4, 5, 7))
_INDEX = Prediction("99.index", "an index?", "index", 0)
_CHOICE = Prediction("99.choice", "a choice?", "choice", "nan", choices=("weights", "nan", "inf"))
_SET = Prediction("99.set", "which keys?", "set", {0, 1, 2}, known_wrong={(0, 1): (None, "the keys before it")})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=values)
def test_predictions_answer_any_value_in_words(value):
    for prediction in (_NUMBER, _SMALL, _SHAPE, _INDEX, _CHOICE, _SET):
        verdict = predictions.judge_prediction(prediction, value)
        assert verdict.status in ("right", "wrong", "not_answered")
        assert "\n" not in verdict.message and "nan%" not in verdict.message and "inf%" not in verdict.message


@settings(max_examples=200, deadline=None)
@given(value=st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True)))
def test_number_predictions_never_count_a_factor_of_two_as_right(value):
    for prediction in (_NUMBER, _SMALL):
        verdict = predictions.judge_prediction(prediction, value)
        answer = prediction.value()
        if verdict.status == "right":
            assert answer / 2 < value < answer * 2
