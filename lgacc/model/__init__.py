"""The resource model: the paper's notation, the derivations, the models, the hardware, the
training configuration, the open assumptions and the evaluator.

* :mod:`.symbols` -- the paper's notation as sympy symbols;
* :mod:`.formulas` -- the sympy derivations, one per equation label (``eq:...``);
* :mod:`.transformer` -- :class:`~.transformer.Transformer`, the X family, named models, the
  critical batch;
* :mod:`.hardware` -- GPU and cluster specs and their arithmetic-intensity thresholds;
* :mod:`.config` -- the method and the parallel degrees of one configuration;
* :mod:`.assumptions` -- every choice the paper leaves open, as a switch;
* :mod:`.evaluator` -- one or many configurations -> overheads, time, memory, feasibility.
"""
