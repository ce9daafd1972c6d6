def fizzbuzz(n):
    for i in range(1, n + 1):
        if i % 15 == 0:
            print("FizzBuzz")
        elif i % 3 == 0:
            print(@@C"Fizz")
        elif i % 5 == 0:
            print("Buzz")
        else:
            @@Cprint(i)
