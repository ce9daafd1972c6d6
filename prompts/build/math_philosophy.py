"""Deterministic prompt generators for the "math" and "philosophy" sources.

All text below is original.  ``generate()`` returns a list of records
``{"source": <name>, "text": <prompt>}`` in a fixed order.  Prompts are a mix
of hand-written passages and compositions from hand-written frames; the
endings are deliberately spread between nearly certain continuations
("Therefore x ="), medium ones ("The derivative of sin(x) is") and wide-open
ones (cut after a full stop or colon).

Only the standard library is used and all randomness goes through
``random.Random`` with fixed seeds, so repeated calls give identical output.
"""

import random

MATH_SEED = 71123
PHILOSOPHY_SEED = 52817


def _clean(text):
    """Collapse internal whitespace runs and strip both ends."""
    return " ".join(text.split())


def _dedup(texts):
    seen = set()
    out = []
    for t in texts:
        t = _clean(t)
        if not t:
            continue
        key = " ".join(t.lower().split())
        if key in seen:
            continue
        seen.add(key)
        out.append(t)
    return out


# ---------------------------------------------------------------------------
# MATH: hand-written prompts
# ---------------------------------------------------------------------------

MATH_SHORT = [
    "The derivative of sin(x) is",
    "The derivative of cos(x) is",
    "The derivative of e^x is",
    "The derivative of ln(x) is",
    "The integral of 1/x dx is",
    "The integral of cos(x) dx is",
    "Proof. Suppose",
    "Proof. Assume, for the sake of contradiction, that",
    "Proof. We proceed by induction on",
    "Theorem 2.1.",
    "Lemma 3. Every",
    "Corollary. If",
    "Definition. A function f is said to be continuous at a point c if",
    "Definition. A group is a set G together with",
    "Definition. A prime number is a natural number greater than 1 that",
    "Two plus two equals",
    "Nine times seven is",
    "The square root of 144 is",
    "The sum of the interior angles of a triangle is",
    "A right angle measures",
    "The value of pi to two decimal places is",
    "By the Pythagorean theorem, a^2 + b^2 =",
    "The quadratic formula states that x =",
    "The smallest prime number is",
    "Every even integer greater than 2 can be written as",
    "The number e is approximately",
    "Recall that log(ab) = log(a) +",
    "In a right triangle, sin(theta) is the ratio of the opposite side to the",
    "Therefore x =",
    "Hence the limit equals",
    "It follows that",
    "This completes the",
    "Example 4.",
    "Exercise 12. Show that",
    "Solution:",
    "Let n be a positive integer.",
    "Let f(x) = x^2 - 4x + 3. Then f(1) =",
    "If 2x = 18, then x =",
    "The probability of rolling a six on a fair die is",
    "The identity matrix has ones on its diagonal and",
    "A matrix is invertible if and only if its determinant is",
    "Two vectors are orthogonal when their dot product is",
    "The area of a circle of radius r is",
    "The volume of a sphere of radius r is",
    "The limit of 1/n as n goes to infinity is",
    "Consider the function g(x) = 1/(x - 2), which is undefined at x =",
    "Note that the series 1 + 1/2 + 1/3 + 1/4 + ... diverges, because",
    "sin^2(x) + cos^2(x) =",
    "The slope of the line y = 3x + 7 is",
    "The expected value of a fair six-sided die is",
    "Zero factorial is defined to be",
    "A polygon with eight sides is called an",
    "The additive inverse of 5 is",
    "An integer is even if it is divisible by",
    "Now we compute the eigenvalues.",
    "Factor completely: x^2 - 9 =",
    "The Fundamental Theorem of Calculus tells us that",
    "Simplify the expression (x^2 - 1)/(x - 1) for x not equal to 1. The result is",
    "What is 15 percent of 200?",
    "Remark. The converse of this statement is",
    "The binomial coefficient C(5, 2) counts",
    "A set is countable if",
    "To find the inverse of f(x) = 2x + 3, we first",
    "Finally, substituting back, we obtain",
    "Example 5.",
    "Step 2:",
    "Hint:",
    "We now prove the main theorem.",
    "There are several ways to approach this problem.",
    "In the next section, we",
    "Exercises for Chapter 3.",
    "This result has a nice geometric interpretation.",
    "Let us check the answer.",
    "Why does this work?",
    "A word of caution is in order here.",
    "The proof is by contradiction.",
    "Notation:",
    "Consider the following problem.",
    "Before we continue, let us",
    "Here is another way to think about it:",
    "Definition 1.4.",
    "Historically, the concept of a limit",
    "What goes wrong if we drop the assumption that f is continuous?",
    "Many textbooks introduce logarithms by",
    "Answer: 42.",
    "Sketch of proof.",
    "The case n = 0 is trivial, so assume",
    "Problem 9. A tank is being filled with water.",
]

MATH_MEDIUM = [
    "Theorem. There are infinitely many prime numbers. Proof. Suppose, to the contrary, that there are only finitely many primes, and list them as p_1, p_2, ..., p_k. Consider the number N = p_1 p_2 ... p_k + 1. Then N",
    "Claim: the square root of 2 is irrational. Suppose instead that sqrt(2) = a/b, where a and b are integers with no common factor. Squaring both sides gives",
    "To differentiate a product of two functions we use the product rule: if h(x) = f(x)g(x), then h'(x) =",
    "The chain rule says that the derivative of a composition f(g(x)) is f'(g(x)) times g'(x). For example, the derivative of sin(x^2) is",
    "A sequence (a_n) converges to a limit L if for every epsilon > 0 there exists a natural number N such that",
    "Let A be an n by n matrix. A nonzero vector v is called an eigenvector of A if Av = lambda v for some scalar lambda, which is then called",
    "In probability, two events A and B are independent if P(A and B) = P(A) P(B). Intuitively, this means that",
    "Bayes' theorem lets us reverse a conditional probability. It states that P(A | B) equals P(B | A) times P(A), divided by",
    "The Mean Value Theorem says that if f is continuous on [a, b] and differentiable on (a, b), then there is a point c in (a, b) where",
    "We say that a divides b, written a | b, if there is an integer k with b = ak. For instance, 6 divides 42 because",
    "Euclid's algorithm finds the greatest common divisor of two numbers by repeated division. Starting with 252 and 105, we divide 252 by 105 to get a remainder of",
    "A function is called injective if different inputs always give different outputs. It is called surjective if",
    "The median of a data set is the middle value once the data are sorted. For the list 3, 9, 4, 11, 7, the median is",
    "When we complete the square on x^2 + 6x + 2, we add and subtract 9 to get (x + 3)^2 - 7. So the vertex of the parabola is",
    "Marcus buys three notebooks at $4 each and two pens at $1.50 each. He pays with a twenty-dollar bill. How much change does he receive?",
    "A ladder 13 feet long leans against a wall, and its foot is 5 feet from the base of the wall. How high up the wall does the ladder reach?",
    "Two angles are supplementary when they add up to 180 degrees. If one angle measures 35 degrees more than the other, then the smaller angle measures",
    "The variance of a random variable measures how spread out its values are. It is defined as the expected value of the squared deviation from",
    "Proof by induction has two steps. In the base case we verify the statement for n = 1. In the inductive step we assume",
    "The rank of a matrix is the dimension of its column space. By the rank-nullity theorem, for an m by n matrix A, the rank plus the nullity equals",
    "Consider the geometric series 1 + 1/2 + 1/4 + 1/8 + ... Each term is half of the previous one, so the sum of the whole series is",
    "Recall that a triangle is isosceles if two of its sides are equal. In an isosceles triangle, the angles opposite the equal sides are",
    "We want to evaluate the limit of sin(x)/x as x approaches 0. Direct substitution gives 0/0, which is indeterminate, so we",
    "Fermat's little theorem states that if p is prime and a is not divisible by p, then a^(p-1) is congruent to",
    "A bag contains 4 red marbles and 6 blue marbles. Two marbles are drawn without replacement. What is the probability that both are red?",
    "The logarithm base b of a number x is the exponent to which b must be raised to produce x. So log base 2 of 32 is",
    "An arithmetic sequence has first term 7 and common difference 4. Its tenth term is 7 + 9 times 4, which is",
    "The fundamental theorem of arithmetic asserts that every integer greater than 1 can be written as a product of primes in a way that is",
    "Let V be a vector space. A set of vectors in V is linearly independent if the only way to write the zero vector as a linear combination of them is",
    "Integration by parts comes from the product rule. Written compactly, it says that the integral of u dv equals",
    "Priya is twice as old as her brother. In six years, the sum of their ages will be 36. How old is Priya now? Let b be the brother's age. Then",
    "Note that the function f(x) = |x| is continuous everywhere, but it is not differentiable at x = 0, since",
    "A standard deck has 52 cards. If one card is drawn at random, the probability that it is a heart or a king is",
    "Suppose a population of bacteria doubles every three hours. Starting with 500 bacteria, after twelve hours there will be",
    "Here is a useful trick for multiplying by 11 in your head:",
    "In Euclidean geometry, the parallel postulate says that through a point not on a given line there is exactly one line",
]

