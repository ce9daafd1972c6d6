"""The sula suite's console brief (geomprobe.brief): its headlines, then the run's evidence line
(the SULA error against untrained copies is the pre-declared evidence of inference)."""

from __future__ import annotations

from geomprobe.brief import register_brief

register_brief("sula", evidence=True)
