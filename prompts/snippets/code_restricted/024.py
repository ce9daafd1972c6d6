import pytest


class FakeClock:
    def __init__(self, start=0.0):
        self.now = start

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


@pytest.fixture
def clock():
    return FakeClock()


def test_cache_entry_expires(clock):
    cache = TTLCache(ttl=10, clock=clock)
    cache["key"] = "value"
    clock.advance(9)
    assert cache.get("key") == "value"@@O
    clock.advance(@@M2)
    assert cache.get("key") is @@CNone


def test_cache_len_ignores_expired(clock):
    @@O
