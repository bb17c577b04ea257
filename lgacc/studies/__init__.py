"""Studies beyond the paper's own analysis: its conclusions under each assumption moved alone
(:mod:`.sensitivity`), on today's GPUs (:mod:`.today`), its model against measured training
runs (:mod:`.validation`), and its verdict on ZeRO under each reading of the data-parallel network
(:mod:`.zero`)."""