MATH_LONG = [
    "Many students find limits confusing at first, because the value of a function at a point and the value it approaches near that point can be different. Take f(x) = (x^2 - 4)/(x - 2). At x = 2 the formula breaks down, since we would be dividing by zero. But for every other x we can cancel the common factor and write f(x) = x + 2. So as x approaches 2, f(x) approaches",
    "Theorem. If n is an integer and n^2 is even, then n is even. Proof. We prove the contrapositive. Suppose n is odd, so that n = 2k + 1 for some integer k. Then n^2 = 4k^2 + 4k + 1 = 2(2k^2 + 2k) + 1, which is one more than an even number. Therefore n^2 is",
    "In this section we introduce the idea of a vector space. Informally, a vector space is a collection of objects that can be added together and multiplied by numbers, where these operations obey familiar rules such as commutativity and distributivity. The plane R^2 is the standard example: a vector is an ordered pair (x, y), and we add pairs component by component. Another, less obvious, example is",
    "A farmer has 120 meters of fencing and wants to enclose a rectangular field along a straight river, so no fence is needed on the river side. If the side perpendicular to the river has length x, then the side parallel to it has length 120 - 2x, and the area is A(x) = x(120 - 2x). To maximize the area we set the derivative equal to zero: A'(x) = 120 - 4x = 0, which gives x =",
    "The binomial theorem tells us how to expand a power of a sum. For a non-negative integer n, (a + b)^n is the sum over k from 0 to n of C(n, k) a^(n-k) b^k. The coefficients C(n, k) are exactly the entries in the nth row of Pascal's triangle. For example, when n = 3 the coefficients are 1, 3, 3, 1, so (a + b)^3 =",
    "Let us find the area under the curve y = x^2 between x = 0 and x = 3. An antiderivative of x^2 is x^3/3, so by the Fundamental Theorem of Calculus the area equals F(3) - F(0), where F(x) = x^3/3. Evaluating, we get 27/3 - 0, and so the area is",
    "Suppose that a medical test for a rare disease is 99 percent accurate, and that one person in a thousand actually has the disease. If a randomly chosen person tests positive, how likely is it that they have the disease? Surprisingly, the answer is far lower than 99 percent. Out of 100,000 people, about 100 have the disease and 99 of them test positive, while of the 99,900 healthy people about",
    "A common mistake in algebra is to assume that the square root of a sum is the sum of the square roots. For instance, someone might claim that sqrt(9 + 16) = sqrt(9) + sqrt(16) = 3 + 4 = 7. But 9 + 16 = 25, and the square root of 25 is 5, not 7. The lesson is that taking square roots does not distribute over addition. A similar warning applies to",
    "The idea behind the method of proof by contradiction is simple. To show that a statement P is true, we assume that P is false and then reason carefully until we reach something impossible, such as a number that is both even and odd, or a quantity that is both positive and negative. Since correct reasoning from a true assumption can never produce an impossibility, the assumption that P is false must itself be",
    "Modular arithmetic is sometimes called clock arithmetic. On an ordinary twelve-hour clock, four hours after ten o'clock is two o'clock, not fourteen o'clock, because we wrap around whenever we pass twelve. Mathematicians write this as 10 + 4 = 2 (mod 12). In general, two integers are congruent modulo n when their difference is a multiple of n. So, for example, 38 is congruent to 3 modulo 7, because",
    "The determinant of a square matrix has a geometric meaning. For a 2 by 2 matrix, its absolute value equals the area of the parallelogram spanned by the two column vectors, and its sign tells us whether the matrix preserves or reverses orientation. If the determinant is zero, the parallelogram collapses to a line segment or a point, which means that the columns are linearly dependent. Consequently,",
    "Consider the problem of counting how many different ways five people can line up for a photograph. There are five choices for the person on the left, then four choices for the next position, then three, then two, and finally only one person is left for the last spot. Multiplying these together, the total number of arrangements is 5 x 4 x 3 x 2 x 1, which equals",
    "Exponential growth appears whenever a quantity increases by a fixed percentage in each time period. Suppose you deposit $1,000 in a savings account that pays 5 percent interest per year, compounded annually. After one year you have $1,050. After two years you have $1,050 times 1.05, or $1,102.50. In general, after t years the balance is",
    "Theorem (Triangle Inequality). For any real numbers x and y, |x + y| <= |x| + |y|. Proof. We know that -|x| <= x <= |x| and -|y| <= y <= |y|. Adding these two inequalities gives -(|x| + |y|) <= x + y <= |x| + |y|. A number that lies between -c and c has absolute value at most c, so",
    "The normal distribution is the famous bell-shaped curve. It is completely described by two numbers: the mean, which sets the location of the peak, and the standard deviation, which controls how wide the bell is. A useful rule of thumb is that about 68 percent of the values fall within one standard deviation of the mean, about 95 percent fall within two, and about",
    "Here is a classic puzzle. A snail is at the bottom of a well that is 10 meters deep. Each day it climbs up 3 meters, but each night it slips back 2 meters. How many days does it take the snail to get out of the well? A quick answer is 10 days, since it seems to gain one meter per day. However, this overlooks the fact that",
    "We now turn to the second derivative test. Suppose f'(c) = 0, so that the graph of f has a horizontal tangent at x = c. If f''(c) > 0, the graph is curving upward near c, like a cup, and so c is a local minimum. If f''(c) < 0, the graph curves downward, like a cap, and c is a local maximum. If f''(c) = 0, however, the test",
    "In geometry, two triangles are similar if their corresponding angles are equal. Similar triangles have the same shape but possibly different sizes, and the ratios of corresponding sides are all equal. This gives a handy way to measure tall objects. If a person 2 meters tall casts a shadow 3 meters long, and at the same moment a tree casts a shadow 18 meters long, then the tree is",
    "The harmonic series 1 + 1/2 + 1/3 + 1/4 + ... grows without bound, although it does so very slowly. One way to see this is to group the terms: 1/3 + 1/4 is larger than 1/2, and 1/5 + 1/6 + 1/7 + 1/8 is also larger than 1/2, and so on. Since we can form infinitely many groups, each exceeding one half, the partial sums",
    "Let me explain why dividing by zero is not allowed. Division is defined as the inverse of multiplication: to say that 12 divided by 3 is 4 means that 4 times 3 is 12. If we tried to define 5 divided by 0 as some number q, we would need q times 0 to equal 5. But any number times zero is zero, so no such q exists. And what about 0 divided by 0? In that case",
    "Lemma. If a and b are integers and p is a prime that divides ab, then p divides a or p divides b. This fact, often called Euclid's lemma, is the key step in proving that prime factorizations are unique. Its proof relies on Bezout's identity, which says that the greatest common divisor of two integers can be written as",
    "A survey asked 200 students whether they preferred mathematics or history. Of the 90 students who chose mathematics, 50 were in the science track, while of the 110 who chose history, only 30 were in the science track. If we pick a student at random from the science track, the probability that this student prefers mathematics is",
    "The law of large numbers explains why casinos can count on making money. Any single spin of a roulette wheel is unpredictable, and a lucky gambler may walk away with a profit. But the house edge guarantees that each bet has a slightly negative expected value for the player. Over millions of bets, the average outcome per bet gets closer and closer to this expected value, so",
    "Linear systems can be solved by elimination. Consider 2x + 3y = 12 and 4x - y = 10. Multiply the second equation by 3 to get 12x - 3y = 30, and add it to the first equation. The y terms cancel, leaving 14x = 42, so x = 3. Substituting x = 3 into the first equation gives 6 + 3y = 12, and therefore y =",
    "Why is the sum of the angles in a triangle always 180 degrees? Draw a triangle ABC and, through the vertex C, draw the line parallel to the side AB. The two angles that this line makes with the sides CA and CB are alternate angles, so they equal the angles at A and B. Together with the angle at C they form a straight line. Since a straight angle is 180 degrees,",
    "The concept of a function is central to almost all of modern mathematics. A function from a set A to a set B is a rule that assigns to each element of A exactly one element of B. It is important that every input gets an output and that no input gets two outputs. A vending machine is a good everyday example:",
    "Newton's method is an iterative way to approximate roots of equations. Starting from a guess x_0, we replace the curve by its tangent line at x_0 and find where that line crosses the x-axis. The crossing point becomes our next guess x_1. In formulas, x_(n+1) = x_n - f(x_n)/f'(x_n). To approximate sqrt(2), we apply the method to f(x) = x^2 - 2 starting with x_0 = 1, which gives x_1 =",
    "Before tackling the general case, let us look at a simple example that shows the main idea of the argument. Take the set {1, 2, 3}. Its subsets are the empty set, the three singletons, the three pairs, and the whole set itself, for a total of 8 subsets. Notice that 8 = 2^3. This is no accident, since for each element we make an independent choice: either it is in the subset or it is not. In the next section,",
    "Students often ask why a negative times a negative is positive. Here is one explanation that uses only the distributive law. We know that (-1)(0) = 0. Writing 0 as 1 + (-1), we get (-1)(1 + (-1)) = 0, and distributing gives (-1)(1) + (-1)(-1) = 0. The first term is -1, so (-1)(-1) must be the number that, when added to -1, gives 0. That number is",
    "An ant walks along the edges of a cube, starting at one corner and wishing to reach the opposite corner. At every corner it chooses one of the edges that moves it closer to its goal. How many different shortest routes are there? Any shortest route uses exactly three edges, one in each direction, so the question is really about the number of orders in which the three directions can be taken. The answer is",
    "The pigeonhole principle sounds almost too obvious to be useful: if you put more than n objects into n boxes, some box must contain at least two objects. Yet it has surprising consequences. For example, in any group of 367 people, at least two must share a birthday, because there are only 366 possible birthdays including February 29. A slightly cleverer application shows that among any five points placed inside a unit square,",
    "Suppose we want to know how long it takes for an investment to double. A handy approximation called the rule of 72 says that if money grows at r percent per year, it doubles in roughly 72/r years. At 6 percent, for example, doubling takes about 12 years. The rule works because ln(2) is about 0.693, and for small interest rates ln(1 + r) is close to r. So the exact doubling time is ln(2)/ln(1 + r), which",
    "Exercise 7. Let f(x) = x^3 - 3x + 1. (a) Find all critical points of f. (b) Determine the intervals on which f is increasing and decreasing. (c) Find the local maximum and minimum values. Solution. (a) We compute f'(x) = 3x^2 - 3 = 3(x - 1)(x + 1). Setting this equal to zero, we find that the critical points are",
    "The Cauchy-Schwarz inequality is one of the most widely used inequalities in mathematics. In its simplest form it says that for any two vectors u and v in R^n, the absolute value of their dot product is at most the product of their lengths. Geometrically, this is just the statement that the cosine of the angle between u and v lies between -1 and 1. Equality holds precisely when",
    "In 1736, Leonhard Euler considered a puzzle about the city of Konigsberg, which was divided by a river into four land masses connected by seven bridges. Residents wondered whether one could take a walk that crossed every bridge exactly once. Euler realized that the precise layout of the streets did not matter at all; only the pattern of connections did. He showed that such a walk is impossible, because",
    "When rounding numbers, it is important to keep track of how errors accumulate. If you measure the sides of a rectangle as 4.2 cm and 3.7 cm, each measurement could be off by up to 0.05 cm. The computed area is 15.54 square centimeters, but the true area could be as small as 4.15 times 3.65, or as large as 4.25 times 3.75. This means that reporting the area to two decimal places",
    "A random variable X has the binomial distribution with parameters n and p if it counts the number of successes in n independent trials, each of which succeeds with probability p. The probability of exactly k successes is C(n, k) p^k (1 - p)^(n - k). For instance, if a basketball player makes 70 percent of her free throws, the probability that she makes exactly 3 of her next 4 attempts is",
    "The sine and cosine functions can be defined using the unit circle. Starting at the point (1, 0), we travel counterclockwise along the circle of radius 1 centered at the origin, covering an arc of length theta. The point where we stop has coordinates (cos(theta), sin(theta)). From this picture several facts are immediate. Since the point lies on the unit circle,",
    "Consider the equation 2^x = 50. Since 2^5 = 32 and 2^6 = 64, we know that x must lie somewhere between 5 and 6, but to find it exactly we need logarithms. Taking the natural logarithm of both sides gives x ln(2) = ln(50), and therefore",
    "Let us prove that the sum of two odd integers is always even. An odd integer is one that can be written as 2k + 1 for some integer k. So let the two odd integers be 2a + 1 and 2b + 1, where a and b are integers. Adding them gives 2a + 2b + 2, which can be rewritten as",
    "A basic question in linear algebra is when a system of equations Ax = b has a solution. If A is a square matrix with nonzero determinant, then the system has exactly one solution for every right-hand side b, namely x = A^(-1) b. If the determinant is zero, things are more delicate. Depending on b, the system may have no solutions at all, or it may have",
    "Imagine a game in which you roll a single die. If it shows a six, you win 10 dollars; otherwise, you lose 2 dollars. Should you play? To decide, we compute the expected value of the game. With probability 1/6 you gain 10, and with probability 5/6 you lose 2. The expected value is therefore 10/6 - 10/6, which is",
    "The function f(x) = 1/x is a good example of a function whose graph has both a vertical and a horizontal asymptote. As x gets close to 0 from the right, the values of 1/x grow without bound; from the left, they become large and negative. As x grows very large in either direction, 1/x gets closer and closer to zero. In the language of limits, we write",
    "A classic problem asks for the number of diagonals in a convex polygon with n sides. From each vertex we can draw a segment to every other vertex except itself and its two neighbors, which gives n - 3 diagonals per vertex. Multiplying by n counts each diagonal twice, once from each end, so the total number is n(n - 3)/2. For a hexagon, this gives",
    "Mathematical induction is often compared to a row of dominoes. If you can show that the first domino falls, and that whenever one domino falls the next one also falls, then you can be sure that every domino in the row will eventually fall. In a proof, the first domino is the base case, and the rule about neighboring dominoes is the inductive step. Let us use this idea to prove that",
    "One of the most beautiful formulas in mathematics connects five fundamental constants: e^(i pi) + 1 = 0. It follows from Euler's formula, which states that e^(i theta) = cos(theta) + i sin(theta) for every real number theta. Setting theta equal to pi, the cosine becomes -1 and the sine becomes 0, so",
    "Problem. A rectangular box with a square base and no top must have a volume of 32 cubic meters. Find the dimensions that minimize the amount of material used. Solution. Let the base have side x and let the height be h. The volume condition gives x^2 h = 32, so h = 32/x^2. The surface area is S = x^2 + 4xh, and substituting for h we obtain",
    "Some infinities are bigger than others. Georg Cantor showed that the set of natural numbers can be put into one-to-one correspondence with the set of fractions, so in a precise sense there are just as many fractions as counting numbers. However, his famous diagonal argument shows that no such correspondence exists between the natural numbers and the real numbers. The idea is to assume that a complete list of real numbers exists and then",
]


