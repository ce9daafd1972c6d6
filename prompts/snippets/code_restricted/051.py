import random

deck = [rank + suit for suit in "SHDC" for rank in "23456789TJQKA"]
random.shuffle(deck)
hand = deck[:@@M5]@@O
