"""Calendar units shared by every module that converts days (one definition, so a
year is the same length everywhere).

The paper states durations in days, months and years without defining the latter
two; the package reads them as Julian calendar units: a year of 365.25 days and a
month of a twelfth of it (30.44 days).  ``book/assumptions.md`` lists the choice.
"""

from __future__ import annotations

__all__ = ["DAYS_PER_YEAR", "DAYS_PER_MONTH"]

#: A Julian year, in days.
DAYS_PER_YEAR = 365.25
#: A twelfth of :data:`DAYS_PER_YEAR`, in days.
DAYS_PER_MONTH = DAYS_PER_YEAR / 12