# ---------------------------------------------------------------------------
# MATH: parametric frames
# ---------------------------------------------------------------------------

_NUM_WORDS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
    "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
    "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
]

_NAMES = [
    "Amara", "Ben", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro",
    "Isabel", "Jonah", "Keiko", "Luis", "Maya", "Nikhil", "Olivia", "Pavel",
    "Quinn", "Rosa", "Samir", "Tessa",
]

_ITEMS = [
    ("apples", "basket"), ("stickers", "album"), ("marbles", "jar"),
    ("books", "shelf"), ("cookies", "tin"), ("seashells", "bucket"),
    ("pencils", "case"), ("stamps", "collection"),
]

_PY_TRIPLES = [(3, 4, 5), (5, 12, 13), (8, 15, 17), (6, 8, 10), (7, 24, 25),
               (9, 12, 15), (20, 21, 29), (12, 16, 20)]

_DICE_WAYS = {2: 1, 3: 2, 4: 3, 5: 4, 6: 5, 7: 6, 8: 5, 9: 4, 10: 3, 11: 2,
              12: 1}

# Short lesson openers that turn a worked example into a longer passage.
_MATH_INTROS = {
    "linear": [
        "Linear equations are the simplest equations in algebra: the unknown appears only to the first power, never squared or inside a root. The strategy is always the same. We undo the operations applied to x in reverse order, doing the same thing to both sides so that the equation stays balanced.",
        "When you meet an equation such as the one below, think of it as a balance scale. Whatever you add to or remove from one pan must also be added to or removed from the other. Our aim is to leave x alone on one side.",
    ],
    "quadratic": [
        "A quadratic equation can often be solved by factoring, which is quicker than the quadratic formula when it works. If the leading coefficient is 1, we need two numbers that multiply to the constant term and add to the coefficient of x.",
        "Factoring rests on a simple fact about numbers: if a product of two quantities is zero, then at least one of the quantities must be zero. This is why we first rewrite a quadratic as a product of two linear factors.",
    ],
    "word": [
        "Word problems test whether you can translate a story into arithmetic. Read the problem twice, underline the numbers that matter, and ask yourself what operation each sentence describes before you compute anything.",
        "The following problem comes from a set of practice questions for middle school students. It looks easy, but many students rush it and make an arithmetic slip, so work slowly and check each step.",
    ],
    "geometry": [
        "Geometry problems become much easier once you draw a careful picture and label every length you know. In this example, the key fact is a formula you have probably seen many times before, so make sure you apply it to the right quantities.",
        "Measurement problems ask us to connect numbers to shapes. Before computing, it is worth estimating the answer roughly so that a wildly wrong result will stand out immediately.",
    ],
    "probability": [
        "Classical probability applies when all outcomes are equally likely. In that case, the probability of an event is simply the number of favorable outcomes divided by the total number of possible outcomes, so everything comes down to careful counting.",
        "Probability questions about dice and coins are a good place to start, because the sample space is small enough to list completely. Once you can count outcomes reliably, more complicated situations become manageable.",
    ],
    "calculus": [
        "The power rule is the first differentiation rule most students learn, and it handles every polynomial. It says that to differentiate x raised to a power, we bring the exponent down in front and reduce the exponent by one.",
        "Calculus gives us a systematic way to compute rates of change. Rather than drawing tangent lines by hand, we can apply a few rules mechanically, and the power rule is the one used most often.",
    ],
    "numbers": [
        "Number theory studies the whole numbers and their divisibility properties. Many of its questions are easy to state but surprisingly hard to answer, yet the basic computations, like the one below, need nothing more than careful division.",
        "The following exercise is taken from the first week of an introductory course on elementary number theory. Students are expected to work it out by hand, without a calculator, and to explain each step in complete sentences.",
    ],
    "linalg": [
        "In linear algebra we represent vectors as lists of numbers and linear maps as rectangular arrays called matrices. Most of the basic operations reduce to adding and multiplying entries in a systematic pattern, as the next computation shows.",
        "Matrices were first studied as a compact way of writing systems of linear equations. Today they are used everywhere, from computer graphics to statistics, but the elementary computations remain the same ones students practice by hand.",
    ],
    "stats": [
        "Descriptive statistics summarize a collection of numbers with a few well-chosen values. The mean tells us where the data are centered, while the range and the standard deviation tell us how spread out they are.",
        "A teacher wants to understand how her class is doing without looking at every individual grade. Summary statistics give a quick picture, although they can hide important details about particular students.",
    ],
    "counting": [
        "Combinatorics is the art of counting without listing every possibility. The basic principle is that if one choice can be made in m ways and a second, independent choice in n ways, then the pair of choices can be made in m times n ways.",
        "Counting problems can be tricky because it is easy to count the same arrangement twice, or to forget some arrangements altogether. A good habit is to decide at the start whether the order of the chosen objects matters.",
    ],
}


def _pick(k, options):
    return options[k % len(options)]


_MATH_LEADS = [
    "Let us work through an example.",
    "Here is a typical exercise of this kind, worked out step by step.",
    "Read the following example carefully before attempting the problems at the end of the section.",
    "Try the next problem on your own first, and only then compare your work with the solution.",
    "The example below is deliberately simple so that the method is not hidden behind messy numbers.",
    "Example.",
    "Practice problem.",
    "To see how this works in practice, consider a concrete case.",
]


def _maybe_intro(rng, topic, body, prob):
    if rng.random() < prob:
        intro = rng.choice(_MATH_INTROS[topic])
        if rng.random() < 0.75:
            intro += " " + rng.choice(_MATH_LEADS)
        return intro + " " + body
    return body


def _f_arith_words(rng, k):
    a, b = rng.randint(2, 12), rng.randint(2, 9)
    op = rng.choice(["plus", "times", "minus"])
    if b > a:
        a, b = b, a
    return _pick(k, [
        "{A} {op} {B} equals",
        "What is {a} {op} {B}? The answer is",
        "If you have {a} and take away {B}, you are left with",
        "{A} {op} {B} is",
    ]).format(A=_NUM_WORDS[a].capitalize(), a=_NUM_WORDS[a], op=op,
              B=_NUM_WORDS[b])


def _f_linear(rng, k):
    a = rng.randint(2, 9)
    x = rng.randint(-6, 15)
    b = rng.randint(1, 30)
    c = a * x + b
    start = "Solve {a}x + {b} = {c}.".format(a=a, b=b, c=c)
    cut = _pick(k, [
        " Subtracting {b} from both sides gives {a}x = {d}. Dividing both sides by {a}, we find that x =",
        " First we subtract {b} from both sides, which gives",
        " Subtracting {b} from both sides gives {a}x = {d}. Therefore x =",
        " Solution:",
        " The first step is to",
    ]).format(a=a, b=b, d=c - b)
    return _maybe_intro(rng, "linear", start + cut, 0.45)


def _f_quadratic(rng, k):
    r1 = rng.randint(1, 9)
    r2 = rng.randint(1, 9)
    s, p = r1 + r2, r1 * r2
    eq = "x^2 - {s}x + {p} = 0".format(s=s, p=p)
    body = _pick(k, [
        "To solve {eq}, we look for two numbers whose product is {p} and whose sum is {s}. These numbers are",
        "Factor the quadratic {eq}. We can write it as (x - {r1})(x -",
        "The equation {eq} factors as (x - {r1})(x - {r2}) = 0, so the solutions are x = {r1} and x =",
        "Consider the equation {eq}. The sum of its roots is",
        "Consider the equation {eq}.",
    ]).format(eq=eq, p=p, s=s, r1=r1, r2=r2)
    return _maybe_intro(rng, "quadratic", body, 0.55)


def _f_power_rule(rng, k):
    n = rng.randint(3, 12)
    coef = rng.randint(2, 9)
    body = _pick(k, [
        "The derivative of x^{n} with respect to x is",
        "Using the power rule, the derivative of {coef}x^{n} is",
        "If f(x) = {coef}x^{n}, then f'(x) =",
        "Differentiate f(x) = x^{n} + {coef}x. By the power rule, f'(x) =",
        "The second derivative of x^{n} is",
    ]).format(n=n, coef=coef)
    return _maybe_intro(rng, "calculus", body, 0.55)


def _f_integral(rng, k):
    n = rng.randint(2, 8)
    body = _pick(k, [
        "Using the power rule for integration, the integral of x^{n} dx is",
        "An antiderivative of x^{n} is x^{m}/",
        "To integrate x^{n}, we raise the exponent by one and divide by the new exponent. So the integral of x^{n} dx equals",
        "The definite integral of x^{n} from 0 to 1 equals 1/",
    ]).format(n=n, m=n + 1)
    return _maybe_intro(rng, "calculus", body, 0.55)



def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def _f_gcd(rng, k):
    g = rng.choice([2, 3, 4, 6, 7, 8, 9, 12, 15])
    a, b = g * rng.randint(2, 9), g * rng.randint(2, 9)
    if a == b:
        b += g
    body = _pick(k, [
        "The greatest common divisor of {a} and {b} is",
        "The least common multiple of {a} and {b} is",
        "To simplify the fraction {a}/{b}, we divide numerator and denominator by their greatest common divisor, which is",
        "Find gcd({a}, {b}).",
    ]).format(a=a, b=b)
    return _maybe_intro(rng, "numbers", body, 0.55)



def _f_prime(rng, k):
    p = rng.choice([7, 11, 13, 17, 19, 23])
    q = rng.choice([3, 7, 11, 13, 17])
    n = p * q
    prime = rng.choice([41, 53, 67, 71, 89, 97, 101, 113])
    body = _pick(k, [
        "Is {n} prime? Since {n} = {p} x {q}, the answer is",
        "Is {pr} a prime number? To check, we only need to test divisibility by primes up to the square root of {pr}, that is, by",
        "The prime factorization of {n} is",
        "We claim that {pr} is prime.",
    ]).format(n=n, p=p, q=q, pr=prime)
    return _maybe_intro(rng, "numbers", body, 0.55)



def _f_rectangle(rng, k):
    l, w = rng.randint(4, 30), rng.randint(2, 20)
    body = _pick(k, [
        "A rectangular garden is {l} meters long and {w} meters wide. Its area is therefore",
        "A rectangular garden is {l} meters long and {w} meters wide. How much fencing is needed to go all the way around it?",
        "A rug measures {l} feet by {w} feet. To find how many square feet of floor it covers, we",
        "The perimeter of a rectangle with length {l} cm and width {w} cm is 2({l} + {w}) =",
    ]).format(l=l, w=w)
    return _maybe_intro(rng, "geometry", body, 0.55)


def _f_circle(rng, k):
    r = rng.randint(2, 15)
    body = _pick(k, [
        "A circle has radius {r} cm. Its circumference is 2 pi r, which equals",
        "The area of a circle with radius {r} is pi times {r} squared, or",
        "A circular pond has a diameter of {d} meters. Its radius is",
        "A pizza has a radius of {r} inches. If it is cut into eight equal slices, the area of each slice is",
    ]).format(r=r, d=2 * r)
    return _maybe_intro(rng, "geometry", body, 0.55)



def _f_pythagoras(rng, k):
    a, b, c = rng.choice(_PY_TRIPLES)
    body = _pick(k, [
        "A right triangle has legs of length {a} and {b}. By the Pythagorean theorem, the hypotenuse has length",
        "In a right triangle the hypotenuse is {c} and one leg is {a}. Then the other leg is the square root of {c}^2 - {a}^2, which is",
        "The numbers {a}, {b} and {c} form a Pythagorean triple because",
        "A {c}-foot ladder leans against a wall with its base {a} feet from the wall. How high does it reach?",
    ]).format(a=a, b=b, c=c)
    return _maybe_intro(rng, "geometry", body, 0.55)


