"""Errors a user can cause. The CLI prints them as one line, without a traceback."""


class GeomprobeError(Exception):
    """Base class: the message says what was wrong and what to do about it."""


class ModelNotFoundError(GeomprobeError):
    """An alias, hub id or path that cannot be resolved (or is not in the offline cache)."""


class UnsupportedModelError(GeomprobeError):
    """A model whose architecture family has no adapter."""


class PromptFileError(GeomprobeError):
    """A malformed prompt file; the message names the line."""


class ConfigError(GeomprobeError):
    """An option out of range or inconsistent with the model (layer index, suite name, ...)."""


class RunDirectoryError(GeomprobeError):
    """A results directory that cannot be resumed with the requested configuration."""


class NumericalError(GeomprobeError):
    """NaN or infinite activations."""


class AnalysisError(GeomprobeError, ValueError):
    """An analysis refused its input: too few prompts for a statistic, no column that varies, a
    correlation of a constant. Raised by geomprobe.analysis; a ValueError too, so code that
    guarded an analysis with `except ValueError` keeps working."""


class HubError(GeomprobeError):
    """The Hugging Face Hub cannot be used: no token, a token it refuses, an endpoint it cannot be
    reached at (geomprobe push)."""
