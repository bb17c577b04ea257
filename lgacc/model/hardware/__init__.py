"""Hardware specifications and their arithmetic-intensity thresholds.

A specification is a YAML file in ``data/hardware/`` (or any path).  Every
quantity is stored under a key whose suffix names its unit, so a file says
itself whether a vendor's "GB/s" is decimal or binary:

==================  =========================================
suffix              meaning
==================  =========================================
``_flop_per_s``     floating-point operations per second
``_bytes_per_s``    bytes per second
``_gb_per_s``       10**9 bytes per second (decimal)
``_gib_per_s``      2**30 bytes per second (binary)
``_bytes``          bytes
``_gb``             10**9 bytes
``_gib``            2**30 bytes
==================  =========================================

Each quantity must be given exactly once, in one of the units allowed for it.
Internally everything is SI: bytes, bytes per second and flop/s.  Once in SI,
each quantity must lie in a range (:data:`RANGES`): outside the outer bounds it
is rejected (312 flop/s is a GPU peak given in Tflop/s by mistake, 1e300 GiB
is infinite memory), outside the inner ones it is accepted with a
:class:`HardwareSpecWarning` (a peak below 1 Tflop/s is possible, but rare).
The optional ``kernel_efficiency`` (dimensionless, in (0, 1], default 1.0) is
the share of the peak that the kernels reach; 1.0 is the paper's convention.  The optional
``gemm_max_efficiency`` (in (0, 1], default 0.8) is the GPU's best measured matrix-multiply
efficiency, read only by the calibrated model (:mod:`lgacc.model.calibrated`) for the GPUs that its measured
layer-GEMM tables (:mod:`lgacc.model.calibrated.gemm_table`: the H100 chip, the B200) do not cover.

A spec is named either by a shipped name (``a100-80gb``: only the files of
``data/hardware/``) or by a path (a string containing ``/`` or ending in
``.yaml``/``.yml``, or a :class:`pathlib.Path`): a file in the working
directory never stands in for a shipped name.  Files are read by
:func:`lgacc.yamlfile.load_yaml_mapping` (UTF-8, at most 1 MB, no aliases, no
duplicate keys, YAML 1.2 numbers).

The paper's ``table:hardware_bandwidth`` prints thresholds ``peak / bandwidth``
which come out as printed only when its "GB" is read as GiB (2**30 bytes): at
312 Tflop/s, 2039 GB/s gives 143 flops/B with GiB and 153 with decimal GB.
``a100-80gb.yaml`` therefore stores the paper's figures in GiB.

One module per job, each importing only those above it:

=============  ==========================================================================
module         job
=============  ==========================================================================
``links``      the links of ``table:hardware_bandwidth`` (:data:`LINKS`) and the byte units
``checks``     what a spec's values may be: types, :data:`RANGES`, :class:`HardwareSpecError`,
               :class:`HardwareSpecWarning`
``spec``       :class:`Hardware` and its derived quantities (bandwidths, thresholds)
``files``      spec files: keys and units, names and paths, :func:`load_hardware`
=============  ==========================================================================

This package re-exports every public name of the four, so ``from lgacc.model.hardware import
load_hardware`` and the like reach all of them.
"""

from __future__ import annotations

from . import checks, files, links, spec
from .checks import (
    INTEGER_FIELDS,
    RANGES,
    TEXT_FIELDS,
    HardwareSpecError,
    HardwareSpecWarning,
    Range,
    as_positive_number,
    check_range,
    validate_values,
)
from .files import (
    DATA_DIR,
    DEFAULT_HARDWARE,
    FLOP_UNITS,
    QUANTITIES,
    RATE_UNITS,
    SIZE_UNITS,
    allowed_keys,
    available_hardware,
    hardware_from_mapping,
    hardware_path,
    is_path,
    load_hardware,
)
from .links import GB, GIB, LINK_KEYS, LINKS, Link
from .spec import Hardware

# every public name of the four modules, as the single module exported them
__all__ = [*links.__all__, *checks.__all__, *spec.__all__, *files.__all__]
