const memo = new Map();

function fib(n) {@@M
  if (n < 2) return n;
  if (memo.has(n)) return memo.get(n);
  const value = fib(n - 1) + fib(n - @@C2);
  memo.set(n, value);
  return value;
}
