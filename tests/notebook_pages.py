"""Hand-written notebooks for the runner's tests (a helper module, not a test file)."""

from __future__ import annotations

import nbformat


def write_notebook(path, *sources):
    """A notebook at ``path``: the runner's ``parameters`` cell, then one code cell per source."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    parameters = nbformat.v4.new_code_cell('hardware = "a100-80gb"')
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [parameters] + [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(notebook, path)
    return path
