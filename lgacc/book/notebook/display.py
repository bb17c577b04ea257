"""How a notebook shows things: HTML and Markdown displayed (printed outside IPython), and a
sentence instead of a traceback where a result cannot be computed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["show_html", "show_markdown", "show_unavailable", "try_show"]


def show_html(text: str) -> None:
    """Display HTML from code (plain Python: print it)."""
    try:
        from IPython.display import HTML, display
    except ImportError:
        print(text)
    else:
        display(HTML(text))


def show_markdown(text: str) -> None:
    """Display Markdown from code; the book parses it as MyST (``nb_render_markdown_format: myst``),
    so pipe tables and ``$...$`` / ``$$...$$`` math render as they do in the pages' own text."""
    try:
        from IPython.display import Markdown, display
    except ImportError:
        print(text)
    else:
        display(Markdown(text))


def show_unavailable(what: str, reason: str) -> None:
    """One plain sentence where a result cannot be computed on this hardware."""
    show_markdown(f"```{{note}}\n{what} cannot be computed for this hardware: {reason}\n```")


def try_show(what: str, function, *args, **kwargs) -> Any:
    """Call a library function; on failure say so in a sentence instead of a traceback."""
    try:
        return function(*args, **kwargs)
    except Exception as error:  # a page must say what failed, not stop the book
        show_unavailable(what, f"{type(error).__name__}: {error}")
        return None
