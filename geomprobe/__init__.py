"""geomprobe: the geometry of Bayesian inference in language models."""

__version__ = "0.1.0"
