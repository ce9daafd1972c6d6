"""Extraction backends. Each has `run_batch(input_ids, attention_mask, final_index) -> dict of numpy
arrays` with the names and shapes listed in geomprobe.extraction (batch first)."""
