"""The domain suite's results: the layout of <run>/domain/results.json (checked before it is written; RESULTS_SCHEMA.md
lists it)."""

from __future__ import annotations

from geomprobe.suites.schema import Header, UntrainedNull

SCHEMA_VERSION = 3  # breaking changes of this layout; 3: with the header, untrained nulls and downstream ablation


class DomainResults(Header):
    readout: str  # values | z | resid
    layer: int  # the layer read (the last)
    sets: dict  # set label -> value manifold of that set (+ gain_over_mixed, gain_vs_untrained for restricted sets)
    untrained_null: UntrainedNull | None  # each restricted set's PC1+PC2 gain against untrained copies
    caveat: str  # what a PC1+PC2 gain does not isolate


NESTED = ()  # its nested types, listed in RESULTS_SCHEMA.md
