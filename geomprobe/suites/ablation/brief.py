"""The ablation suite's console brief (geomprobe.brief): its headlines, then the run's evidence line
(without a sula comparison, the first cut against untrained copies is the evidence)."""

from __future__ import annotations

from geomprobe.brief import register_brief

register_brief("ablation", evidence=True)