def _f_dice(rng, k):
    s = rng.randint(2, 12)
    body = _pick(k, [
        "When two fair dice are rolled, the probability that the sum is {s} is",
        "Two fair dice are rolled. There are 36 equally likely outcomes, and {w} of them give a sum of {s}. So the probability is",
        "Two dice are rolled. What is the probability that the sum is at least {s}?",
        "If we roll two dice, how many outcomes give a total of {s}? Let us list them:",
    ]).format(s=s, w=_DICE_WAYS[s])
    return _maybe_intro(rng, "probability", body, 0.55)


def _f_coin(rng, k):
    n = rng.randint(2, 8)
    body = _pick(k, [
        "A fair coin is tossed {n} times. The probability of getting heads every time is 1/",
        "If you flip a fair coin {n} times, the number of possible sequences of heads and tails is",
        "A fair coin is flipped {n} times. What is the probability of getting at least one tail?",
        "Flip a coin {N} times.",
    ]).format(n=n, N=_NUM_WORDS[n])
    return _maybe_intro(rng, "counting", body, 0.55)



def _f_determinant(rng, k):
    a, b, c, d = (rng.randint(-5, 9) for _ in range(4))
    body = _pick(k, [
        "The determinant of the matrix [[{a}, {b}], [{c}, {d}]] is ad - bc = ({a})({d}) - ({b})({c}) =",
        "Compute the determinant of A = [[{a}, {b}], [{c}, {d}]].",
        "Let A = [[{a}, {b}], [{c}, {d}]]. The trace of A is the sum of its diagonal entries, namely",
        "Let A = [[{a}, {b}], [{c}, {d}]]. To decide whether A is invertible, we",
    ]).format(a=a, b=b, c=c, d=d)
    return _maybe_intro(rng, "linalg", body, 0.55)



def _f_speed(rng, k):
    t = rng.randint(2, 6)
    v = rng.choice([45, 50, 60, 64, 72, 80, 90])
    name = rng.choice(_NAMES)
    body = _pick(k, [
        "A train travels {d} kilometers in {t} hours. Its average speed is",
        "{name} drives at a steady {v} miles per hour. How far will {name} travel in {t} hours?",
        "A cyclist covers {d} km in {t} hours. At the same speed, how long would it take to cover",
        "Two cars leave the same town at noon, one heading north at {v} km/h and the other heading south at {w} km/h. After {t} hours, they are",
    ]).format(d=v * t, t=t, v=v, w=v - 10, name=name)
    return _maybe_intro(rng, "word", body, 0.55)


def _f_percent(rng, k):
    p = rng.choice([40, 60, 80, 120, 200, 240])
    pct = rng.choice([10, 15, 20, 25, 30, 50])
    disc = p * pct // 100
    body = _pick(k, [
        "A jacket originally priced at ${p} is on sale for {pct}% off. The discount is ${disc}, so the sale price is $",
        "What is {pct}% of {p}?",
        "A store raises the price of a ${p} item by {pct} percent. The new price is",
        "To convert {pct}% to a fraction in lowest terms, we write {pct}/100 and simplify to get",
    ]).format(p=p, pct=pct, disc=disc)
    return _maybe_intro(rng, "word", body, 0.55)


def _f_series(rng, k):
    n = rng.choice([10, 20, 25, 50, 100, 12, 30])
    body = _pick(k, [
        "The sum of the first {n} positive integers is n(n + 1)/2, which for n = {n} gives",
        "Gauss is said to have added the numbers from 1 to {n} by pairing the first with the last, the second with the second-to-last, and so on. Each pair sums to {m}, and there are",
        "The sum of the first {n} odd numbers is",
        "What is 1 + 2 + 3 + ... + {n}?",
    ]).format(n=n, m=n + 1)
    return _maybe_intro(rng, "counting", body, 0.55)



def _f_mod(rng, k):
    m = rng.randint(3, 12)
    a = rng.randint(m + 1, 99)
    body = _pick(k, [
        "{a} mod {m} is equal to",
        "When {a} is divided by {m}, the remainder is",
        "Working modulo {m}, the number {a} is congruent to",
        "If today is Monday, then {a} days from now it will be",
    ]).format(a=a, m=m)
    return _maybe_intro(rng, "numbers", body, 0.55)



def _f_power(rng, k):
    n = rng.randint(3, 12)
    b = rng.choice([2, 3, 5, 10])
    return _pick(k, [
        "{b} to the power of {n} equals",
        "{b}^{n} =",
        "{b}^{n} divided by {b}^{m} equals",
        "By the rules of exponents, {b}^{n} times {b}^2 equals {b} raised to the power",
    ]).format(b=b, n=n, m=n - 2)


def _f_system(rng, k):
    x, y = rng.randint(1, 12), rng.randint(1, 12)
    body = _pick(k, [
        "Consider the system x + y = {s} and x - y = {d}. Adding the two equations gives 2x = {tx}, so x =",
        "Solve the system of equations x + y = {s}, x - y = {d}.",
        "The sum of two numbers is {s} and their difference is {d}. What are the two numbers?",
        "Adult tickets cost $5 and child tickets cost $2. A group buys {s} tickets and pays ${cost}. If a is the number of adult tickets and c the number of child tickets, then a + c = {s} and",
    ]).format(s=x + y, d=x - y, tx=2 * x, cost=5 * x + 2 * y)
    return _maybe_intro(rng, "linear", body, 0.55)


def _f_mean(rng, k):
    vals = [rng.randint(50, 100) for _ in range(rng.randint(4, 6))]
    listed = ", ".join(str(v) for v in vals)
    name = rng.choice(_NAMES)
    body = _pick(k, [
        "The test scores were {l}. Their mean is",
        "{name} recorded the following temperatures during a week of fieldwork: {l}. The range of the data is",
        "Find the mean and the median of the data set {l}.",
        "On the last few quizzes, {name} scored {l}. What score is needed on the next quiz to bring her average up to",
    ]).format(l=listed, name=name)
    return _maybe_intro(rng, "stats", body, 0.55)



def _f_choose(rng, k):
    n = rng.randint(5, 12)
    r = rng.randint(2, 4)
    body = _pick(k, [
        "The number of ways to choose {r} students from a class of {n} is C({n}, {r}), which equals",
        "A committee of {r} is to be chosen from {n} people. Since the order does not matter, we use",
        "How many different {r}-letter arrangements can be made from {n} distinct letters if no letter is repeated?",
        "In how many ways can a president, a treasurer and a secretary be chosen from a club of {n} members?",
    ]).format(n=n, r=r)
    return _maybe_intro(rng, "counting", body, 0.55)



def _f_slope(rng, k):
    x1, y1 = rng.randint(-5, 5), rng.randint(-5, 5)
    dx, m = rng.randint(1, 4), rng.randint(-3, 4)
    x2, y2 = x1 + dx, y1 + m * dx
    body = _pick(k, [
        "The line through the points ({x1}, {y1}) and ({x2}, {y2}) has slope",
        "Find the equation of the line passing through ({x1}, {y1}) and ({x2}, {y2}). First we compute the slope:",
        "The midpoint of the segment joining ({x1}, {y1}) and ({x2}, {y2}) is",
        "The distance between the points ({x1}, {y1}) and ({x2}, {y2}) is given by the distance formula, which comes from",
    ]).format(x1=x1, y1=y1, x2=x2, y2=y2)
    return _maybe_intro(rng, "geometry", body, 0.55)



def _f_factorial(rng, k):
    n = rng.randint(4, 8)
    body = _pick(k, [
        "{n}! equals",
        "{N} factorial, written {n}!, is the product {prod}, which equals",
        "The number of ways to arrange {n} different books on a shelf is",
        "Note that {n}!/({m}!) simplifies to",
    ]).format(n=n, N=_NUM_WORDS[n].capitalize(), m=n - 1,
              prod=" x ".join(str(i) for i in range(n, 0, -1)))
    return _maybe_intro(rng, "counting", body, 0.55)



def _f_story(rng, k):
    name = rng.choice(_NAMES)
    friend = rng.choice([x for x in _NAMES if x != name])
    item, place = rng.choice(_ITEMS)
    a, b = rng.randint(8, 40), rng.randint(3, 20)
    c = rng.randint(2, a)
    body = _pick(k, [
        "{name} has {a} {item} and buys {b} more. Then {name} gives {c} to {friend}. How many {item} does {name} have left?",
        "{name} had {a} {item} in a {place}. After giving {c} of them to {friend}, {name} had",
        "{name} and {friend} together have {t} {item}. {name} has {b} more than {friend}. How many does {friend} have?",
        "There are {a} {item} in the {place}, and {name} takes out {c}. Then {friend} puts {b} back in. Now the {place} contains",
        "{name} is collecting {item}. On Monday the {place} held {a} of them, and every day after that {name} added {b} more.",
    ]).format(name=name, friend=friend, item=item, place=place, a=a, b=b,
              c=c, t=2 * a + b)
    return _maybe_intro(rng, "word", body, 0.55)


def _f_fraction(rng, k):
    b, d = rng.randint(3, 9), rng.randint(2, 9)
    a, c = rng.randint(1, b - 1), rng.randint(1, d - 1)
    body = _pick(k, [
        "To add {a}/{b} and {c}/{d}, we first find a common denominator, which is",
        "{a}/{b} times {c}/{d} equals",
        "Dividing by a fraction is the same as multiplying by its reciprocal, so ({a}/{b}) / ({c}/{d}) =",
        "Which is larger, {a}/{b} or {c}/{d}?",
    ]).format(a=a, b=b, c=c, d=d)
    return _maybe_intro(rng, "word", body, 0.55)



def _f_vector(rng, k):
    u = [rng.randint(-4, 6) for _ in range(3)]
    v = [rng.randint(-4, 6) for _ in range(3)]
    body = _pick(k, [
        "The dot product of u = ({u0}, {u1}, {u2}) and v = ({v0}, {v1}, {v2}) is",
        "Let u = ({u0}, {u1}, {u2}) and v = ({v0}, {v1}, {v2}). Then u + v =",
        "The length of the vector ({u0}, {u1}, {u2}) is the square root of",
        "Given u = ({u0}, {u1}, {u2}) and v = ({v0}, {v1}, {v2}), we want to know whether u and v are orthogonal.",
    ]).format(u0=u[0], u1=u[1], u2=u[2], v0=v[0], v1=v[1], v2=v[2])
    return _maybe_intro(rng, "linalg", body, 0.55)


_MATH_FRAMES = [
    (_f_arith_words, 4), (_f_linear, 6), (_f_quadratic, 5),
    (_f_power_rule, 5), (_f_integral, 4), (_f_gcd, 4), (_f_prime, 4),
    (_f_rectangle, 4), (_f_circle, 4), (_f_pythagoras, 4), (_f_dice, 5),
    (_f_coin, 4), (_f_determinant, 4), (_f_speed, 4), (_f_percent, 4),
    (_f_series, 4), (_f_mod, 4), (_f_power, 4), (_f_system, 4),
    (_f_mean, 4), (_f_choose, 4), (_f_slope, 4), (_f_factorial, 4),
    (_f_story, 6), (_f_fraction, 4), (_f_vector, 4),
]


def _math_frame_texts(rng):
    out = []
    for fn, count in _MATH_FRAMES:
        offset = rng.randrange(12)
        for i in range(count):
            out.append(_maybe_cut_open(rng, fn(rng, offset + i)))
    return out


def _maybe_cut_open(rng, text, prob=0.4):
    """Sometimes stop right after the last complete sentence (an open end)."""
    if rng.random() >= prob:
        return text
    cut = max(text.rfind(". ", 0, len(text) - 1),
              text.rfind("? ", 0, len(text) - 1))
    if cut < 10:
        return text
    return text[:cut + 1]


