"""One backward step, the answer's against the course's: a torch part that cuts or breaks the gradient is named.

A part whose forward values are right can still train nothing: ``.detach()``, ``torch.no_grad()`` or ``.item()``
inside it leaves its parameters (or its inputs) without a gradient, and an in-place change autograd needs
undone makes the backward pass fail, far from the cause. For every exercise whose reference returns a tensor
that requires grad, :func:`gradient_problem` runs one case through the reference and through the answer with
the same weights and inputs (float inputs made leaves that require grad), takes the same weighted sum of the
outputs, and compares the gradients that reach every parameter of the modules that ran (matched by name) and
every float input. Which receive none, or another one, is said by name.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import copy
import sys
import warnings

from course_utils.checking.compare import safe_str, type_name

__all__ = ["gradient_problem", "GRADIENT_CASES", "GRADIENT_RTOL"]

GRADIENT_CASES = 2
"""How many of an exercise's cases (the first ones whose result needs a gradient) run one backward step."""
GRADIENT_RTOL = 1e-3
"""How far a gradient may lie from the course's, relative to the largest entry of the course's."""


def _tensors(value, depth=0):
    torch = sys.modules.get("torch")
    if torch is None or depth > 6:
        return
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item, depth + 1)


def _holds_torch(args, depth=0) -> bool:
    torch = sys.modules["torch"]
    if isinstance(args, (torch.Tensor, torch.nn.Module)):
        return True
    if isinstance(args, (tuple, list)) and depth < 6:
        return any(_holds_torch(a, depth + 1) for a in args)
    if isinstance(args, dict) and depth < 6:
        return any(_holds_torch(a, depth + 1) for a in args.values())
    return False


def _needs_grad(value) -> list:
    return [t for t in _tensors(value) if t.is_floating_point() and t.requires_grad]


def _input_leaves(args, depth=0, path=()):
    """``[(path, tensor)]`` for every float tensor of the case outside a module (in tuples, lists and dicts)."""
    torch = sys.modules.get("torch")
    if depth > 6:
        return []
    if isinstance(args, torch.Tensor):
        return [(path, args)] if args.is_floating_point() else []
    if isinstance(args, (tuple, list)):
        found = []
        for i, item in enumerate(args):
            found += _input_leaves(item, depth + 1, (*path, i))
        return found
    if isinstance(args, dict):  # a decoder's state: its hidden state must carry the gradient to earlier steps
        found = []
        for key, item in args.items():
            found += _input_leaves(item, depth + 1, (*path, key))
        return found
    return []


