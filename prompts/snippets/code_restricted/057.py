def test_reverse_words():
    assert reverse_words("hello world") == "world hello"
    assert reverse_words("") == @@M""
    assert reverse_words("one") == @@C"one"@@O