# ---------------------------------------------------------------------------
# PHILOSOPHY: hand-written prompts
# ---------------------------------------------------------------------------

PHIL_SHORT = [
    "Descartes famously concluded: I think, therefore I",
    "Socrates claimed that the unexamined life is not worth",
    "Utilitarianism holds that the right action is the one that",
    "The categorical imperative was formulated by",
    "Epistemology is the branch of philosophy that studies",
    "Metaphysics asks questions such as",
    "In ethics, a deontologist believes that",
    "Plato's Allegory of the Cave describes prisoners who",
    "Aristotle defined human beings as",
    "The problem of induction was famously raised by",
    "Nietzsche declared that God is",
    "A valid argument is one in which",
    "An argument is sound if it is valid and",
    "Modus ponens is the rule that from P and 'if P then Q' we may infer",
    "Thomas Hobbes described life in the state of nature as solitary, poor, nasty, brutish, and",
    "The mind-body problem asks",
    "Philosophy begins in wonder.",
    "Consider the following thought experiment.",
    "The trolley problem goes like this:",
    "Kant distinguished between analytic and",
    "Empiricists such as Locke held that the mind at birth is",
    "Wittgenstein ended the Tractatus with the remark that",
    "According to Hume, reason is the slave of the",
    "What is justice?",
    "What makes an action morally right?",
    "Is free will compatible with determinism?",
    "Can we ever know anything for certain?",
    "The Ship of Theseus raises a puzzle about",
    "A tautology is a statement that is",
    "In logic, a fallacy is",
    "The ad hominem fallacy occurs when",
    "Existentialists such as Sartre argued that existence precedes",
    "Mill's harm principle states that",
    "Rawls imagined people choosing principles of justice from behind a",
    "The Euthyphro dilemma asks whether something is good because God commands it, or",
    "Zeno of Elea argued that motion is",
    "Objection:",
    "Reply to the objection.",
    "Premise 1: All humans are mortal. Premise 2: Socrates is human. Conclusion:",
    "The opposite of realism about universals is",
    "For Aristotle, the highest human good is",
    "Berkeley summed up his idealism in the slogan: to be is to be",
    "Leibniz held that this is the best of all possible",
    "Spinoza identified God with",
    "A priori knowledge is knowledge that is justified independently of",
    "Some philosophers deny that there is any such thing as objective morality.",
    "The word 'philosophy' comes from Greek words meaning",
    "Moral relativism is the view that",
    "Solipsism is the view that",
    "Occam's razor advises us not to",
    "Pascal's wager argues that it is rational to",
    "Marx famously wrote that philosophers have only interpreted the world; the point, however, is to",
    "The is-ought gap, first noted by Hume, is the idea that",
    "Simone de Beauvoir wrote that one is not born, but rather becomes,",
    "Confucius taught that a good ruler governs by",
    "Stoic philosophers like Epictetus taught that we should distinguish between what is up to us and",
    "According to Locke, personal identity consists in",
    "Let us begin with a definition.",
    "Frege distinguished between the sense of an expression and its",
    "The liar paradox arises from the sentence",
    "Hegel's dialectic is often summarized as thesis, antithesis, and",
    "Why is there something rather than nothing?",
    "Plato was a student of",
    "Aristotle was a student of",
    "Aristotle tutored the young Alexander the",
    "The Critique of Pure Reason was written by Immanuel",
    "Utilitarianism is most closely associated with Jeremy Bentham and John Stuart",
    "Thus Spoke Zarathustra is a book by Friedrich",
    "The Leviathan, published in 1651, is the best-known work of Thomas",
    "Descartes's Meditations on First",
    "Wittgenstein's early masterpiece is the Tractatus Logico-",
    "The Nicomachean Ethics was written by",
    "In the Republic, Plato argues that the ideal city should be ruled by philosopher-",
    "Hume's major early work was A Treatise of Human",
    "Locke compared the mind of a newborn to a blank slate, or in Latin, tabula",
    "The Latin phrase 'cogito, ergo sum' means 'I think, therefore",
    "The study of valid reasoning is called",
    "The branch of philosophy concerned with beauty and art is called",
    "The branch of philosophy that studies right and wrong conduct is called",
    "All men are mortal. Socrates is a man. Therefore, Socrates is",
    "If all A are B and all B are C, then all A are",
    "Either it is raining or it is not",
    "In Athens in 399 BC, Socrates was sentenced to death by drinking",
    "Kierkegaard is often called the father of",
    "John Stuart Mill's essay on individual freedom is titled On",
    "The Social Contract was written by Jean-Jacques",
    "Karl Marx and Friedrich Engels wrote The Communist",
    "The argument from design compares the universe to a watch and God to a",
    "Berkeley's famous question: if a tree falls in a forest and no one is around to hear it, does it make a",
    "The law of non-contradiction says that a statement cannot be both true and",
    "Kant called the moral law within him and the starry heavens above him the two things that fill the mind with",
]

PHIL_MEDIUM = [
    "In the Meditations, Descartes tries to doubt everything that can possibly be doubted. He imagines that an evil demon might be deceiving him about the external world, and even about mathematics. Yet one thing survives the doubt:",
    "Hume argued that we never actually observe causation itself. When one billiard ball strikes another, we see the first ball move and then the second, but we do not see any necessary connection between them. All we observe is",
    "Mill defended the view that pleasures differ in quality as well as quantity. It is better, he wrote, to be a human being dissatisfied than a pig satisfied. The reason is that",
    "Kant's first formulation of the categorical imperative says that we should act only according to a maxim that we could at the same time will to become a universal law. Suppose I consider making a false promise to borrow money. If everyone did this,",
    "Aristotle argued that virtue is a mean between two extremes, one of excess and one of deficiency. Courage, for example, lies between cowardice and",
    "The problem of evil is one of the oldest objections to belief in God. If God is all-powerful, all-knowing and perfectly good, then why does suffering exist? Theists have offered several responses. The most common is",
    "According to the correspondence theory of truth, a statement is true when it matches the way the world actually is. The coherence theory, by contrast, holds that",
    "In the Republic, Plato divides the ideal city into three classes: the rulers, the auxiliaries who defend the city, and the producers. Each class corresponds to a part of the soul, namely",
    "Philosophers distinguish between necessary and sufficient conditions. Being a mammal is a necessary condition for being a dog, but it is not sufficient, because",
    "Compatibilists argue that free will is consistent with determinism. On their view, an action is free if it flows from the agent's own desires and reasoning, rather than from",
    "Gettier showed that justified true belief is not enough for knowledge. In one of his examples, a man believes that the person who will get the job has ten coins in his pocket. As it happens,",
    "Nietzsche contrasted what he called master morality with slave morality. Master morality begins from the self-affirmation of the strong, who call themselves good. Slave morality, on the other hand,",
    "Locke argued that a government's authority rests on the consent of the governed. If a ruler violates the natural rights of the people to life, liberty and property, then",
    "Virtue ethics shifts the central question of morality. Instead of asking 'What should I do?', it asks",
    "Consider the sentence 'This statement is false.' If it is true, then what it says is the case, so it must be false. But if it is false, then",
    "Wittgenstein's later philosophy rejects the idea that words get their meaning by standing for objects. Instead, he suggested that the meaning of a word is",
    "Berkeley argued that we have no reason to believe in material objects existing independently of minds. Everything we know about a cherry, its color, taste, shape and texture, is",
    "A common objection to utilitarianism is that it could justify terrible acts. Imagine a surgeon who could save five patients by killing one healthy visitor and distributing his organs. A strict utilitarian seems committed to",
    "Sartre told the story of a student who came to him during the war, torn between joining the resistance and staying to care for his mother. Sartre's advice was simply:",
    "The difference between deductive and inductive reasoning is important. In a deductive argument, if the premises are true, the conclusion must be true. In an inductive argument,",
    "Anselm's ontological argument defines God as that than which nothing greater can be conceived. He then argues that such a being must exist in reality and not only in the mind, because",
    "Hobbes believed that without a common power to keep them in awe, people would be in a condition of war of all against all. To escape it, they agree to",
    "Dualism is the view that the mind and the body are two fundamentally different kinds of thing. Its main rival, physicalism, holds that",
    "Many philosophers think that moral responsibility requires the ability to do otherwise. Harry Frankfurt challenged this assumption with a clever example.",
    "Socrates often claimed that he knew nothing. This was not false modesty. His point was that",
    "Plato's theory of Forms holds that beyond the changing world of the senses there exists a realm of perfect, unchanging Forms. A particular beautiful thing is beautiful only because",
    "In political philosophy, libertarians emphasize individual rights and limited government. Robert Nozick argued that taxation of earnings is",
    "Kant held that space and time are not features of things as they are in themselves. Rather, they are",
    "Epicurus argued that death is nothing to us. When we exist, death is not present, and when death is present,",
    "The principle of charity tells us that when we interpret someone else's argument, we should",
    "Pragmatists such as William James judged ideas by their practical consequences. For James, a belief is true if",
    "A counterexample is a case that shows a general claim to be false. For example, the claim that all swans are white was refuted when",
    "Rousseau opened The Social Contract with a striking line: man is born free, and everywhere he is",
    "Here is an argument for skepticism about the external world.",
    "Aquinas offered five ways of demonstrating the existence of God. The first is the argument from motion, which begins from the observation that",
    "Moral realists hold that there are objective moral facts that do not depend on what anyone thinks. Anti-realists deny this. One argument for anti-realism starts from",
    "In the Phaedo, Socrates spends his last hours arguing that the soul is immortal. One of his arguments is the argument from recollection, which says that",
    "Some philosophers of mind argue that consciousness cannot be explained in physical terms. They point out that even a complete description of the brain would leave out",
]