def _traced(run, fn, args, seed, is_answer):
    """Run ``fn`` on a copy of ``args`` whose float inputs require grad; the modules whose forward ran, outermost first."""
    torch = sys.modules["torch"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a driver that reads .grad of an input made to require grad
        return _traced_quietly(run, fn, args, seed, is_answer, torch)


def _traced_quietly(run, fn, args, seed, is_answer, torch):
    args = copy.deepcopy(args)
    for _, leaf in _input_leaves(args):
        if leaf.is_leaf:
            leaf.requires_grad_(True)
    seen: list = []
    handle = torch.nn.modules.module.register_module_forward_pre_hook(lambda module, inputs: seen.append(module))
    copies: list = []
    try:
        with torch.enable_grad():  # a notebook that switched grad off does not make the answer look cut
            status, out = run(fn, args, seed, fn_is_answer=is_answer, copies=copies)
    finally:
        handle.remove()
    unique = list({id(m): m for m in seen}.values())
    inner = {id(sub) for m in unique for sub in m.modules() if sub is not m}
    tops = [m for m in unique if id(m) not in inner]
    return status, out, (copies[0] if copies else args), tops


def _backward(out, named):
    """The gradient of a fixed weighted sum of ``out`` for each named tensor (None where none reaches it)."""
    torch = sys.modules["torch"]
    generator = torch.Generator().manual_seed(0)
    loss = None
    for t in _needs_grad(out):
        weight = torch.randn(t.shape, generator=generator, dtype=torch.float64).to(t.dtype)
        term = (t * weight).sum()
        loss = term if loss is None else loss + term
    if loss is None:
        return None
    wanted = [(name, t) for name, t in named if t.requires_grad]
    if not wanted:
        return {}
    grads = torch.autograd.grad(loss, [t for _, t in wanted], allow_unused=True)
    return {name: g for (name, _), g in zip(wanted, grads, strict=True)}


def _arg_modules(args):
    torch = sys.modules["torch"]
    return [(k, a) for k, a in enumerate(args) if isinstance(a, torch.nn.Module)]


def _named_tensors(args, tops) -> list:
    """``[(key, tensor)]``: parameters of the case's modules (``arg0.gru.weight_ih``), of the modules built while
    it ran (``query_proj.weight``), and the float inputs (``input [2][0]``)."""
    named = []
    inside = set()
    for k, module in _arg_modules(args):
        named += [(f"arg{k}.{name}", p) for name, p in module.named_parameters()]
        inside |= {id(m) for m in module.modules()}
    built = [m for m in tops if id(m) not in inside]
    for k, module in enumerate(built):
        prefix = "" if k == 0 else f"module {k + 1}: "
        named += [(f"{prefix}{name}", p) for name, p in module.named_parameters()]
    named += [(("input", *path), t) for path, t in _input_leaves(args)]
    return named


def _shown(key, say_input) -> str:
    """How a message names a parameter (``gru.weight_ih``) or an input (``memory``, by the answer's own name)."""
    if isinstance(key, tuple):
        return say_input(key[1:])
    return key.split(".", 1)[1] if key.startswith("arg") and "." in key and key[3 : key.index(".")].isdigit() else key


def _largest(grad) -> float:
    return float(grad.detach().abs().max()) if grad is not None and grad.numel() else 0.0


def _differs(expected, got, floor) -> bool:
    if expected.shape != got.shape:
        return True
    diff = float((expected.detach().double() - got.detach().double()).abs().max()) if expected.numel() else 0.0
    return diff > GRADIENT_RTOL * max(_largest(expected), floor)


def _listed(names) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:4])
    return shown + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _one_case(exercise, answer, args, seed, run, say_input) -> str | None:
    torch = sys.modules["torch"]
    status, out, ref_args, ref_tops = _traced(run, exercise.reference, args, seed, False)
    if status != "ok":
        return None
    with torch.enable_grad():
        expected = _backward(out, _named_tensors(ref_args, ref_tops))
    if expected is None:
        return None
    status, got_out, got_args, got_tops = _traced(run, answer, args, seed, True)
    if status != "ok":
        return None  # the fixed cases said how it crashes; nothing more to say here
    if not _needs_grad(got_out):
        return (
            "your result is cut from the graph: no gradient reaches any parameter or input through it (the course's "
            "does). Look for a `.detach()`, a `torch.no_grad()` block or a `.item()` on the way to the result"
        )
    try:
        with torch.enable_grad():
            got = _backward(got_out, _named_tensors(got_args, got_tops))
    except BaseException as exc:  # autograd refusing an in-place change, or anything the answer raises
        if isinstance(exc, KeyboardInterrupt):
            raise
        text = safe_str(exc, 160)
        if "inplace" in text or "in-place" in text:
            return (
                f"the backward step through your answer fails ({type_name(exc)}: {text}): an in-place change "
                "(`+=`, `masked_fill_`, `x[...] = `) overwrites a tensor autograd still needs; write it out of place"
            )
        return f"the backward step through your answer fails with {type_name(exc)}: {text}"
    got = got or {}
    floor = 1e-3 * max((_largest(g) for g in expected.values()), default=0.0)  # below it: rounding noise
    missing, different, inputs_missing = [], [], []
    for name, grad in expected.items():
        if _largest(grad) <= floor:
            continue  # (nearly) no gradient in the course's part either: a key bias under a softmax
        mine = got.get(name)
        if mine is None or _largest(mine) == 0.0:
            (inputs_missing if isinstance(name, tuple) else missing).append(_shown(name, say_input))
        elif _differs(grad, mine, floor):
            different.append(_shown(name, say_input))
    if inputs_missing and different and not missing:
        # another route to the same values (a projection recomputed instead of read from an input): the
        # parameters then collect what the input did; a cut gradient leaves something with none instead
        return None
    missing += inputs_missing
    if missing:
        return (
            f"your answer cuts the gradient: {_listed(missing)} receive{'s' if len(missing) == 1 else ''} none after "
            "one backward step (the course's do). Look for a `.detach()`, a `torch.no_grad()` block or an `.item()`"
        )
    if different:
        return (
            f"your answer breaks the gradient: {_listed(different)} receive{'s' if len(different) == 1 else ''} "
            "another gradient than the course's after one backward step, although the forward values agree. Is "
            "something computed outside autograd (`.data`, a NumPy detour, a float64 buffer)?"
        )
    return None


def gradient_problem(exercise, answer, cases, run, say_input=None) -> str | None:
    """None, or the sentence naming what receives no (or another) gradient, for an exercise whose result needs one.

    ``say_input(path)`` names an input of the case by its path (argument index, index inside it), as the answer
    calls it; by default ``input [2][1]``.
    """
    say_input = say_input or (lambda path: "input " + "".join(f"[{i}]" for i in path))
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    tried = 0
    for i, args in enumerate(cases):
        if tried >= GRADIENT_CASES:
            break
        if not _holds_torch(args):
            continue  # a NumPy case: no graph to go backward through
        try:
            found = _one_case(exercise, answer, args, i, run, say_input)
        except (RuntimeError, TypeError, ValueError):
            found = None  # the course's own part does not go backward on this case: nothing to compare
        tried += 1
        if found:
            return f"on case {i + 1}, {found}."
    return None
