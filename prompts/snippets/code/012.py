# Simple temperature conversion table
for celsius in range(-10, 41, 10):
    fahrenheit = celsius * 9 / 5 + 32
    print(f"{celsius:>4} C = {fahrenheit:6.1f} @@CF")