PHIL_LONG = [
    "Imagine a runaway trolley heading toward five workers on the track. You are standing next to a lever that would divert it onto a side track, where it would kill one worker instead. Most people say that pulling the lever is permissible. Now change the case: you are on a bridge above the track, and the only way to stop the trolley is to push a large man off the bridge into its path. Most people say this is wrong, even though",
    "Plato asks us to picture prisoners chained in a cave since childhood, facing a wall. Behind them a fire burns, and between the fire and the prisoners people carry objects whose shadows fall on the wall. The prisoners take these shadows to be the whole of reality. Suppose one prisoner is freed and dragged up into the sunlight. At first he is dazzled and confused, but gradually",
    "Descartes argued that the mind and body must be distinct substances. His reasoning went roughly like this. I can clearly and distinctly conceive of my mind existing without my body, since I can doubt that I have a body but I cannot doubt that I am thinking. Whatever I can clearly conceive as separate, God could create as separate. Therefore",
    "Frank Jackson's thought experiment about Mary is meant to challenge physicalism. Mary is a brilliant scientist who has spent her whole life in a black-and-white room. She has learned every physical fact there is to know about color vision: the wavelengths of light, the workings of the retina, the neural pathways in the brain. One day she leaves the room and sees a ripe tomato for the first time. The question is:",
    "Hume's problem of induction can be put simply. All of our reasoning about the future relies on the assumption that the future will resemble the past. We expect the sun to rise tomorrow because it has always risen before. But how could we justify that assumption? Not by pure logic, because there is no contradiction in supposing that nature might change. And not by experience either, because",
    "John Rawls asks us to imagine a group of people deciding on the basic principles of their society. The catch is that they must choose from behind a veil of ignorance: they do not know whether they will be rich or poor, talented or untalented, or which religion or ethnicity they will have. Rawls argued that people in this position would choose two principles. The first guarantees",
    "Robert Nozick invented the experience machine to test hedonism. Suppose there were a machine that could give you any experiences you wanted. Neuroscientists could stimulate your brain so that you would think and feel you were writing a great novel, making a friend, or climbing a mountain, while all the time you were floating in a tank. Would you plug in for life? Nozick thought most of us would refuse, and that this shows",
    "Aristotle opens the Nicomachean Ethics by observing that every action aims at some good. Some goods we pursue for the sake of other things, as we pursue wealth for the sake of what it can buy. But there must be some final good that we pursue for its own sake, otherwise our desires would be empty and futile. Aristotle calls this good eudaimonia, which is usually translated as happiness or flourishing, and he argues that it consists in",
    "Kant's second formulation of the categorical imperative tells us to treat humanity, whether in ourselves or in others, always as an end and never merely as a means. This does not forbid using people at all: when I buy bread from a baker, I use the baker as a means to getting bread. What it forbids is treating someone merely as a means, for example by",
    "Zeno offered a famous paradox about a race between swift Achilles and a slow tortoise that has been given a head start. By the time Achilles reaches the point where the tortoise began, the tortoise has moved a little further ahead. By the time Achilles reaches that new point, the tortoise has moved on again. This continues forever, so it seems Achilles can never catch up. The standard modern response appeals to",
    "John Searle's Chinese Room argument targets the claim that running the right program is enough for understanding. Searle imagines himself locked in a room with a rulebook written in English. Slips of paper with Chinese characters are passed in, and by following the rules he passes back other Chinese characters. To people outside, his answers are indistinguishable from those of a native speaker. Yet Searle understands no Chinese at all. His conclusion is that",
    "The Ship of Theseus was kept in the harbor of Athens as a memorial. Over the years, its planks rotted and were replaced one by one, until eventually not a single original plank remained. Was it still the same ship? To make the puzzle harder, suppose someone had collected all the discarded planks and reassembled them into a ship. Now we have two candidates for being the original ship, and",
    "Mill's argument for freedom of speech in On Liberty has several strands. If a silenced opinion is true, society loses the chance to exchange error for truth. If it is false, society loses something almost as valuable, namely the clearer perception of truth that comes from its collision with error. And even if the received opinion is entirely true, unless it is vigorously contested it will be held as",
    "In his Second Treatise of Government, Locke explains how private property can arise in a world originally given to all people in common. When a person mixes his labor with something from nature, such as picking apples from a wild tree or clearing and plowing a field, he makes it his own. But Locke adds an important limit to this process:",
    "Derek Parfit imagined a teleporter that scans your body, destroys it, and builds an exact copy on Mars from new matter. The person who steps out on Mars has your memories, your personality and your plans, and believes that he simply traveled. Is he you? Many people feel the answer is yes. But now suppose the machine malfunctions and fails to destroy the original, so that",
    "Nietzsche's idea of eternal recurrence is presented as a thought experiment. Suppose a demon crept into your loneliest loneliness and told you that you would have to live your life again, exactly as it was, with every pain and every joy, every thought and sigh, in the same sequence, an infinite number of times. Would you curse the demon, or would you welcome the news? For Nietzsche, the question is a test of",
    "The debate between rationalists and empiricists dominated philosophy in the seventeenth and eighteenth centuries. Rationalists such as Descartes, Spinoza and Leibniz believed that reason alone can give us substantive knowledge of the world, and that some ideas are innate. Empiricists such as Locke, Berkeley and Hume insisted that all our ideas come from experience. Kant tried to reconcile the two camps by arguing that",
    "Philippa Foot and Judith Jarvis Thomson discussed many variations of the trolley case to understand why our intuitions shift. One proposed explanation is the doctrine of double effect, which goes back to Aquinas. According to this doctrine, it can be permissible to bring about a harm as a foreseen side effect of pursuing a good end, even when it would be wrong to bring about the same harm as",
    "Consider the following argument. Premise one: if God exists, then there is no pointless suffering. Premise two: there is pointless suffering, such as a fawn burned to death in a forest fire that no one ever sees. Conclusion: God does not exist. The argument is clearly valid, since it has the form of modus tollens. So a theist who wants to reject the conclusion must",
    "Thomas Nagel asked what it is like to be a bat. Bats perceive the world through echolocation, sending out high-pitched cries and detecting the echoes. We can learn a great deal about the physics and neurology of this process. But Nagel argued that no amount of objective information will tell us what echolocation is like from the bat's own point of view. If he is right, then",
    "Peter Singer presents a simple case. You are walking past a shallow pond and see a small child drowning. You could easily wade in and save the child, but your expensive shoes would be ruined. Almost everyone agrees you ought to save the child. Singer then points out that each of us can save the life of a distant child by donating to an effective charity, at a cost no greater than a pair of shoes. If distance makes no moral difference,",
    "Wittgenstein's private language argument is one of the most discussed passages in twentieth-century philosophy. He imagines someone who wants to keep a diary of a certain recurring sensation, writing the sign 'S' whenever it occurs. The trouble is that there seems to be no criterion of correctness for using 'S'. Whatever seems right to the diarist will be right, and that only means that",
    "Hobbes and Locke both used the idea of a state of nature to justify political authority, but they described it very differently. For Hobbes, the state of nature is a condition of constant fear and insecurity, in which there is no place for industry, agriculture or culture. Locke's state of nature is more peaceful, because it is governed by a law of nature that reason teaches to all who consult it. As a result,",
    "In the Crito, Socrates is in prison awaiting execution, and his friend Crito urges him to escape. The arrangements have been made, the guards bribed. Socrates refuses. He imagines the Laws of Athens addressing him and asking whether he intends to destroy them. He has lived his whole life in the city, benefited from its laws, and never chosen to leave. By doing so, he has in effect agreed",
    "Pascal's wager is an argument not for the truth of God's existence but for the rationality of belief. If you believe in God and God exists, you gain infinite happiness. If you believe and God does not exist, you lose very little. If you do not believe and God exists, you lose everything. Since the possible gain is infinite, Pascal concluded that a rational person should wager on God. Critics have raised several objections. One is the many-gods objection:",
    "Two people can agree on every fact about an action and still disagree about whether it was right. This has led some philosophers to think that moral judgments are not descriptions of the world at all. According to emotivism, when I say that stealing is wrong, I am not reporting a fact but expressing my disapproval, somewhat like saying 'Stealing, boo!' One well-known difficulty for this view is",
    "Heraclitus held that everything is in flux, and is often quoted as saying that you cannot step into the same river twice, since fresh waters are always flowing past. Parmenides took the opposite extreme, arguing that change is impossible, because change would require something to come from what is not, and what is not cannot be thought or spoken of. Plato's theory of Forms can be read as an attempt to",
    "Sorites paradoxes arise for vague terms. One grain of sand is not a heap. Adding a single grain to something that is not a heap never turns it into a heap. So, by repeating this reasoning, ten thousand grains of sand are not a heap either. But that is absurd. Each premise seems true and the reasoning seems valid, so something has to give. Some philosophers respond by",
    "The Stoics taught that virtue is the only true good and that external things such as health, wealth and reputation are indifferent. This does not mean we should not prefer health to sickness; it means that our happiness should not depend on things outside our control. Marcus Aurelius, writing in his private notebooks while commanding armies, reminded himself each morning that",
    "In the Euthyphro, Socrates meets a young man who is prosecuting his own father for murder and who claims to know exactly what piety is. Socrates asks him for a definition. Euthyphro first offers an example rather than a definition, then suggests that piety is what the gods love. Socrates responds with his famous question:",
    "Hilary Putnam asked us to consider the possibility that we are brains in a vat. A mad scientist has removed your brain, placed it in a vat of nutrients, and connected its nerve endings to a supercomputer that feeds it exactly the signals it would receive from a normal body moving about in the world. Everything would seem perfectly ordinary to you. Since you cannot tell from the inside whether this is happening, the skeptic concludes that you do not know that you have",
    "A famous puzzle about time was posed by Augustine in his Confessions. What, then, is time? If no one asks me, I know; if I wish to explain it to someone who asks, I do not know. The past no longer exists and the future does not yet exist, while the present, if it were always present and never passed into the past, would not be time but eternity. Augustine eventually suggested that time is",
    "When Gyges, a humble shepherd in Plato's Republic, finds a ring that makes him invisible, he uses it to seduce the queen, kill the king and seize the throne. Glaucon tells this story to make a challenge. Suppose that a just person and an unjust person each had such a ring. Glaucon claims that both would behave in exactly the same way, because nobody is just willingly, but only out of fear of being caught. Socrates must therefore show that justice is worth having",
    "Aristotle distinguished four kinds of cause, or four ways of answering the question 'why?'. Take a bronze statue. Its material cause is the bronze it is made of. Its formal cause is the shape or design that makes it a statue of, say, a horse. Its efficient cause is the sculptor who worked the bronze. And its final cause is the purpose for which it was made, such as",
    "Many people assume that if something is natural it must be good, and that if it is unnatural it must be bad. Philosophers call this move the appeal to nature, and it is usually regarded as a fallacy. Disease and earthquakes are perfectly natural, while eyeglasses, vaccines and written language are not. So the mere fact that something occurs in nature tells us nothing about whether",
    "G. E. Moore responded to the skeptic in a surprisingly direct way. Holding up his hands in front of an audience, he said: here is one hand, and here is another. Therefore, he concluded, at least two external objects exist. Many listeners felt that this simply missed the point of the skeptical challenge. Moore's defenders reply that he was making a serious claim about the structure of justification, namely that",
    "Imagine a town in which a barber shaves all and only those men who do not shave themselves. Does the barber shave himself? If he does, then he is one of the men who shave themselves, so by the rule he does not. If he does not, then he is one of the men who do not shave themselves, so by the rule he does. Bertrand Russell used a version of this puzzle, concerning the set of all sets that are not members of themselves, to show that",
    "In the early twentieth century, the logical positivists of the Vienna Circle proposed a bold criterion of meaning. According to their verification principle, a statement is meaningful only if it is either true by definition or can in principle be verified by experience. On this view, much of traditional metaphysics, ethics and theology turns out to be literally nonsense. Critics quickly pointed out a serious problem: the verification principle itself",
    "Peter Singer argued that the capacity to suffer, not membership in a particular species, is what gives a being moral standing. If a pig and a young child can both feel pain, then there is no principled reason to count the pig's pain as less important simply because it is a pig. Singer called the failure to give equal consideration to the interests of other animals",
    "The principle of double effect, the sorites paradox and the problem of moral luck are all examples of topics on which philosophers have argued for centuries without reaching agreement. Some people take this as evidence that philosophy makes no progress at all. Others reply that progress in philosophy looks different from progress in science. Even when questions remain open, we come to understand them better: we learn which answers are untenable, which distinctions matter, and",
]


# ---------------------------------------------------------------------------
# PHILOSOPHY: compositional frames
# ---------------------------------------------------------------------------

