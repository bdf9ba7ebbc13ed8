"""The attention explorer in JupyterLab: click a query token, read the weights the page shows.

A scratch notebook (in a temporary folder, served by its own JupyterLab from lab_server.py) builds
the explorer on lesson 08's shipped Transformer and on lesson 05's role model. In headless
Chromium: Run > Run All Cells, wait for the widget, click the cross-attention view and a query
token's button, and read every weight cell's data attributes (layer, head, key, weight). They must
equal the model's own weights for that query, computed here in the test process by the model's
API (greedy_decode's cross-attention; the role model's returned weights). Then type a new input,
press Enter, and check that the table now holds the model's weights for the new input.
"""

from __future__ import annotations

import time

import nbformat
import numpy as np
import pytest
from lab_server import LabServer
from nbformat.v4 import new_code_cell, new_notebook

pytestmark = pytest.mark.browser

NOTEBOOK = "explorer_scratch.ipynb"
ROLE_STEPS = 60  # training steps of the scratch role model (deterministic: seed 0, one thread)
CELLS = [
    "from course_utils import role_task\n"
    "from course_utils.reversal import checkpoints, views\n"
    'transformer = checkpoints.load_pretrained("transformer")\n'
    'views.explore_seq2seq(transformer, ["abcdefg", "hij"])',
    f"role_model, _ = role_task.train_role_model(steps={ROLE_STEPS}, seed=0)\n"
    "role_task.explore_role_model(role_model, num_examples=3)",
]
EXPLORER = ".jp-NotebookPanel:not(.lm-mod-hidden) .attn-explorer"
CELLS_JS = """cells => cells.map(c => [+c.dataset.layer, +c.dataset.head, +c.dataset.key,
                                    parseFloat(c.dataset.weight), c.dataset.masked === 'true'])"""


@pytest.fixture(scope="module")
def explorer_lab(chromium_path, tmp_path_factory):
    root = tmp_path_factory.mktemp("explorer_root")
    nb = new_notebook(cells=[new_code_cell(source) for source in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / NOTEBOOK)
    server = LabServer(root, tmp_path_factory.mktemp("explorer_lab_state"))
    server.start()
    yield server
    try:
        for session in server.api("api/sessions"):
            server.api(f"api/sessions/{session['id']}", method="DELETE")
    except OSError:
        pass
    server.stop()


def _kernel_idle(lab) -> bool:
    for session in lab.api("api/sessions"):
        if session.get("path") == NOTEBOOK and session.get("kernel"):
            kernel = lab.api(f"api/kernels/{session['kernel']['id']}")
            return kernel.get("execution_state") == "idle" and kernel.get("connections", 0) >= 1
    return False


def _wait(page, condition, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        page.wait_for_timeout(300)
    pytest.fail(f"timed out after {seconds:g} s waiting for {what}")


def _shown_weights(page, explorer, heads: int, keys: int) -> np.ndarray:
    """The weight cells of one explorer's table as (layers, heads, keys), once it holds heads * keys per layer."""
    cells_locator = explorer.locator("table.attn-weights td[data-weight]")
    _wait(page, lambda: cells_locator.count() % (heads * keys) == 0 and cells_locator.count() > 0, "the weight cells")
    cells = cells_locator.evaluate_all(CELLS_JS)
    layers = 1 + max(c[0] for c in cells)
    assert len(cells) == layers * heads * keys, f"{len(cells)} weight cells for {heads} heads and {keys} keys"
    shown = np.full((layers, heads, keys), np.nan)
    for layer, head, key, weight, _ in cells:
        shown[layer, head, key] = weight
    return shown


def _open_and_run(page, lab) -> None:
    page.goto(lab.url(f"lab/tree/{NOTEBOOK}", reset=""))
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook", timeout=90_000)
    _wait(page, lambda: _kernel_idle(lab), "the kernel to be idle and connected")
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-content .lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.wait_for_selector(f"{EXPLORER} table.attn-weights", timeout=120_000)


def test_clicked_query_shows_the_transformers_weights(page, explorer_lab, screenshot_dir):
    from course_utils import data
    from course_utils.reversal import checkpoints, decoding

    model = checkpoints.load_pretrained("transformer")

    def cross_attention(text: str) -> np.ndarray:  # the model's own weights: (heads, steps, src_len)
        batch = data.collate([data.encode(text)])
        _, weights = decoding.greedy_decode(model, batch.src, batch.src_lengths, return_attention=True)
        return weights[0].double().numpy()

    _open_and_run(page, explorer_lab)
    first = page.locator(EXPLORER).first
    first.locator(".widget-toggle-button", has_text="cross-attention").click()
    first.locator(".attn-query-4").click()
    page.wait_for_selector(f'{EXPLORER} table.attn-weights[data-view="cross-attention"][data-query="4"]')
    expected = cross_attention("abcdefg")[:, 4, :]  # query 4: the step that writes "c"
    shown = _shown_weights(page, first, heads=4, keys=7)
    np.testing.assert_allclose(shown[0], expected, atol=1e-5)
    assert first.locator(".attn-query-info").inner_text() == "query 4: writes c, reads d"

    text_box = first.locator(".widget-text input")
    text_box.fill("jabba")
    text_box.press("Enter")
    _wait(page, lambda: "abbaj" in first.inner_text(), "the output of the new input")
    page.wait_for_selector(f'{EXPLORER} table.attn-weights[data-view="cross-attention"][data-query="4"]')
    shown = _shown_weights(page, first, heads=4, keys=5)
    np.testing.assert_allclose(shown[0], cross_attention("jabba")[:, 4, :], atol=1e-5)
    assert not np.allclose(shown[0, :, :5], expected[:, :5], atol=1e-3)  # the attention moved
    first.screenshot(path=str(screenshot_dir / "explorer_transformer.png"))
    assert not page.page_errors, page.page_errors


def test_clicked_query_shows_the_role_models_weights(page, explorer_lab, screenshot_dir):
    import torch

    from course_utils import role_task

    _open_and_run(page, explorer_lab)
    second = page.locator(EXPLORER).nth(1)
    second.locator(".attn-query-7").click()
    page.wait_for_selector(f'{EXPLORER} table.attn-weights[data-view="self-attention"][data-query="7"]')
    text = second.locator(".widget-text input").input_value()
    model, _ = role_task.train_role_model(steps=ROLE_STEPS, seed=0)
    ids = role_task.parse_role_sequence(text, model.config)
    with torch.no_grad():
        _, weights = model(torch.tensor([ids]))  # (1, heads, seq_len, seq_len)
    shown = _shown_weights(page, second, heads=model.config.num_heads, keys=len(ids))
    np.testing.assert_allclose(shown[0], weights[0, :, 7].double().numpy(), atol=1e-5)
    second.screenshot(path=str(screenshot_dir / "explorer_role_model.png"))
    assert not page.page_errors, page.page_errors
