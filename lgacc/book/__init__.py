"""The book's machinery: display helpers for the notebooks (:mod:`.notebook`), the runner that
executes them (:mod:`.run`), executed notebooks kept for every build (:mod:`.notebookcache`), and
the calculator page's JavaScript printed from the derivations (:mod:`.jsgen`)."""