# (philosopher, pronoun, topic, thesis clause, reason clause)
_VIEWS = [
    ("Plato", "he", "metaphysics",
     "the objects we perceive with our senses are imperfect copies of eternal Forms",
     "nothing in the physical world is perfectly equal, beautiful or just, yet we can think about perfect equality, beauty and justice"),
    ("Aristotle", "he", "ethics",
     "a good life is one in which we exercise reason well over a whole lifetime",
     "the proper function of a human being is rational activity, and a thing is good when it performs its function well"),
    ("Aristotle", "he", "metaphysics",
     "forms do not exist apart from the individual things that have them",
     "a separate world of Forms would explain nothing about why particular things change and come to be"),
    ("Descartes", "he", "epistemology",
     "knowledge must rest on foundations that are absolutely certain",
     "a belief that can be doubted cannot support the weight of everything else we claim to know"),
    ("Descartes", "he", "mind",
     "the mind is a thinking thing that could exist without any body",
     "he could doubt the existence of his body but not the existence of his own thinking"),
    ("Locke", "he", "epistemology",
     "all of our ideas ultimately come from sensation and reflection",
     "if there were innate ideas, children and people in every culture would be aware of them"),
    ("Locke", "he", "politics",
     "legitimate government depends on the consent of the people it governs",
     "people are by nature free and equal, so no one can be subjected to another's power without agreeing to it"),
    ("Hume", "he", "epistemology",
     "our expectation that the future will resemble the past is a product of custom, not of reason",
     "no argument for that expectation can avoid assuming what it is trying to prove"),
    ("Hume", "he", "ethics",
     "moral distinctions are grounded in sentiment rather than in reason",
     "reason alone can never move us to act, while moral judgments clearly do"),
    ("Hume", "he", "mind",
     "the self is nothing but a bundle of perceptions in constant flux",
     "whenever he looked inward he found only particular thoughts and feelings, never a self that has them"),
    ("Kant", "he", "ethics",
     "the moral worth of an action depends on the principle behind it, not on its consequences",
     "consequences are partly a matter of luck, whereas the good will is good in itself"),
    ("Kant", "he", "epistemology",
     "the mind actively structures experience through concepts such as cause and substance",
     "experience alone could never give us the necessity and universality that these concepts involve"),
    ("Mill", "he", "ethics",
     "actions are right in proportion as they tend to promote happiness",
     "happiness is the only thing people desire as an end, and the only evidence that something is desirable is that people actually desire it"),
    ("Mill", "he", "politics",
     "society may restrict an individual's liberty only to prevent harm to others",
     "people are the best judges of their own interests, and a society of varied experiments in living makes progress possible"),
    ("Nietzsche", "he", "ethics",
     "traditional morality grew out of the resentment of the weak against the strong",
     "its praise of humility and pity served to turn the values of the powerful upside down"),
    ("Nietzsche", "he", "existentialism",
     "we must create our own values once the old religious foundations have collapsed",
     "nothing outside human life can any longer guarantee that our values are correct"),
    ("Wittgenstein", "he", "language",
     "many philosophical problems arise from misunderstandings of how language works",
     "philosophers take words out of the everyday settings in which they have a clear use"),
    ("Wittgenstein", "he", "language",
     "a proposition pictures a possible state of affairs",
     "a sentence shares a logical form with the situation it describes, much as a map shares a structure with a territory"),
    ("Hobbes", "he", "politics",
     "people should hand over almost all of their natural liberty to an absolute sovereign",
     "only a power strong enough to overawe everyone can prevent a return to the war of all against all"),
    ("Rousseau", "he", "politics",
     "legitimate laws must express the general will of the whole people",
     "only by obeying laws we give ourselves can we remain free while living in society"),
    ("Berkeley", "he", "metaphysics",
     "material objects are nothing more than collections of ideas in minds",
     "we cannot even coherently conceive of an object that no one perceives"),
    ("Spinoza", "he", "metaphysics",
     "there is only one substance, which can be called either God or Nature",
     "a substance must be independent of everything else, and only an infinite being could meet that condition"),
    ("Leibniz", "he", "metaphysics",
     "nothing happens without a sufficient reason why it is so and not otherwise",
     "a universe in which events simply occurred for no reason would be unintelligible"),
    ("Sartre", "he", "existentialism",
     "human beings are condemned to be free",
     "there is no fixed human nature, so each of us is responsible for making ourselves through our choices"),
    ("Simone de Beauvoir", "she", "existentialism",
     "women have historically been defined as the Other in relation to men",
     "cultural myths and social institutions treated the male perspective as the neutral standard"),
    ("Hannah Arendt", "she", "politics",
     "great evil can be committed by quite ordinary people who simply fail to think",
     "the officials who carried out atrocities were often unremarkable functionaries rather than fanatics"),
    ("Epicurus", "he", "ethics",
     "the good life consists in tranquility and freedom from pain",
     "the pursuit of luxury and fame brings anxiety that outweighs whatever pleasure it produces"),
    ("Epictetus", "he", "ethics",
     "we are disturbed not by things themselves but by our judgments about them",
     "the same event can leave one person calm and another in despair"),
    ("Aquinas", "he", "religion",
     "faith and reason cannot genuinely contradict one another",
     "both come from the same divine source, which cannot be in conflict with itself"),
    ("Anselm", "he", "religion",
     "the very concept of God shows that God must exist",
     "a being that existed only in the understanding would be less great than one that also existed in reality"),
    ("Rawls", "he", "politics",
     "social and economic inequalities are justified only if they benefit the least advantaged",
     "no one deserves the natural talents or social position they happen to be born with"),
    ("Nozick", "he", "politics",
     "a distribution of goods is just if it arose from just acquisitions and voluntary transfers",
     "imposing a pattern of distribution would require constant interference with people's free choices"),
    ("Confucius", "he", "ethics",
     "virtue is cultivated through ritual, family relationships and the example of the wise",
     "people become good not by memorizing rules but by being shaped by the practices of a humane community"),
    ("Russell", "he", "language",
     "a definite description such as 'the present King of France' does not function as a name",
     "otherwise sentences about things that do not exist would be neither true nor false"),
    ("Socrates", "he", "ethics",
     "no one does wrong willingly",
     "everyone desires what is good for them, so wrongdoing must come from ignorance of what is truly good"),
    ("Heidegger", "he", "existentialism",
     "we are always already involved in a world of practical concerns before we ever theorize about it",
     "a hammer shows up for us first as something to hammer with, not as an object with measurable properties"),
    ("Mary Wollstonecraft", "she", "politics",
     "women deserve the same education as men",
     "the apparent weaknesses attributed to women were the product of a narrow upbringing rather than of nature"),
    ("Parfit", "he", "mind",
     "personal identity is not what matters in survival",
     "what we really care about is psychological continuity, which could in principle hold between several future people"),
]

# (term, definition, illustration)
_CONCEPTS = [
    ("determinism", "the view that every event is fixed by prior events together with the laws of nature",
     "If determinism is true, then in principle a being who knew the complete state of the universe a million years ago could have predicted what you would eat for breakfast today."),
    ("hedonism", "the view that pleasure is the only thing that is good in itself",
     "A hedonist will say that friendship and knowledge matter only because of the enjoyment they bring."),
    ("physicalism", "the view that everything that exists is ultimately physical",
     "According to physicalism, a feeling of joy is nothing over and above a certain pattern of activity in the brain."),
    ("skepticism", "the view that we do not have knowledge, or at least much less than we ordinarily think",
     "A skeptic may ask how you know that you are not dreaming right now."),
    ("egoism", "the view that each person ought to pursue his or her own self-interest",
     "An ethical egoist would say that helping a stranger is right only when it somehow benefits the helper."),
    ("consequentialism", "the view that the rightness of an action depends only on its consequences",
     "For a consequentialist, breaking a promise is wrong only if keeping it would lead to better results."),
    ("nominalism", "the view that there are no universals, only particular things",
     "A nominalist will say that two red apples do not share some abstract entity called redness; they are simply both red."),
    ("foundationalism", "the view that knowledge rests on a set of basic beliefs that do not depend on any other beliefs",
     "A foundationalist might treat a belief such as 'I seem to see something red' as a basic belief."),
    ("fatalism", "the view that whatever will happen will happen no matter what we do",
     "A fatalist soldier might refuse to take cover, reasoning that if the bullet has his name on it, hiding will not help."),
    ("idealism", "the view that reality is fundamentally mental",
     "An idealist holds that a table is, in the end, a collection of ideas or experiences rather than a lump of mind-independent matter."),
    ("natural law", "the theory that there are moral principles built into human nature and discoverable by reason",
     "A natural law theorist might argue that laws which permit the killing of innocents are not genuine laws at all."),
    ("the social contract", "the idea that political authority rests on an agreement, real or hypothetical, among the people who are governed",
     "Hobbes, Locke and Rousseau all used the social contract, though they drew very different conclusions from it."),
    ("a priori knowledge", "knowledge that can be justified without relying on sense experience",
     "Knowing that all bachelors are unmarried does not require a survey of bachelors."),
    ("an analytic statement", "a statement that is true simply in virtue of the meanings of its words",
     "The sentence 'All triangles have three sides' is a standard example."),
    ("epiphenomenalism", "the view that mental events are caused by physical events but have no effects of their own",
     "On this view, the feeling of pain accompanies the withdrawal of your hand from the flame but does not cause it."),
    ("the categorical imperative", "a moral command that applies to every rational being regardless of their desires",
     "Unlike the advice 'If you want to stay healthy, exercise', it does not begin with an 'if'."),
    ("moral luck", "the phenomenon that we judge people partly for things that were outside their control",
     "Two drivers may be equally careless, yet only the one whose car happens to hit a child is blamed for a death."),
    ("cultural relativism", "the view that moral claims are true or false only relative to the standards of a particular culture",
     "A relativist may say that a custom can be right in one society and wrong in another."),
    ("a virtue", "a stable trait of character that disposes a person to feel and act well",
     "Honesty, courage and generosity are standard examples of virtues."),
    ("begging the question", "assuming in the premises of an argument the very thing the argument is supposed to prove",
     "Someone who argues that the Bible is reliable because the Bible says so is begging the question."),
    ("a straw man", "a distorted version of an opponent's position that is easier to attack than the real one",
     "If I claim that my opponent wants to abolish all rules when she only proposed relaxing one, I have attacked a straw man."),
    ("the principle of sufficient reason", "the principle that everything has an explanation for why it is as it is",
     "Leibniz used the principle to argue that the universe as a whole must have a reason for existing."),
    ("qualia", "the subjective qualities of experience, such as the way red looks or the way coffee smells",
     "Many philosophers think qualia pose the hardest problem for a scientific account of the mind."),
    ("functionalism", "the view that mental states are defined by what they do rather than by what they are made of",
     "A functionalist would say that a silicon-based robot could have beliefs if its internal states played the right causal roles."),
    ("the veil of ignorance", "a device for choosing principles of justice without knowing one's own place in society",
     "Behind the veil, you do not know whether you will be born rich or poor."),
    ("existentialism", "a philosophical movement concerned with freedom, choice and the search for meaning in an indifferent world",
     "Existentialists often emphasize feelings such as anxiety and dread as revealing something important about the human condition."),
    ("a paradox", "an apparently sound argument from apparently true premises to an apparently false conclusion",
     "The sorites paradox, about when a collection of grains becomes a heap, is a classic example."),
    ("compatibilism", "the view that free will and determinism can both be true",
     "A compatibilist may say that you act freely when you do what you want, even if your wants were themselves caused."),
]

