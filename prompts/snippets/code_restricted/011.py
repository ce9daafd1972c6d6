import pytest


@pytest.mark.parametrize("text, expected", [
    ("", 0),
    ("one", 1),
    ("two words", @@C2),
    ("  spaced   out  ", @@M2),
])
def test_word_count(text, expected):
    assert word_count(text) == @@Cexpected
