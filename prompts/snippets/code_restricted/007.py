class Temperature:
    def __init__(self, celsius):
        self._celsius = celsius

    @property
    def fahrenheit(self):
        return self._celsius * 9 / 5 + 32

    @fahrenheit.@@Csetter
    def fahrenheit(self, value):
        self._celsius = (value - 32) * 5 / @@C9

    def __repr__(self):
        return f"Temperature({@@Mself._celsius!r})"