_PHIL_INTROS = {
    "ethics": [
        "Ethics is the part of philosophy that asks how we ought to live and what we owe to one another. Its questions are not only academic: they come up whenever we decide whether to keep a difficult promise, tell an uncomfortable truth, or spend money on ourselves rather than on others.",
        "Moral philosophers disagree not only about particular questions, such as whether lying is ever permissible, but also about what makes anything right or wrong in the first place. Some look to consequences, some to duties and rights, and some to the character of the person acting.",
    ],
    "epistemology": [
        "Epistemology asks what knowledge is and how we can get it. It is one thing to believe something and another to know it, and philosophers since Plato have tried to say precisely what must be added to a true belief to turn it into knowledge.",
        "Most of what we believe we have never checked for ourselves. We rely on memory, on testimony, on textbooks and on experts. The theory of knowledge asks when such reliance is reasonable, and whether there is anything we can know with complete certainty.",
    ],
    "metaphysics": [
        "Metaphysics investigates the most general features of reality. It asks what kinds of things exist, whether there are abstract objects like numbers and properties, and what it is for one thing to cause another or to remain the same thing over time.",
        "Some of the oldest questions in philosophy concern what is ultimately real. Is the world made of one kind of stuff or many? Do things have essences? Is time something that flows, or is the passage of time an illusion created by our limited point of view?",
    ],
    "mind": [
        "The philosophy of mind asks how thoughts, feelings and sensations fit into the natural world. We know that the brain is involved in everything we experience, but it remains deeply puzzling how a physical organ could give rise to the felt quality of seeing a sunset.",
        "When you stub your toe, nerves fire and signals travel to your brain, and at the same time you feel a sharp pain. The question of how these two descriptions of the same event are related has occupied philosophers for centuries, and it is still far from settled.",
    ],
    "politics": [
        "Political philosophy asks what could justify the power that states exercise over their citizens. Governments tax us, pass laws and punish those who break them, and it is natural to wonder what, if anything, makes this legitimate rather than simply a matter of force.",
        "Every society must decide how to distribute its resources, who gets to make the laws, and how far the state may interfere in the lives of individuals. Political philosophers try to find principles that could answer these questions in a way that all reasonable citizens might accept.",
    ],
    "existentialism": [
        "Existentialist thinkers begin not from abstract systems but from the situation of the individual who must choose how to live. They stress that we find ourselves in a world we did not make, without a rulebook that tells us what our lives are for.",
        "In the nineteenth and twentieth centuries a number of writers, some religious and some fiercely atheist, placed anxiety, choice and authenticity at the center of philosophy. They thought traditional systems had ignored what it actually feels like to exist as a finite, mortal individual.",
    ],
    "language": [
        "In the twentieth century many philosophers turned their attention to language, convinced that older philosophical puzzles could be clarified or even dissolved by paying close attention to how words actually function in meaningful sentences.",
        "Words seem to reach out and touch the world: the name 'Paris' refers to a city, and the sentence 'Paris is large' is true because of how that city is. Explaining how such a relation between symbols and things is possible turned out to be one of the hardest tasks in modern philosophy.",
    ],
    "religion": [
        "The philosophy of religion examines arguments for and against the existence of God, as well as questions about faith, miracles and the problem of evil. Its methods are the same as those of the rest of philosophy: careful definitions, explicit premises and the search for counterexamples.",
        "Believers and skeptics alike have long wondered whether the existence of God can be established by argument, or whether it must be a matter of faith. Philosophers have examined arguments from the existence of the world, from its apparent design, and from the very idea of a perfect being.",
    ],
}

_PHIL_LEADS = [
    "Lecture notes, week {n}.",
    "Introduction to Philosophy, unit {n}.",
    "Study guide, section {n}.",
    "From a set of notes for first-year students.",
    "Reading summary.",
]

_TOPIC_WORDS = {
    "ethics": "how we ought to live", "epistemology": "knowledge",
    "metaphysics": "the nature of reality", "mind": "the mind",
    "politics": "political authority", "existentialism": "human freedom",
    "language": "language and meaning", "religion": "God",
}

_CONCEPT_TOPICS = {
    "determinism": "metaphysics", "hedonism": "ethics", "physicalism": "mind",
    "skepticism": "epistemology", "egoism": "ethics",
    "consequentialism": "ethics", "nominalism": "metaphysics",
    "foundationalism": "epistemology", "fatalism": "metaphysics",
    "idealism": "metaphysics", "natural law": "ethics",
    "the social contract": "politics", "a priori knowledge": "epistemology",
    "an analytic statement": "language", "epiphenomenalism": "mind",
    "the categorical imperative": "ethics", "moral luck": "ethics",
    "cultural relativism": "ethics", "a virtue": "ethics",
    "begging the question": "language", "a straw man": "language",
    "the principle of sufficient reason": "religion", "qualia": "mind",
    "functionalism": "mind", "the veil of ignorance": "politics",
    "existentialism": "existentialism", "a paradox": "language",
    "compatibilism": "metaphysics",
}


def _cap(s):
    return s[0].upper() + s[1:]


def _bare(term):
    if term.startswith("a priori"):
        return term
    for art in ("a ", "an ", "the "):
        if term.startswith(art):
            return term[len(art):]
    return term


def _copula(term):
    return "are" if term == "qualia" else "is"


def _lead(rng):
    return rng.choice(_PHIL_LEADS).format(n=rng.randint(2, 12))


def _v_plain(rng, n, pr, topic, thesis, reason):
    return "{n} held that {t}.".format(n=n, t=thesis)


def _v_because(rng, n, pr, topic, thesis, reason):
    return "{n} held that {t}. {P} reached this conclusion because".format(
        n=n, t=thesis, P=_cap(pr))


def _v_why(rng, n, pr, topic, thesis, reason):
    return "Why did {n} think that {t}? The main reason was that".format(
        n=n, t=thesis)


def _v_objection(rng, n, pr, topic, thesis, reason):
    return "According to {n}, {t}. One obvious objection to this view is that".format(
        n=n, t=thesis)


def _v_qa(rng, n, pr, topic, thesis, reason):
    return "Q: What was {n}'s view about {w}? A:".format(
        n=n, w=_TOPIC_WORDS[topic])


def _v_ifso(rng, n, pr, topic, thesis, reason):
    return "{n} argued that {t}, since {r}. If this is correct, then".format(
        n=n, t=thesis, r=reason)


def _v_long_open(rng, n, pr, topic, thesis, reason):
    return ("{i} {n} offered an influential answer to some of these questions. "
            "{P} held that {t}. {P} supported this claim by pointing out that "
            "{r}. Not everyone was persuaded, however.").format(
                i=rng.choice(_PHIL_INTROS[topic]), n=n, P=_cap(pr), t=thesis, r=reason)


def _v_long_colon(rng, n, pr, topic, thesis, reason):
    return ("{l} {i} Consider the position of {n}, who argued that {t}. "
            "The argument can be laid out in three steps:").format(
                l=_lead(rng), i=rng.choice(_PHIL_INTROS[topic]), n=n, t=thesis)


def _v_summary(rng, n, pr, topic, thesis, reason):
    return ("Exam question: Summarize {n}'s view about {w} in one sentence. "
            "Model answer: {n} believed that").format(
                n=n, w=_TOPIC_WORDS[topic])


def _v_debate(rng, n, pr, topic, thesis, reason):
    return ("In a class discussion, one student defended {n}'s claim that {t}. "
            "Another student disagreed, arguing that").format(n=n, t=thesis)


def _v_reconstruct(rng, n, pr, topic, thesis, reason):
    return ("{n}'s reasoning can be reconstructed as follows. The key premise "
            "is that {r}. From this, {n} concluded that").format(
                n=n, r=reason)


def _v_today(rng, n, pr, topic, thesis, reason):
    return ("Few philosophers today would accept without qualification {n}'s "
            "claim that {t}. Still, the view").format(n=n, t=thesis)


def _v_reader(rng, n, pr, topic, thesis, reason):
    return ("Readers coming to {n} for the first time are often surprised by "
            "the claim that {t}. But the claim becomes less strange once we see "
            "that, in {n}'s view, {r}. In what follows, I").format(
                n=n, t=thesis, r=reason)


def _v_who(rng, n, pr, topic, thesis, reason):
    return "The philosopher who argued that {t} was".format(t=thesis)


def _v_quiz(rng, n, pr, topic, thesis, reason):
    return "Quiz, question {k}. Which philosopher held that {t}? Answer:".format(
        k=rng.randint(2, 20), t=thesis)


_VIEW_FRAMES = [
    _v_who, _v_quiz, _v_plain, _v_because, _v_why, _v_objection, _v_qa, _v_ifso,
    _v_long_open, _v_long_colon, _v_summary, _v_debate, _v_reconstruct,
    _v_today, _v_reader,
]


def _c_is(rng, term, definition, illus):
    return "In philosophy, {t} {v}".format(t=term, v=_copula(term))


def _c_partial(rng, term, definition, illus):
    words = definition.split()
    k = rng.randint(3, min(5, len(words) - 2))
    return "{T} {v} {d}".format(T=_cap(term), v=_copula(term),
                                d=" ".join(words[:k]))


def _c_example(rng, term, definition, illus):
    return "{T} {v} {d}. For example,".format(T=_cap(term), v=_copula(term),
                                              d=definition)


def _c_illus(rng, term, definition, illus):
    return "{T} {v} {d}. {i}".format(T=_cap(term), v=_copula(term),
                                     d=definition, i=illus)


def _c_glossary(rng, term, definition, illus):
    return "Glossary of philosophical terms. {T}:".format(T=_cap(_bare(term)))


def _c_objection(rng, term, definition, illus):
    return ("What {v} {t}? Briefly, {it} {v} {d}. {i} The strongest objection to "
            "this idea is that").format(t=term, d=definition, i=illus,
                                   v=_copula(term),
                                   it="they" if term == "qualia" else "it")


def _c_long(rng, term, definition, illus):
    topic = _CONCEPT_TOPICS[term]
    return ("{l} {intro} One notion that comes up again and again in this area "
            "is {t}, which {v} {d}. {i} To understand why philosophers care "
            "about {it}, we need to").format(
                l=_lead(rng), intro=rng.choice(_PHIL_INTROS[topic]), t=term,
                v=_copula(term), d=definition, i=illus,
                it="them" if term == "qualia" else "it")


def _c_sentence(rng, term, definition, illus):
    return "Use the term '{b}' correctly in a sentence of your own.".format(
        b=_bare(term))


def _c_called(rng, term, definition, illus):
    return "In philosophy, {d} is called".format(d=definition)


_CONCEPT_FRAMES = [
    _c_called, _c_is, _c_partial, _c_example, _c_illus, _c_glossary, _c_objection,
    _c_long, _c_sentence,
]


def _contrast_texts(rng):
    """Long prompts contrasting two philosophers on the same topic."""
    by_topic = {}
    for v in _VIEWS:
        by_topic.setdefault(v[2], []).append(v)
    out = []
    for topic in sorted(by_topic):
        views = by_topic[topic]
        pairs = [(a, b) for i, a in enumerate(views) for b in views[i + 1:]
                 if a[0] != b[0]]
        rng.shuffle(pairs)
        for a, b in pairs[:3]:
            out.append(_pick(len(out), [
                "{intro} On questions of {w}, {n1} and {n2} took quite different approaches. {n1} held that {t1}, whereas {n2} held that",
                "{intro} It is instructive to compare {n1} with {n2}. {n1} held that {t1}. {n2}, on the other hand,",
                "{lead} {intro} We will look at two contrasting positions. The first, defended by {n1}, is that {t1}. The second, defended by {n2}, is that {t2}. Can both of these positions be held at once?",
            ]).format(intro=rng.choice(_PHIL_INTROS[topic]), w=_TOPIC_WORDS[topic],
                      n1=a[0], n2=b[0], t1=a[3], t2=b[3], lead=_lead(rng)))
    return out


def _phil_frame_texts(rng):
    out = []
    nv = len(_VIEW_FRAMES)
    for i, view in enumerate(_VIEWS):
        for j in (0, 1):
            frame = _VIEW_FRAMES[(2 * i + j * 5) % nv]
            out.append(frame(rng, *view))
    nc = len(_CONCEPT_FRAMES)
    for i, (term, definition, illus) in enumerate(_CONCEPTS):
        for j in (0, 1):
            frame = _CONCEPT_FRAMES[(i + j * 3) % nc]
            out.append(frame(rng, term, definition, illus))
    out += _contrast_texts(rng)
    return out


# ---------------------------------------------------------------------------
# Assembly
# ---------------------------------------------------------------------------


def _math_texts():
    rng = random.Random(MATH_SEED)
    texts = list(MATH_SHORT) + list(MATH_MEDIUM) + list(MATH_LONG)
    texts += _math_frame_texts(rng)
    _check_ascii(texts)
    texts = _dedup(texts)
    rng.shuffle(texts)
    return texts


def _philosophy_texts():
    rng = random.Random(PHILOSOPHY_SEED)
    texts = list(PHIL_SHORT) + list(PHIL_MEDIUM) + list(PHIL_LONG)
    texts += _phil_frame_texts(rng)
    _check_ascii(texts)
    texts = _dedup(texts)
    rng.shuffle(texts)
    return texts


def _check_ascii(texts):
    for t in texts:
        t.encode("ascii")


def generate():
    records = []
    for text in _math_texts():
        records.append({"source": "math", "text": text})
    for text in _philosophy_texts():
        records.append({"source": "philosophy", "text": text})
    return records
