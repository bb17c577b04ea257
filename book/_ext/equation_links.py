"""Cite the paper's equations by number, linked to the derivation that reproduces them.

The code names each formula by its LaTeX label (``eq:critical_batch``) so that grep
finds it; a reader wants "Eq. (2)" and a way to the derivation.  After Sphinx
resolves each page, every label written in the text (plain or as inline code) is
replaced by a link "Eq. (N)" to the derivations page, whose entry for the label
carries the anchor.  The label stays visible there, and as the link's tooltip.
"""

from __future__ import annotations

from docutils import nodes

from lgacc.paper.equations import LABEL_PATTERN, equation_anchor, equation_name, equation_numbers

DERIVATIONS = "generated/derivations"
_SKIP = (nodes.literal_block, nodes.math, nodes.math_block, nodes.raw, nodes.reference, nodes.title,
         nodes.FixedTextElement)


def _link(label: str, refuri: str) -> nodes.reference:
    return nodes.reference("", "", nodes.Text(equation_name(label)), refuri=refuri, reftitle=label, internal=True)


def _inside(node: nodes.Node, kinds) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, kinds):
            return True
        parent = parent.parent
    return False


def _mark_targets(doctree) -> set[int]:
    """On the derivations page, give the first paragraph naming each label its anchor."""
    marked: set[int] = set()
    seen: set[str] = set()
    for literal in list(doctree.findall(nodes.literal)):
        label = literal.astext()
        paragraph = literal.parent
        if (label in equation_numbers() and label not in seen and isinstance(paragraph, nodes.paragraph)
                and "approximation" in paragraph.astext()):
            # the anchor goes on the derivation's section when the paragraph opens it, so the
            # link lands on the heading
            section = paragraph.parent
            opens = isinstance(section, nodes.section) and section.index(paragraph) == 1
            (section if opens else paragraph)["ids"].append(equation_anchor(label))
            literal.parent.insert(paragraph.index(literal), nodes.strong(text=f"{equation_name(label)} "))
            seen.add(label)
            marked.add(id(literal))
    return marked


def _link_labels(app, doctree, docname):
    if DERIVATIONS not in app.env.all_docs:
        return
    here = docname == DERIVATIONS
    page = "" if here else app.builder.get_relative_uri(docname, DERIVATIONS)
    targets = _mark_targets(doctree) if here else set()
    known = equation_numbers()

    for literal in list(doctree.findall(nodes.literal)):
        label = literal.astext()
        if label in known and id(literal) not in targets and not _inside(literal, _SKIP):
            literal.replace_self(_link(label, f"{page}#{equation_anchor(label)}"))

    for text in list(doctree.findall(nodes.Text)):
        if _inside(text, _SKIP + (nodes.literal,)) or not LABEL_PATTERN.search(text):
            continue
        pieces: list[nodes.Node] = []
        position = 0
        for match in LABEL_PATTERN.finditer(text):
            if match.group() not in known:
                continue
            pieces.append(nodes.Text(text[position:match.start()]))
            pieces.append(_link(match.group(), f"{page}#{equation_anchor(match.group())}"))
            position = match.end()
        if pieces:
            pieces.append(nodes.Text(text[position:]))
            text.parent.replace(text, pieces)


def setup(app):
    app.connect("doctree-resolved", _link_labels)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
