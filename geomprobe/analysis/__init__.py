"""Statistics on extracted arrays: numpy/scipy only, no torch, no models (STYLE.md)."""
