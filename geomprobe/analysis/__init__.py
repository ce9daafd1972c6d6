"""Statistics on extracted arrays: numpy/scipy only, no torch, no models (tests/project/test_layers.py keeps
them below every module that loads one)."""
