"""Where a crash is: in the answer itself, or in another of the student's functions, named with its cell.

"your line 6" is right only when line 6 is in the function being checked. When the crash is inside another
function the student wrote (the softmax of Exercise 1, called by attention in Exercise 3), the message names
that function and the notebook cell that defined it: ``in `softmax`, defined in the cell of softmax_along (In
[12])``. A cell is found from the code object's file: IPython compiles each cell to its own file name and
remembers its execution count; the exercise is the one whose check handed back a function from that cell.

:func:`cause` says *what* went wrong in a common crash, in the student's words (the two shapes of a matrix
product whose inner sizes disagree, ``.view`` after a transpose, a bool mask used as an index, two dtypes in one
operation, an in-place change autograd needs undone, ...), found from the exception's type and message, never
from the exercise: every exercise's crashes are explained by the same table.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import re
import sys
import traceback
from pathlib import Path

from course_utils.checking.compare import shorten
from course_utils.checking.runner import ENGINE_DIR, PACKAGE_DIR, student_line

__all__ = ["crash_words", "cell_number", "cause", "CAUSES"]

_CHECKS_FILE = PACKAGE_DIR + "/checks.py"


def cell_number(filename: str) -> int | None:
    """The ``In [N]`` of the notebook cell compiled to ``filename``, when running under IPython; else None."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None) if ipython is not None else None
    shell = get() if get is not None else None
    mapping = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if isinstance(mapping, dict):
        number = mapping.get(filename)
        return number if isinstance(number, int) else None
    return None


def _is_library(filename: str) -> bool:
    return (
        filename.startswith(PACKAGE_DIR)
        or "site-packages" in filename
        or filename.startswith((sys.prefix, sys.base_prefix))
        or filename.startswith("<frozen")
    )


def crash_words(exc, answer, codes, cells_by_file: dict | None = None) -> str:
    """`` (your line N: `code`)`` inside the answer, or `` (in `helper`, defined in the cell of X (In [12]), its
    line N: `code`)`` inside another of the student's functions; empty when no student frame is found.

    ``answer`` is the function :func:`~course_utils.checking.runner.student_line` reads (a class's
    ``__init__``), ``codes`` the code objects of everything the answer defines (a class's every method);
    ``cells_by_file`` maps a code object's file to the title of the exercise whose check handed back a function
    defined there.
    """
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(ENGINE_DIR) and f.filename != _CHECKS_FILE
    ]
    own_files = {c.co_filename for c in codes}
    mine = [f for f in frames if f.filename in own_files or not _is_library(f.filename)]
    if not mine:
        return _call_words(exc, answer)
    frame = mine[-1]
    if not codes or any(frame.filename == c.co_filename and frame.name == c.co_name for c in codes):
        return student_line(exc, answer)
    place = ""
    title = (cells_by_file or {}).get(frame.filename)
    number = cell_number(frame.filename)
    if title:
        place = f", defined in the cell of {title}"
        if number is not None:
            place += f" (In [{number}])"
    elif number is not None:
        place = f", defined in the cell In [{number}]"
    elif frame.filename in own_files:
        place = ", defined in the same cell"
    text = f" (in `{frame.name}`{place}, its line {frame.lineno}"
    if frame.line:
        text += f": `{shorten(frame.line, 100)}`"
    last = frames[-1]
    if last is not frame:
        text += f", inside {Path(last.filename).stem}.{last.name}"
    return text + ")"


def _call_words(exc, answer) -> str:
    """`` (when the check called your `name`)`` for a TypeError about the answer's own signature, else empty: the
    call itself failed, before any line of the answer ran."""
    if not isinstance(exc, TypeError):
        return ""
    name = getattr(answer, "__qualname__", None) or getattr(answer, "__name__", None)
    try:
        text = str(exc)
    except Exception:
        return ""
    if not name or not re.match(rf"{re.escape(name)}\(\) (?:takes|got|missing)", text):
        return ""
    shown = name.split(".")[0] if name.endswith("__init__") else name
    return f" (when the check called your `{shown}`: its signature does not take the arguments the exercise passes)"


