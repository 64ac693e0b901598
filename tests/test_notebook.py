"""examples/explore.ipynb runs top to bottom on a machine without a GPU."""

import pathlib

import pytest

NOTEBOOK = pathlib.Path(__file__).parents[1] / "examples" / "explore.ipynb"


@pytest.fixture(scope="module")
def executed():
    for module in ("nbclient", "nbformat", "ipykernel", "matplotlib"):
        pytest.importorskip(module, reason=f"{module} (in the test extra) is not installed")
    import nbclient
    import nbformat

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    return notebook


def _outputs(notebook, source_start):
    cell = next(c for c in notebook.cells if c.cell_type == "code" and c.source.startswith(source_start))
    return cell.outputs


def test_every_cell_runs(executed):
    errors = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, "\n".join(f"{e.ename}: {e.evalue}" for e in errors)


def test_the_compiled_kernel_shows_highlighted_ptx_and_sass(executed):
    (shown,) = [o for o in _outputs(executed, "sig = ") if o.output_type == "execute_result"]
    page = shown.data["text/html"]
    assert "cp.async.bulk.tensor.2d" in page and "UTMALDG.2D" in page and 'title="TMA"' in page


def test_the_arch_error_is_shown(executed):
    (printed,) = _outputs(executed, "try:")
    assert "needs sm_90 or newer" in printed.text


def test_each_swizzle_is_drawn(executed):
    images = [o for o in _outputs(executed, "for swizzle, box in") if "image/png" in o.get("data", {})]
    assert len(images) == 4


def test_the_committed_notebook_carries_no_outputs():
    import json

    cells = json.loads(NOTEBOOK.read_text())["cells"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in cells if c["cell_type"] == "code")
