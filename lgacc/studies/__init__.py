"""Studies beyond the paper's own analysis: its conclusions under each assumption moved alone
(:mod:`.sensitivity`), on today's GPUs (:mod:`.today`), and its model against measured training
runs (:mod:`.validation`)."""