# ---------------------------------------------------------------------------------------------
# what went wrong, in words: one table for every exercise
# ---------------------------------------------------------------------------------------------

_MATMUL = (
    "a matrix product whose inner sizes do not agree: in `A @ B` the last axis of A must have the size of B's "
    "second-to-last axis"
)
CAUSES = (
    (
        "matmul_shapes",
        r"mismatch in its core dimension 0.*?\(size (?P<right>\d+) is different from (?P<left>\d+)\)",
        _MATMUL + " (here the left operand's last axis has {left} and the right operand's second-to-last has "
        "{right}). Which axis did you transpose? `.T` reverses every axis of a batched array; swap the last two "
        "(`np.swapaxes(x, -1, -2)`, `x.transpose(-2, -1)`)",
    ),
    (
        "matmul_shapes",
        r"shapes cannot be multiplied \((?P<a>\d+)x(?P<left>\d+) and (?P<right>\d+)x(?P<b>\d+)\)",
        _MATMUL + " (here {a}x{left} times {right}x{b}: {left} and {right} must be equal). Is a weight or an "
        "input transposed, or is it the wrong one?",
    ),
    (
        "matmul_shapes",
        r"batch2 tensor|batch1 and batch2|Expected size for first two dimensions|contraction|"
        r"size mismatch, (?:got|m1)",
        _MATMUL + " (or their batch axes differ). Which axis did you transpose?",
    ),
    (
        "matmul_shapes",
        r"shapes \((?P<a>[\d, ]+)\) and \((?P<b>[\d, ]+)\) not aligned: (?P<left>\d+) \(dim \d+\) != (?P<right>\d+)",
        _MATMUL + " (here ({a}) times ({b}): {left} and {right} must be equal). Is the second operand missing "
        "its transpose, so that features meet features?",
    ),
    (
        "einsum_subscripts",
        r"(?P<which>output|operand) has more dimensions than subscripts given in einstein sum",
        "an einsum whose subscripts name fewer axes than the arrays have: every axis needs a letter, or `...` "
        "for the batch axes in front, and here the {which} has axes with neither",
    ),
    (
        "einsum_subscripts",
        r"einsum\(\): the number of subscripts in the equation \((?P<n>\d+)\) does not match the number of "
        r"dimensions \((?P<d>\d+)\)",
        "an einsum whose subscripts name {n} axes for an operand that has {d}: every axis needs a letter, or "
        "`...` for the batch axes in front",
    ),
    (
        "einsum_subscripts",
        r"einsum\(\): subscript (?P<x>\w) has size (?P<a>\d+) for operand \d+ which does not broadcast with "
        r"previously seen size (?P<b>\d+)|remapped shapes \[original->remapped\]",
        "an einsum where one letter stands for axes of different sizes in two operands: a letter shared by two "
        "operands must name axes of the same size (the features of both, not the features of one and the "
        "length of the other)",
    ),
    (
        "bool_arithmetic",
        r"with a bool tensor is not supported",
        "arithmetic (`-`, `1 - mask`) on a bool mask, which PyTorch does not do: a bool mask is turned around "
        "with a logical not",
    ),
    (
        "broadcast_shapes",
        r"could not be broadcast together with (?:remapped )?shapes? (?P<shapes>.+?)(?:$|\n)",
        "an elementwise operation between arrays of shapes {shapes}, which do not broadcast: lined up from the "
        "right, each pair of sizes must be equal or 1. A sum or maximum without `keepdims=True`, or a missing "
        "transpose?",
    ),
    (
        "broadcast_shapes",
        r"size of tensor a \((?P<a>\d+)\) must match the size of tensor b \((?P<b>\d+)\) at non-singleton "
        r"dimension (?P<dim>\d+)",
        "an elementwise operation between tensors whose sizes differ on axis {dim} ({a} and {b}), which do not "
        "broadcast: lined up from the right, each pair of sizes must be equal or 1. An axis swapped, or a "
        "reduction without `keepdim=True`?",
    ),
    (
        "broadcast_shapes",
        r"does not broadcast|not broadcastable|shape mismatch",
        "two arrays whose shapes do not broadcast together: lined up from the right, each pair of sizes must be "
        "equal or 1. Print the shapes of both operands",
    ),
    (
        "view_not_contiguous",
        r"view size is not compatible with input tensor's size and stride",
        "`.view` on a tensor that is not contiguous in memory (after `.transpose` or `.permute`): use "
        "`.reshape(...)`, or call `.contiguous()` before `.view`",
    ),
    (
        "reshape_size",
        r"cannot reshape array of size (?P<n>\d+) into shape (?P<shape>\S+)|shape '(?P<tshape>\[.*?\])' is "
        r"invalid for input of size (?P<tn>\d+)",
        "a reshape to sizes whose product is not the number of values there are: a size taken from the wrong "
        "axis or the wrong input (the queries' length used for the keys?)",
    ),
    (
        "mask_as_index",
        r"boolean index did not match|shape of the mask .* does not match the shape of the indexed tensor|"
        r"too many indices for (?:array|tensor)",
        "a bool mask (or an index) whose shape does not fit the array it indexes: indexing with a mask selects "
        "entries into a flat result; to hide entries keep the shape, with `np.where` or `masked_fill` and a mask "
        "that broadcasts",
    ),
    (
        "mask_dtype",
        r"masked_fill.* only supports boolean masks|expected mask dtype to be Bool|mask.*must be.*bool",
        "a mask that is not bool where a bool mask is needed: build it with a comparison, or convert with `.bool()`",
    ),
    (
        "dtype_mismatch",
        r"expected scalar type (?P<a>\w+) but found (?P<b>\w+)|same dtype|"
        r"Found dtype (?P<c>\w+) but expected (?P<d>\w+)|can't be cast to the desired output type|"
        r"expected .*dtype.* but got",
        "two tensors of different dtypes in one operation (float64 with float32, or an integer tensor): create "
        "new tensors with the dtype of the inputs (`dtype=x.dtype`)",
    ),
    (
        "in_place_autograd",
        r"modified by an inplace operation|leaf Variable that requires grad is being used in an in-place|"
        r"a view of a leaf Variable that requires grad",
        "an in-place change (`+=`, `x[...] = ...`, a method ending in `_`) to a tensor that autograd needs for "
        "the backward pass: write it out of place (`x = x + ...`, `masked_fill` without `_`)",
    ),
    (
        "graph_cut",
        r"does not require grad and does not have a grad_fn|Can't call numpy\(\) on Tensor that requires grad",
        "a result cut from the autograd graph (`.detach()`, `torch.no_grad()`, `.item()` or a NumPy round "
        "trip): keep the computation in torch",
    ),
    (
        "backward_twice",
        r"backward through the graph a second time",
        "a backward pass through the same graph twice: compute the loss again (or once) for every step",
    ),
    (
        "index_past_end",
        r"index (?P<i>-?\d+) is out of bounds for (?:axis|dimension) (?P<axis>\d+) with size (?P<n>\d+)",
        "index {i} on an axis of size {n}: one past its end. Is a loop or a position off by one?",
    ),
    (
        "index_past_end",
        r"index out of range in self",
        "an index past the end of an embedding table: a token id or a position at least the table's size "
        "(counted from 1 instead of 0?)",
    ),
    (
        "index_past_end",
        r"(?:list|tuple|string) index out of range|index .* out of (?:range|bounds)",
        "an index past the end of a sequence: a loop over the wrong length (rows for columns?) or off by one",
    ),
    (
        "axis_out_of_range",
        r"axis (?P<axis>-?\d+) is out of bounds for array of dimension (?P<nd>\d+)|Dimension out of range",
        "an axis that the array does not have: an axis counted for another number of dimensions (count from "
        "the end, -1 and -2, so batch axes do not matter)",
    ),
    (
        "axis_order",
        r"axes don't match array|number of dims don't match in permute|number of dimensions in the tensor input "
        r"does not match",
        "a transpose whose axis order was written for another number of axes: swap only the last two axes "
        "(`np.swapaxes(x, -1, -2)`, `x.transpose(-2, -1)`), whatever the batch axes",
    ),
    (
        "join_sizes",
        r"all the input array dimensions except for the concatenation axis must match|Sizes of tensors must match "
        r"except in dimension|must be equal, but got",
        "arrays joined (concatenate, stack) whose sizes differ on an axis other than the joining one: is one of "
        "them the wrong array, or joined along the wrong axis?",
    ),
    (
        "none_used",
        r"'NoneType'|NoneType",
        "an operation on `None`: an optional argument (default None) used without `if ... is not None`, or a "
        "function that returns nothing",
    ),
    (
        "unpack_count",
        r"too many values to unpack|not enough values to unpack",
        "a result unpacked into another number of names than it holds",
    ),
    (
        "device_mismatch",
        r"Expected all tensors to be on the same device",
        "tensors on different devices in one operation: create new tensors on the inputs' device",
    ),
    (
        "sorted_lengths",
        r"must be sorted in decreasing order",
        "a packed batch whose lengths are not sorted: pass `enforce_sorted=False`",
    ),
    (
        "types_do_not_combine",
        r"unsupported operand type|can only concatenate|must be real number, not|not supported between instances",
        "an operation between values that do not combine (a list where an array is needed?)",
    ),
    (
        "truth_of_array",
        r"Boolean value of Tensor with more than one value|truth value of an array with more than one element",
        "`if`, `and`, `or` or `not` on a tensor or array of many values: Python needs one True or False there. "
        "To ask whether a mask was given write `if mask is not None:`; to combine masks entry by entry use "
        "`&`, `|` and `~`",
    ),
    (
        "float_overflow",
        r"math range error|Numerical result out of range|result too large",
        "a number too large for a float: `math.exp` of a large score overflows. Subtract the (running) maximum "
        "before the exponential, so that every exponent is 0 or below",
    ),
    (
        "assign_shape",
        r"could not broadcast input array from shape (?P<a>\S+) into shape (?P<b>\S+)",
        "an assignment `out[rows] = value` where the value has shape {a} but the slot it goes into has shape "
        "{b}: the slice selects another number of rows than the value holds. Is a loop bound or a slice end "
        "taken from another length (the keys' for the queries', or past the end of a shorter last block)?",
    ),
    (
        "integer_tensor",
        r"not implemented for '(?P<t>Long|Int|Short|Byte|Bool|Char)'|Input dtype must be either a floating point "
        r"or complex dtype\. Got: (?P<g>\w+)",
        "a floating-point operation (exp, softmax, mean, sqrt) on an integer (or bool) tensor: make it float "
        "first (`.float()`, or build it with `dtype=torch.float32`; `torch.tensor(3)` holds an integer)",
    ),
    (
        "argument_count",
        r"takes (?P<n>\d+) positional arguments? but (?P<m>\d+) (?:were|was) given|got an unexpected keyword "
        r"argument '(?P<kw>\w+)'|missing \d+ required positional arguments?",
        "a function called with other arguments than its signature takes. If it is your answer: keep every "
        "parameter of the stub's signature (the check passes each one, the optional ones too), in the same "
        "order and with the same names",
    ),
)


def cause(exc) -> tuple | None:
    """``(key, words)`` for a common crash kind, from the exception's type and message; None when unknown.

    ``words`` completes "What went wrong: ..." (shapes and sizes quoted from the message). Never raises (an
    exception whose ``str`` raises has no cause).
    """
    if isinstance(exc, NameError):
        name = getattr(exc, "name", None) or ""
        return (
            "undefined_name",
            f"the name `{name}` is not defined where your function runs: a notebook variable, or a helper defined "
            "in another cell that has not run?"
            if name
            else "a name that is not defined where your function runs",
        )
    if isinstance(exc, ZeroDivisionError):
        return "division_by_zero", "a division by zero: an empty row or a length of 0?"
    if isinstance(exc, RecursionError):
        return "recursion", "a function that calls itself without end"
    try:
        text = str(exc)
    except Exception:  # an exception that cannot be printed says nothing
        return None
    for key, pattern, words in CAUSES:
        found = re.search(pattern, text, flags=re.DOTALL)
        if found:
            values = {k: v.strip() for k, v in found.groupdict().items() if v is not None}
            try:
                return key, words.format(**values)
            except (KeyError, IndexError):
                return key, re.sub(r" \(here [^)]*\)", "", words)
    return None
