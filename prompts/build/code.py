"""Code prompts: the "code" source of the mixed corpus and the Python-only "code_restricted" set.

Every snippet below was written for this project. Each snippet carries cut markers
``@@C`` / ``@@M`` / ``@@O``; every marker yields one prompt, namely the snippet text up to
that marker (other markers removed, trailing whitespace stripped). The letter records how
constrained the next token is at that point: C nearly certain, M medium, O wide open.
Output is deterministic (fixed-seed ``random.Random`` shuffle, stdlib only).
"""

from __future__ import annotations

import random
import re

SEED_CODE = 20240611
SEED_RESTRICTED = 20240612

MIN_LINES = 3
MAX_LINES = 40

_MARK = re.compile(r"@@([CMO])")


def _cuts(snippet: str) -> list[tuple[str, str]]:
    """(kind, prefix) for every marker in ``snippet``."""
    snippet = snippet.strip("\n")
    out = []
    for m in _MARK.finditer(snippet):
        prefix = _MARK.sub("", snippet[: m.start()]).rstrip()
        out.append((m.group(1), prefix.lstrip("\n")))
    return out


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def _build(snippets: list[tuple[str, str]], source: str, seed: int, exclude: set[str]) -> list[dict]:
    seen = set(exclude)
    texts = []
    for _lang, snippet in snippets:
        for _kind, text in _cuts(snippet):
            key = _normalised(text)
            if not MIN_LINES <= text.count("\n") + 1 <= MAX_LINES or key in seen:
                continue
            seen.add(key)
            texts.append(text)
    rng = random.Random(seed)
    rng.shuffle(texts)
    return [{"source": source, "text": t} for t in texts]


def generate() -> list[dict]:
    code = _build(CODE_SNIPPETS, "code", SEED_CODE, set())
    restricted = _build(RESTRICTED_SNIPPETS, "code_restricted", SEED_RESTRICTED,
                        {_normalised(r["text"]) for r in code})
    return code + restricted


# ---------------------------------------------------------------------------
# "code" source: mixed languages
# ---------------------------------------------------------------------------

CODE_SNIPPETS: list[tuple[str, str]] = []

# ---------------------------------------------------------------------------
# "code_restricted" source: Python only
# ---------------------------------------------------------------------------

RESTRICTED_SNIPPETS: list[tuple[str, str]] = []

CODE_SNIPPETS += [
    ("py", r'''
import os
import sys

def list_large_files(root, min_bytes=1_000_000):
    """Yield paths under root whose size is at least min_bytes."""
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)@@O
            if os.path.getsize(path) >= min_bytes:
                yield @@Cpath


if __name__ == "__main__@@C":
    for p in list_large_files(sys.argv[1]):
        @@Oprint(p)
'''),
    ("py", r'''
# Count how often each word appears in a text file.
from collections import Counter

def word_counts(path):
    with open(path, encoding="utf-8") as fh:
        words = fh.read().lower().@@Msplit()
    return Counter(words)@@O
'''),
    ("py", r'''
class Stack:
    """A minimal last-in, first-out container."""

    def __init__(self):
        self._items = []

    def push(self, item):
        self._items.append(item)

    def pop(self):
        if not self._items:
            raise IndexError("pop from an empty @@Cstack")
        return self._items.pop()@@M

    def __len__(self):
        return len(self._items)
'''),
    ("py", r'''
def read_config(path):
    settings = {}
    with open(path) as fh:
        for line in fh:
            line = line.strip()@@O
            # skip blank lines and comments
            if not line or line.startswith(@@C"#"):
                continue
            key, _, value = line.partition(@@C"=")
            settings[key.strip()] = value.strip()
    return settings@@O
'''),
    ("py", r'''
import json
import urllib.request

def fetch_json(url, timeout=10):
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))

# Example usage:
@@O
'''),
    ("py", r'''
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
'''),
    ("py", r'''
from dataclasses import dataclass, field

@dataclass
class Order:
    order_id: int
    customer: str
    items: list = field(default_factory=list)
    shipped: bool = False

    def total(self):
        return sum(item.price * item.quantity for item in @@Cself.items)@@O
'''),
    ("py", r'''
import logging

logger = logging.getLogger(@@C__name__)

def retry(func, attempts=3):
    last_error = None@@M
    for attempt in range(@@Mattempts):
        try:
            return func()
        except Exception as exc:  # broad on purpose: we re-raise below
            last_error = exc@@O
            logger.warning("attempt %d failed: %s", attempt + 1, exc)
    raise @@Mlast_error
'''),
    ("py", r'''
def merge_dicts(*dicts):
    result = {}
    for d in dicts:
        result.update(d)
    return result

defaults = {"color": "blue", "size": 10}
overrides = {"size": 12}@@M
print(merge_dicts(defaults, @@Coverrides))@@O
'''),
    ("py", r'''
import argparse

parser = argparse.ArgumentParser(description="Resize every image in a folder.")@@M
parser.add_argument("folder", help="directory containing the images")
parser.add_argument("--width", type=int, default=800)
parser.add_argument("--quiet", action="store_true")
args = parser.@@Cparse_args()
@@O
'''),
    ("py", r'''
def is_palindrome(s):
    cleaned = [c.lower() for c in s if c.@@Misalnum()]
    return cleaned == cleaned[::-@@C1]

assert is_palindrome("Never odd or even")
assert not is_palindrome(@@M"hello")
'''),
    ("py", r'''
# Simple temperature conversion table
for celsius in range(-10, 41, 10):
    fahrenheit = celsius * 9 / 5 + 32
    print(f"{celsius:>4} C = {fahrenheit:6.1f} @@CF")
'''),
    ("py", r'''
async def download_all(session, urls):
    tasks = [asyncio.create_task(fetch(session, u)) for u in urls]
    results = await asyncio.@@Mgather(*tasks, return_exceptions=True)
    ok = [r for r in results if not isinstance(r, @@CException)]
    return @@Mok
'''),
    ("py", r'''
with open("people.csv", newline="") as fh:
    reader = csv.DictReader(fh)
    adults = [row["name"] for row in reader if int(row["age"]) >= @@C18]

print(len(adults), "adults @@Mfound")
'''),
]

CODE_SNIPPETS += [
    ("js", r'''
// Debounce: run fn only after the caller has been quiet for `wait` ms.
function debounce(fn, wait) {
  let timer = null;@@M
  return function (...args) {
    clearTimeout(timer);
    timer = setTimeout(() => fn.apply(this, @@Cargs), wait);
  };
}@@O
'''),
    ("js", r'''
const button = document.querySelector("#submit");
const form = document.getElementById(@@M"signup-form");

button.addEventListener("@@Cclick", (event) => {
  event.preventDefault();
  const data = new FormData(form);
  @@O
});
'''),
    ("js", r'''
async function loadUsers() {
  const response = await fetch("/api/users");@@M
  if (!response.ok) {
    throw new Error(`Request failed with status ${response.status}`);
  }
  const users = await response.@@Cjson();@@M
  return users.filter((u) => u.@@Mactive);
}
'''),
    ("js", r'''
const prices = [12.5, 8, 30, 4.25];
const total = prices.reduce((sum, p) => sum + p, @@C0);
const expensive = prices.filter((p) => p > @@M10);
console.log(`Total: ${total.toFixed(@@C2)}`);
'''),
    ("js", r'''
class EventEmitter {
  constructor() {
    this.listeners = {};
  }

  on(name, handler) {
    (this.listeners[name] ||= []).push(handler);
    return this;
  }

  emit(name, ...args) {@@O
    for (const handler of this.listeners[name] || @@C[]) {
      handler(...args);
    }
  }
}@@O
'''),
    ("js", r'''
const express = require("express");
const app = express();
app.use(express.@@Cjson());@@O

app.get("/health", (req, res) => {
  res.json({ status: "@@Mok" });
});

app.listen(3000, () => console.log("Listening on port @@C3000"));
'''),
    ("js", r'''
// Shuffle an array in place using the Fisher-Yates algorithm.
function shuffle(arr) {
  for (let i = arr.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + @@C1));
    [arr[i], arr[j]] = [arr[j], arr[i]];
  }
  return @@Carr;
}@@O
'''),
    ("js", r'''
export default function Counter({ start = 0 }) {
  const [count, setCount] = useState(start);

  return (
    <div className="counter">@@O
      <p>You clicked {count} @@Mtimes</p>
      <button onClick={() => setCount(count + @@C1)}>Click me</button>
    </div>
  );
}
'''),
    ("js", r'''
const fs = require("fs/promises");

async function countLines(path) {
  const text = await fs.readFile(path, "utf8");
  return text.split("\n").length;
}

countLines("notes.txt")
  .then((n) => console.log(n, "lines"))
  .catch((err) => console.@@Cerror(err));
'''),
    ("js", r'''
for (let i = 0; i < @@Mitems.length; i++) {
  if (items[i].id === targetId) {
    @@Oreturn i;
  }
}
return -@@C1;
'''),
    ("ts", r'''
interface User {
  id: number;
  name: string;
  email?: string;
}

function greet(user: User): string {
  return `Hello, ${user.@@Cname}!`;
}
@@O
'''),
    ("js", r'''
const memo = new Map();

function fib(n) {@@M
  if (n < 2) return n;
  if (memo.has(n)) return memo.get(n);
  const value = fib(n - 1) + fib(n - @@C2);
  memo.set(n, value);
  return value;
}
'''),
    ("js", r'''
// Group records by a key function.
const groupBy = (list, keyFn) =>
  list.reduce((acc, item) => {
    const key = keyFn(item);
    (acc[key] = acc[key] || []).push(item);
    return @@Cacc;
  }, @@C{});

const byCity = groupBy(people, (p) => p.@@Mcity);@@O
'''),
    ("js", r'''
localStorage.setItem("theme", "dark");
const theme = localStorage.getItem(@@C"theme");
document.body.classList.@@Mtoggle("dark", theme === "dark");
'''),
]

CODE_SNIPPETS += [
    ("c", r'''
#include <stdio@@C.h>
#include <stdlib.h>

int main(int argc, char *argv[])
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[@@C0]);
        return 1;
    }
    @@O
'''),
    ("c", r'''
/* Reverse a string in place. */
void reverse(char *s)
{
    size_t n = strlen(s);@@O
    for (size_t i = 0; i < n / @@C2; i++) {
        char tmp = s[i];@@M
        s[i] = s[n - 1 - i];
        s[n - 1 - i] = @@Ctmp;
    }
}
'''),
    ("c", r'''
struct node {
    int value;
    struct node *next;
};

struct node *push_front(struct node *head, int value)
{
    struct node *n = malloc(sizeof *n);
    if (n == @@CNULL)
        return head;
    n->value = value;@@M
    n->next = @@Chead;
    return n;
}
'''),
    ("c", r'''
int sum_array(const int *a, int len)
{
    int total = 0;
    for (int i = 0; i < len; i++)
        total += @@Ca[i];
    return total;
}
'''),
    ("c", r'''
#define MAX_LINE 256

int count_lines(FILE *fp)
{
    char buf[MAX_LINE];
    int lines = 0;@@M
    while (fgets(buf, sizeof buf, @@Cfp) != NULL)
        lines++;
    @@Mreturn lines;
}
'''),
    ("c", r'''
unsigned int popcount(unsigned int x)
{
    unsigned int count = 0;
    while (x) {
        x &= x - @@C1;   /* clear the lowest set bit */
        count@@C++;
    }
    return count;
}
'''),
    ("c", r'''
typedef enum { RED, GREEN, BLUE } color_t;

const char *color_name(color_t c)
{
    switch (c) {
    case RED:   return "red";
    case GREEN: return "green";
    case BLUE:  return "blue";
    default:    return "@@Munknown";
    }
}
'''),
    ("c", r'''
pid_t pid = fork();
if (pid < 0) {
    perror("@@Mfork");
    exit(EXIT_@@CFAILURE);
} else if (pid == 0) {
    /* child process */
    @@Oexeclp("ls", "ls", "-l", (char *)NULL);
}
'''),
    ("java", r'''
public class Main {
    public static void main(String[] @@Cargs) {
        System.out.println("Hello, @@CWorld!");
    }
}
'''),
    ("java", r'''
import java.util.ArrayList;
import java.util.List;

public class Library {
    private final List<Book> books = new ArrayList<>();

    public void addBook(Book book) {
        books.add(book);
    }

    public Book findByTitle(String title) {
        for (Book b : books) {
            if (b.getTitle().equalsIgnoreCase(@@Ctitle)) {
                return b;
            }
        }
        return @@Cnull;
    }
}
'''),
    ("java", r'''
try (BufferedReader reader = new BufferedReader(new FileReader(path))) {
    String line;@@M
    while ((line = reader.readLine()) != @@Cnull) {
        @@Oprocess(line);
    }
} catch (IOException e) {
    e.@@CprintStackTrace();
}
'''),
    ("java", r'''
@Override
public boolean equals(Object o) {
    if (this == o) return true;
    if (!(o instanceof Point)) return false;
    Point other = (Point) o;
    return x == other.x && y == other.@@Cy;
}

@Override
public int hashCode() {
    return Objects.hash(@@Mx, y);
}
'''),
    ("java", r'''
List<String> names = people.stream()
        .filter(p -> p.getAge() >= @@M18)
        .map(Person::@@MgetName)
        .sorted()
        .collect(Collectors.@@CtoList());
'''),
    ("java", r'''
public interface Shape {
    double area();
}

public class Circle implements Shape {
    private final double radius;@@M

    public Circle(double radius) {
        this.radius = radius;
    }

    @Override
    public double area() {
        return Math.PI * radius * @@Cradius;
    }
}
'''),
    ("java", r'''
// Thread-safe counter
public class Counter {
    private int value = 0;

    public synchronized void increment() {
        @@Mvalue++;
    }

    public synchronized int get() {
        return @@Cvalue;
    }
}@@O
'''),
    ("java", r'''
Map<String, Integer> scores = new HashMap<>();
scores.put("alice", 91);
scores.put("bob", @@M78);
for (Map.Entry<String, Integer> e : scores.entrySet()) {
    System.out.println(e.getKey() + ": " + e.@@CgetValue());
}
'''),
]

CODE_SNIPPETS += [
    ("go", r'''
package main

import (
	"fmt"
	"os"
)

func main() {@@O
	if len(os.Args) < @@C2 {
		fmt.Println("usage: greet NAME")
		os.Exit(1)
	}
	fmt.Printf("Hello, %s!\n", os.Args[1])
}
'''),
    ("go", r'''
// Max returns the larger of a and b.
func Max(a, b int) int {
	if a > b {
		return @@Ca
	}
	return b
}@@O
'''),
    ("go", r'''
type Stack[T any] struct {
	items []T
}

func (s *Stack[T]) Push(v T) {
	s.items = append(s.items, v)
}

func (s *Stack[T]) Pop() (T, bool) {
	var zero T@@M
	if len(s.items) == 0 {
		return zero, false
	}
	v := s.items[len(s.items)-@@C1]
	s.items = s.items[:len(s.items)-1]
	return v, @@Ctrue
}
'''),
    ("go", r'''
func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	var lines []string@@M
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		lines = append(lines, scanner.@@CText())
	}
	return lines, scanner.@@CErr()
}
'''),
    ("go", r'''
var wg sync.WaitGroup
results := make(chan int, len(jobs))

for _, job := range jobs {
	wg.Add(1)
	go func(j Job) {
		defer wg.Done()
		results <- j.@@MRun()
	}(job)
}

wg.@@CWait()
close(results)
'''),
    ("go", r'''
http.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("@@Mname")
	if name == "" {
		name = "@@Mworld"
	}
	fmt.Fprintf(w, "Hello, %s", @@Cname)
})
log.Fatal(http.ListenAndServe(":8080", nil))
'''),
    ("go", r'''
type Rectangle struct {
	Width, Height float64
}

func (r Rectangle) Area() float64 {
	return r.Width * r.@@CHeight
}

func (r Rectangle) Perimeter() float64 {
	return 2 * (r.Width + @@Cr.Height)
}
@@O
'''),
    ("go", r'''
select {
case msg := <-messages:
	fmt.Println("received", msg)
case <-time.After(2 * time.@@CSecond):
	fmt.Println("@@Mtimeout")
}
'''),
    ("rust", r'''
fn main() {
    let numbers = vec![3, 1, 4, 1, 5, 9, 2, 6];
    let sum: i32 = numbers.iter().@@Csum();
    let max = numbers.iter().max().@@Munwrap();
    println!("sum = {}, max = {}", sum, @@Cmax);
}
'''),
    ("rust", r'''
#[derive(Debug, Clone, @@MPartialEq)]
struct Point {
    x: f64,
    y: f64,
}

impl Point {
    fn distance(&self, other: &Point) -> f64 {
        ((self.x - other.x).powi(2) + (self.y - other.y).powi(@@C2)).sqrt()
    }
}
'''),
    ("rust", r'''
use std::collections::HashMap;

fn word_freq(text: &str) -> HashMap<&str, usize> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word).or_insert(@@C0) += 1;
    }
    counts
}
'''),
    ("rust", r'''
fn parse_port(s: &str) -> Result<u16, String> {
    s.trim()
        .parse::<u16>()
        .map_err(|e| format!("invalid port {:?}: {}", s, e))
}

fn main() {@@O
    match parse_port("8080") {
        Ok(port) => println!("port {}", @@Cport),
        Err(msg) => eprintln!("{}", msg),
    }
}
'''),
    ("rust", r'''
enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

fn area(shape: &Shape) -> f64 {
    match shape {
        Shape::Circle { radius } => std::f64::consts::PI * radius * @@Cradius,
        Shape::Square { side } => @@Mside * side,
    }
}
'''),
    ("rust", r'''
use std::fs;
use std::io;

fn read_numbers(path: &str) -> io::Result<Vec<i64>> {
    let text = fs::read_to_string(@@Cpath)?;
    let nums = text
        .lines()
        .filter_map(|line| line.trim().parse().@@Mok())
        .collect();
    Ok(nums)
}
'''),
    ("rust", r'''
trait Animal {
    fn name(&self) -> String;
    fn speak(&self) -> String {
        format!("{} makes a sound", self.name())
    }
}

struct Dog;

impl Animal for @@CDog {
    @@O
'''),
    ("rust", r'''
let handles: Vec<_> = (0..4)
    .map(|i| {
        thread::spawn(move || {
            println!("worker {} starting", @@Ci);
            i * @@Mi
        })
    })
    .collect();

for h in handles {
    let result = h.join().@@Munwrap();@@O
}
'''),
]

CODE_SNIPPETS += [
    ("sql", r'''
-- Customers who placed more than five orders last year
SELECT c.id, c.name, COUNT(o.id) AS order_count
FROM customers AS c
JOIN orders AS o ON o.customer_id = c.@@Cid
WHERE o.created_at >= '2023-01-01'
  AND o.created_at < '@@M2024-01-01'
GROUP BY c.id, c.name
HAVING COUNT(o.id) > @@C5
ORDER BY order_count DESC;
'''),
    ("sql", r'''
CREATE TABLE employees (
    id          INTEGER PRIMARY @@CKEY,
    first_name  VARCHAR(50) NOT NULL,
    last_name   VARCHAR(50) NOT NULL,
    department  VARCHAR(@@M50),
    salary      NUMERIC(10, 2) CHECK (salary >= @@C0),
    hired_on    DATE DEFAULT CURRENT_DATE
);
'''),
    ("sql", r'''
UPDATE products
SET price = price * 1.10
WHERE category = 'books'
  AND @@Mstock > 0;@@O

DELETE FROM sessions
WHERE last_seen < NOW() - INTERVAL '30 @@Cdays';
'''),
    ("sql", r'''
WITH monthly AS (
    SELECT date_trunc('month', paid_at) AS month,
           SUM(amount) AS revenue
    FROM payments@@M
    GROUP BY 1
)
SELECT month,
       revenue,
       revenue - LAG(revenue) OVER (ORDER BY @@Cmonth) AS change
FROM @@Cmonthly
ORDER BY month;
'''),
    ("sql", r'''
INSERT INTO authors (name, born)
VALUES ('Ada Example', 1961),
       ('Ben Sample', @@M1974);@@O

SELECT name FROM authors WHERE born BETWEEN 1950 AND @@M1970;
'''),
    ("sql", r'''
-- Find duplicate email addresses
SELECT email, COUNT(*)
FROM users
GROUP BY @@Cemail
HAVING COUNT(*) > 1;
'''),
    ("sql", r'''
CREATE INDEX idx_orders_customer
    ON orders (customer_id, created_at);@@O

EXPLAIN ANALYZE
SELECT *
FROM orders
WHERE customer_id = @@M42
ORDER BY created_at @@MDESC
LIMIT @@M10;
'''),
    ("sql", r'''
SELECT d.name AS department,
       AVG(e.salary) AS avg_salary
FROM departments d
LEFT JOIN employees e ON e.department_id = d.id
GROUP BY d.@@Cname;
@@O
'''),
    ("sh", r'''
#!/usr/bin/env bash
set -euo @@Cpipefail

# Back up every .conf file into a dated archive.@@O
backup_dir="$HOME/backups/$(date +%Y-%m-%d)"
mkdir -p "$backup_dir"
for f in /etc/*.conf; do
    cp "$f" "$backup_dir/"
done
tar -czf "$backup_dir.tar.gz" -C "$HOME/backups" "$(basename "$backup_@@Cdir")"
@@O
'''),
    ("sh", r'''
#!/bin/sh
# Print the ten largest files under the current directory.
find . -type f -printf '%s %p\n' \
    | sort -@@Cnr \
    | head -n @@C10
'''),
    ("sh", r'''
if [ -z "$1" ]; then
    echo "usage: $0 NAME" >&@@C2
    exit 1
fi

name="$1"
echo "Hello, @@C$name"
'''),
    ("sh", r'''
# Count requests per status code in an nginx log
awk '{print $9}' access.log | sort | uniq -c | sort -@@Mrn@@O

# Show the last lines of the error log
tail -n 50 /var/log/nginx/@@Cerror.log
'''),
    ("sh", r'''
for file in *.jpg; do
    [ -e "$file" ] || continue
    convert "$file" -resize 50% "small_@@C$file"
    echo "resized $file"
done
'''),
    ("sh", r'''
git checkout -b feature/login
git add src/auth.py@@M
git commit -m "Add login @@Mform"
git push -u origin @@Cfeature/login
'''),
    ("sh", r'''
#!/usr/bin/env bash
# Wait until a service answers on its health endpoint.
url="http://localhost:8000/health"
for i in $(seq 1 30); do
    if curl -fsS "$url" > /dev/@@Cnull; then
        echo "service is up"
        exit @@C0
    fi
    sleep @@M1
done
echo "service did not start" >&2
@@Mexit 1
'''),
    ("sh", r'''
python3 -m venv .venv
source .venv/bin/@@Cactivate
pip install -r @@Crequirements.txt
@@O
'''),
    ("sh", r'''
case "$1" in
    start)
        echo "Starting..."
        ;;
    stop)
        echo "@@MStopping..."
        ;;
    *)
        echo "Usage: $0 {start|@@Cstop}"
        exit 1
        ;;
esac
'''),
]

CODE_SNIPPETS += [
    ("html", r'''
<!DOCTYPE html>
<html lang="@@Cen">
<head>
  <meta charset="UTF-8">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <title>My Recipes</@@Ctitle>
  <link rel="stylesheet" href="@@Mstyle.css">
</head>
<body>
  @@O
'''),
    ("html", r'''
<form action="/subscribe" method="@@Cpost">
  <label for="email">Email address</label>
  <input type="email" id="email" name="email" required>
  <button type="@@Csubmit">Subscribe</button>
</form>
'''),
    ("html", r'''
<nav class="main-nav">
  <ul>
    <li><a href="/">Home</a></li>
    <li><a href="/about">@@MAbout</a></li>
    <li><a href="/contact">Contact</@@Ca></li>
  </ul>
</nav>
'''),
    ("html", r'''
<table class="scores">
  <thead>
    <tr>
      <th>Player</th>
      <th>@@MScore</th>
    </tr>
  </thead>
  <tbody>
    <tr>
      <td>Mira</td>
      <td>@@M42</td>
    </@@Ctr>
    @@O
'''),
    ("css", r'''
/* Center the card on the page */
.card {
  max-width: 480px;
  margin: 0 @@Cauto;
  padding: 1.5rem;@@M
  border-radius: @@M8px;
  box-shadow: 0 2px 8px rgba(0, 0, 0, @@M0.15);
}
'''),
    ("css", r'''
.grid {
  display: @@Mgrid;
  grid-template-columns: repeat(auto-fill, minmax(200px, @@C1fr));
  gap: 1rem;
}@@O

@media (max-width: 600px) {
  .grid {
    grid-template-columns: @@M1fr;
  }
}
'''),
    ("css", r'''
:root {
  --primary: #2a6fdb;
  --text: #222;
}

body {
  font-family: system-ui, sans-serif;
  color: var(--text);
  line-height: @@M1.6;
}

a:hover {
  color: var(@@C--primary);
  text-decoration: @@Munderline;
}
'''),
    ("css", r'''
.button {
  display: inline-block;
  padding: 0.5em 1em;
  transition: background-color 0.2s @@Mease-in-out;
}

.button:hover,
.button:@@Cfocus {
  background-color: #@@M1e4fae;
}
@@O
'''),
    ("html", r'''
<div id="app">
  <h1>Todo list</h1>
  <ul id="todos"></ul>
</div>
<script src="app.js" @@Mdefer></script>
'''),
    ("css", r'''
@keyframes spin {
  from { transform: rotate(0deg); }
  to   { transform: rotate(360deg); }
}

.spinner {
  width: 40px;
  height: 40px;
  animation: spin 1s linear @@Cinfinite;
}
'''),
]

# Longer snippets: most cuts fall late, after a complete line or statement.
CODE_SNIPPETS += [
    ("py", r'''
import sqlite3
from contextlib import closing

SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT,
    created TEXT DEFAULT CURRENT_TIMESTAMP
)
"""

class NoteStore:
    def __init__(self, path=":memory:"):
        self.conn = sqlite3.connect(path)
        self.conn.execute(SCHEMA)@@O

    def add(self, title, body=""):
        with self.conn:
            cur = self.conn.execute(
                "INSERT INTO notes (title, body) VALUES (?, ?)", (title, @@Cbody)
            )
        return cur.lastrowid

    def search(self, word):@@O
        pattern = f"%{word}%"
        with closing(self.conn.cursor()) as cur:
            cur.execute("SELECT id, title FROM notes WHERE body LIKE ?", (@@Cpattern,))
            return cur.fetchall()
@@O
    def delete(self, note_id):
        @@O
'''),
    ("py", r'''
import time
from functools import wraps

def timed(label=None):
    """Decorator that prints how long the wrapped function took."""
    def decorator(func):
        name = label or func.__name__

        @wraps(@@Cfunc)
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return func(*args, **@@Ckwargs)
            finally:
                elapsed = time.perf_counter() - start
                print(f"{name} took {elapsed:.3f}s")
        return @@Cwrapper
    return decorator


@timed("slow sum")
def slow_sum(n):
    total = 0
    for i in range(n):
        total += i
        @@O
    return total
@@O
'''),
    ("py", r'''
import re
from pathlib import Path

TODO = re.compile(r"#\s*TODO[:\s](.*)")

def collect_todos(root):
    """Return (file, line number, text) for every TODO comment under root."""
    found = []@@M
    for path in sorted(Path(root).rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), start=1):
            match = TODO.search(line)
            if match:
                found.append((str(path), lineno, match.group(1).strip()))
    return found


def main():@@O
    todos = collect_todos(".")
    if not todos:
        print("No TODOs found.")@@M
        return
    width = max(len(f) for f, _, _ in todos)
    for f, n, text in todos:
        @@Mprint(f"{f:<{width}}  {n:>5}  {text}")
    print(f"{len(todos)} TODO comments in total.")@@O
'''),
    ("js", r'''
// Minimal client-side router for a single-page app.
const routes = {
  "/": renderHome,
  "/about": renderAbout,
  "/posts": renderPosts,
};

function navigate(path) {
  window.history.pushState({}, "", path);
  render(path);
}

function render(path) {
  const view = routes[path] || renderNotFound;
  const root = document.getElementById("root");
  root.innerHTML = "";@@O
  root.appendChild(view());
}

window.addEventListener("popstate", () => render(window.location.@@Cpathname));

document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-link]");
  if (!link) return;
  @@Mevent.preventDefault();
  navigate(link.getAttribute("href"));
});
@@O
'''),
    ("js", r'''
class LRUCache {
  constructor(capacity) {
    this.capacity = capacity;
    this.map = new Map();
  }@@O

  get(key) {
    if (!this.map.has(key)) return undefined;
    const value = this.map.get(key);
    // move the key to the most recent position@@O
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  set(key, value) {
    if (this.map.has(key)) {
      this.map.delete(key);
    } else if (this.map.size >= this.capacity) {
      const oldest = this.map.keys().next().@@Cvalue;
      @@Mthis.map.delete(oldest);
    }
    this.map.set(key, @@Cvalue);
  }
}

const cache = new LRUCache(2);
@@O
'''),
    ("c", r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Growable array of integers. */
typedef struct {
    int *data;
    size_t len;
    size_t cap;
} vec_t;

int vec_push(vec_t *v, int x)
{
    if (v->len == v->cap) {
        size_t new_cap = v->cap ? v->cap * 2 : 8;
        int *p = realloc(v->data, new_cap * sizeof *p);
        if (!p)
            return -1;
        v->data = p;
        v->cap = @@Cnew_cap;
    }
    v->data[v->len++] = @@Cx;
    return 0;
}

void vec_free(vec_t *v)
{
    @@Mfree(v->data);
    v->data = NULL;
    v->len = v->cap = @@C0;
}
@@O
'''),
    ("c", r'''
#include <stdio.h>

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a;
    int y = *(const int *)b;@@O
    return (x > y) - (x < y);
}

int main(void)
{
    int values[] = { 42, 7, 19, 3, 88, 23, 61 };
    size_t n = sizeof values / sizeof values[0];@@O

    qsort(values, n, sizeof values[0], @@Ccmp_int);

    printf("sorted:");@@M
    for (size_t i = 0; i < n; i++)
        printf(" %d", values[i]);
    @@Mprintf("\n");

    /* median of an odd-length array */
    printf("median: %d\n", values[n / @@C2]);
    @@O
'''),
    ("java", r'''
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

public class InventoryService {
    private final Map<String, Integer> stock = new HashMap<>();

    public void receive(String sku, int quantity) {
        if (quantity <= 0) {
            throw new IllegalArgumentException("quantity must be positive");
        }
        stock.merge(sku, quantity, Integer::@@Csum);
    }

    public boolean ship(String sku, int quantity) {@@O
        int available = stock.getOrDefault(sku, 0);
        if (available < quantity) {
            return @@Cfalse;
        }
        stock.put(sku, available - quantity);@@M
        @@Oreturn true;
    }

    public Optional<Integer> level(String sku) {
        return Optional.ofNullable(stock.get(@@Csku));
    }
@@O
'''),
    ("go", r'''
package store

import (
	"errors"
	"sync"
)

var ErrNotFound = errors.New("key not found")

// Store is a map guarded by a read-write mutex.
type Store struct {
	mu   sync.RWMutex
	data map[string]string
}

func New() *Store {
	return &Store{data: make(map[string]string)}
}

func (s *Store) Get(key string) (string, error) {
	s.mu.RLock()
	defer s.mu.@@CRUnlock()
	v, ok := s.data[key]
	if !ok {
		return "", @@CErrNotFound
	}@@M
	return v, nil
}

func (s *Store) Set(key, value string) {
	@@Ms.mu.Lock()
	defer s.mu.Unlock()
	s.data[key] = @@Cvalue
}
@@O
'''),
    ("rust", r'''
use std::fmt;

#[derive(Debug)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Matrix { rows, cols, data: vec![0.0; rows * cols] }
    }@@O

    pub fn get(&self, r: usize, c: usize) -> f64 {
        self.data[r * self.cols + @@Cc]
    }

    pub fn set(&mut self, r: usize, c: usize, v: f64) {
        self.data[r * self.cols + c] = @@Cv;
    }
}

impl fmt::Display for Matrix {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for r in 0..self.rows {
            for c in 0..self.cols {
                write!(f, "{:8.3}", self.get(r, @@Cc))?;
            }
            @@Mwriteln!(f)?;
        }
        @@COk(())
    }
}
'''),
    ("sql", r'''
-- Library schema: books, members and loans
CREATE TABLE books (
    id      SERIAL PRIMARY KEY,
    title   TEXT NOT NULL,
    author  TEXT NOT NULL,
    year    INTEGER
);

CREATE TABLE members (
    id      SERIAL PRIMARY KEY,
    name    TEXT NOT NULL,
    joined  DATE NOT NULL DEFAULT CURRENT_DATE
);

CREATE TABLE loans (
    book_id    INTEGER REFERENCES books(id),
    member_id  INTEGER REFERENCES @@Cmembers(id),
    borrowed   DATE NOT NULL,
    returned   DATE,
    PRIMARY KEY (book_id, @@Mmember_id, borrowed)
);

-- Books that are currently out on loan@@O
SELECT b.title, m.name, l.borrowed
FROM loans l
JOIN books b ON b.id = l.book_id
JOIN members m ON m.id = l.@@Cmember_id
WHERE l.returned IS @@CNULL
@@O
'''),
    ("sh", r'''
#!/usr/bin/env bash
# deploy.sh - build the site and copy it to the web server.
set -euo pipefail

SERVER="deploy@example.org"
TARGET="/var/www/site"
BUILD_DIR="dist"

log() {
    printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"
}

log "cleaning old build"@@M
rm -rf "$BUILD_DIR"

log "building"
npm ci@@M
npm run build

if [ ! -d "$BUILD_DIR" ]; then
    log "build failed: $BUILD_DIR is missing"@@M
    exit 1
fi

log "uploading to $SERVER"
rsync -az --delete "$BUILD_DIR/" "$SERVER:@@C$TARGET/"
@@Mlog "done"
@@O
'''),
    ("html", r'''
<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Weekend Hiking Club</title>
  <style>
    body { font-family: Georgia, serif; margin: 2rem; }
    .event { border-left: 4px solid #3a7; padding-left: 1rem; }
  </style>
</head>
<body>
  <header>
    <h1>Weekend Hiking Club</h1>
    <p>Easy walks, muddy boots, good company.</p>
  </header>
  <main>@@O
    <section class="event">
      <h2>Ridge Loop, Saturday 9am</h2>
      <p>Meet at the north car park.@@O Bring water and a snack.</p>
    </section>
    <section class="event">
      <h2>@@O
'''),
]

# More longer snippets, cut mostly at open or half-open points.
CODE_SNIPPETS += [
    ("py", r'''
import csv
import statistics
from collections import defaultdict

def summarize_sales(path):
    """Read a CSV of sales and report revenue per region.

    Expected columns: date, region, product, units, unit_price.
    """
    revenue = defaultdict(float)
    units_sold = defaultdict(int)
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            amount = int(row["units"]) * float(row["unit_price"])
            revenue[row["region"]] += amount
            units_sold[row["region"]] += int(row["units"])@@O

    report = []
    for region in sorted(revenue):
        report.append({
            "region": region,
            "revenue": round(revenue[region], 2),
            "units": @@Munits_sold[region],
        })@@O
    median = statistics.median(r["revenue"] for r in report)@@M
    print(f"Median regional revenue: {median:.2f}")
    # Flag the regions that fell below half of the median@@O
'''),
    ("py", r'''
class BankAccount:
    """A toy bank account that refuses to go below zero."""

    interest_rate = 0.02@@O

    def __init__(self, owner, balance=0.0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("deposit must be positive")
        self.balance += amount
        self.history.append(("deposit", amount))@@O

    def withdraw(self, amount):
        if amount > self.balance:
            raise ValueError(@@M"insufficient funds")
        self.balance -= amount
        self.history.append((@@M"withdraw", amount))

    def add_interest(self):
        @@O
'''),
    ("py", r'''
import threading
import queue

def worker(tasks, results):
    while True:@@M
        item = tasks.get()
        if item is None:
            tasks.task_done()
            break
        results.put(item * item)
        tasks.task_done()


tasks = queue.Queue()
results = queue.Queue()
threads = [threading.Thread(target=worker, args=(tasks, results)) for _ in range(4)]
for t in threads:
    t.start()@@O

for n in range(100):
    tasks.put(n)
for _ in threads:
    tasks.put(@@MNone)
tasks.join()@@O
'''),
    ("js", r'''
/**
 * Format a number of seconds as a human-readable duration,
 * for example 3725 -> "1h 2m 5s".
 */
function formatDuration(totalSeconds) {
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;

  const parts = [];@@M
  if (hours) parts.push(`${hours}h`);
  if (minutes) parts.push(`${minutes}m`);
  if (seconds || parts.length === 0) parts.push(`${seconds}s`);
  return parts.join(@@M" ");
}

// Tests
console.assert(formatDuration(0) === "0s");
console.assert(formatDuration(61) === @@M"1m 1s");
console.assert(formatDuration(3725) === "1h 2m 5s");@@O
'''),
    ("js", r'''
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

const SRC = path.resolve("content");
const OUT = path.resolve("public");

async function buildPage(name) {
  const markdown = await readFile(path.join(SRC, `${name}.md`), "utf8");
  const title = markdown.split("\n")[0].replace(/^#\s*/, "");
  const body = renderMarkdown(markdown);
  const html = `<!doctype html>
<title>${title}</title>
<article>${body}</article>`;
  await writeFile(path.join(OUT, `${name}.html`), @@Mhtml);
  return title;
}

const pages = ["index", "about", "changelog"];
const titles = await Promise.all(pages.map(@@MbuildPage));
console.log(`Built ${titles.length} pages:`);@@O
'''),
    ("js", r'''
const canvas = document.getElementById("chart");
const ctx = canvas.getContext("2d");
const values = [4, 9, 2, 7, 5, 11, 3];
const barWidth = canvas.width / values.length;
const maxValue = Math.max(...values);@@O

ctx.clearRect(0, 0, canvas.width, canvas.height);
values.forEach((v, i) => {
  const h = (v / maxValue) * (canvas.height - 20);
  ctx.fillStyle = i % 2 ? "#4a90d9" : "#7bb3ea";
  ctx.fillRect(i * barWidth + 4, canvas.height - h, barWidth - 8, @@Mh);
  ctx.fillStyle = "#222";
  ctx.fillText(String(v), i * barWidth + barWidth / 2 - 4, canvas.height - h - @@M4);
});@@O
'''),
    ("c", r'''
#include <stdio.h>
#include <ctype.h>

/* Count characters, words and lines on standard input, like a tiny wc. */
int main(void)
{
    long chars = 0, words = 0, lines = 0;
    int in_word = 0;
    int c;@@M

    while ((c = getchar()) != EOF) {
        chars++;
        if (c == '\n')
            lines++;
        if (isspace(c)) {
            in_word = 0;
        } else if (!in_word) {
            in_word = 1;
            @@Mwords++;
        }
    }@@O

    printf("%ld %ld %ld\n", lines, words, @@Mchars);
    return 0;
}
'''),
    ("c", r'''
/* Binary search over a sorted array; returns the index or -1. */
int binary_search(const int *a, int n, int key)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] == key)
            return mid;
        if (a[mid] < key)
            lo = mid + @@C1;
        else
            hi = @@Mmid - 1;
    }
    return -1;
}

int main(void)
{
    int primes[] = { 2, 3, 5, 7, 11, 13, 17, 19, 23, 29 };
    @@O
'''),
    ("java", r'''
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;

/** A library loan with a due date and a daily late fee. */
public class Loan {
    private static final double DAILY_FEE = 0.25;

    private final String title;
    private final LocalDate dueDate;
    private LocalDate returnedOn;@@O

    public Loan(String title, LocalDate dueDate) {
        this.title = title;
        this.dueDate = dueDate;
    }

    public void markReturned(LocalDate date) {
        this.returnedOn = date;
    }

    public double lateFee() {
        if (returnedOn == null || !returnedOn.isAfter(dueDate)) {
            return 0.0;
        }
        long daysLate = ChronoUnit.DAYS.between(dueDate, @@MreturnedOn);
        return daysLate * @@MDAILY_FEE;
    }@@O
'''),
    ("java", r'''
public class Matrix {
    public static int[][] multiply(int[][] a, int[][] b) {
        int n = a.length, m = b[0].length, k = b.length;
        int[][] c = new int[n][m];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) {
                int sum = 0;
                for (int x = 0; x < k; x++) {
                    sum += a[i][x] * @@Cb[x][j];
                }
                c[i][j] = @@Msum;
            }
        }
        return c;
    }

    public static void main(String[] args) {
        int[][] a = { {1, 2}, {3, 4} };
        int[][] b = { {5, 6}, {7, 8} };
        @@O
'''),
    ("go", r'''
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

type Config struct {
	Name    string   `json:"name"`
	Port    int      `json:"port"`
	Debug   bool     `json:"debug"`
	Origins []string `json:"origins"`
}

func loadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	var cfg Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf(@@M"parsing config: %w", err)
	}
	if cfg.Port == 0 {
		cfg.Port = @@M8080
	}
	return &cfg, nil
}@@O

func main() {
	cfg, err := loadConfig("config.json")
	@@C
'''),
    ("go", r'''
// Package wordcount counts words read from an io.Reader.
package wordcount

import (
	"bufio"
	"io"
	"sort"
	"strings"
)

type Pair struct {@@M
	Word  string
	Count int
}

func Top(r io.Reader, n int) []Pair {
	counts := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Split(bufio.ScanWords)
	for sc.Scan() {
		counts[strings.ToLower(sc.Text())]++
	}@@O
	pairs := make([]Pair, 0, len(counts))
	for w, c := range counts {
		pairs = append(pairs, Pair{w, @@Cc})
	}
	sort.Slice(pairs, func(i, j int) bool {
		return pairs[i].Count > @@Mpairs[j].Count
	})@@O
'''),
    ("rust", r'''
use std::io::{self, BufRead};

/// Reads lines from stdin and prints them with line numbers,
/// skipping lines that are empty after trimming.
fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut shown = 0;
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line?;@@M
        if line.trim().is_empty() {
            continue;
        }
        shown += 1;
        println!("{:>4}: {}", i + 1, @@Mline);
    }@@O
    eprintln!("{} non-empty lines", @@Mshown);
    Ok(())
}
'''),
    ("rust", r'''
#[derive(Debug, PartialEq)]
enum Token {
    Number(f64),
    Plus,
    Minus,
    Star,
    Slash,
    LParen,
    RParen,
}

fn tokenize(src: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' => {}
            '+' => tokens.push(Token::Plus),
            '-' => tokens.push(Token::@@CMinus),
            '*' => tokens.push(Token::Star),
            '(' => tokens.push(Token::@@CLParen),
            @@M
'''),
    ("sql", r'''
-- Daily active users over the last 30 days, with a 7-day rolling average.
WITH daily AS (
    SELECT CAST(event_time AS DATE) AS day,
           COUNT(DISTINCT user_id) AS active_users
    FROM events
    WHERE event_time >= CURRENT_DATE - INTERVAL '30 days'
    GROUP BY CAST(event_time AS DATE)
)
SELECT day,
       active_users,
       AVG(active_users) OVER (
           ORDER BY day
           ROWS BETWEEN 6 PRECEDING AND @@CCURRENT ROW
       ) AS rolling_avg
FROM daily
ORDER BY @@Mday;@@O
'''),
    ("sql", r'''
BEGIN;

UPDATE accounts
SET balance = balance - 250.00
WHERE id = 17;

UPDATE accounts
SET balance = balance + @@C250.00
WHERE id = @@M42;

INSERT INTO transfers (from_account, to_account, amount, created_at)
VALUES (17, 42, 250.00, @@MNOW());

@@MCOMMIT;
'''),
    ("sh", r'''
#!/usr/bin/env bash
# rotate-logs.sh: compress logs older than a day and delete those older than a month.
set -eu

LOG_DIR="${1:-/var/log/myapp}"
KEEP_DAYS=30@@O

if [ ! -d "$LOG_DIR" ]; then
    echo "no such directory: $LOG_DIR" >&2
    exit 1
fi

echo "compressing old logs in $LOG_DIR"
find "$LOG_DIR" -name '*.log' -mtime +1 -exec gzip {} \;@@O

echo "removing archives older than $KEEP_DAYS days"
find "$LOG_DIR" -name '*.gz' -mtime +"$@@CKEEP_DAYS" -delete
@@O
'''),
    ("sh", r'''
#!/usr/bin/env bash
# Print a short report about the machine.
echo "Host:    $(hostname)"
echo "Kernel:  $(uname -r)"
echo "Uptime:  $(uptime -p)"
echo
echo "Disk usage:"
df -h / /home | tail -n +2
echo
echo "Memory:"
free -h | awk 'NR==2 {print "  used " $3 " of " $2}'
echo
echo "Top processes by memory:"
ps aux --sort=-%mem | head -n @@M6
@@O
'''),
    ("html", r'''
<article class="recipe">
  <h2>Lemon Lentil Soup</h2>
  <p class="meta">Serves 4 &middot; 40 minutes</p>

  <h3>Ingredients</h3>
  <ul>
    <li>1 cup red lentils, rinsed</li>
    <li>1 onion, diced</li>
    <li>2 carrots, diced</li>
    <li>1 litre vegetable stock</li>
    <li>Juice of @@M1 lemon</li>
  </ul>@@O

  <h3>Method</h3>
  <ol>
    <li>Soften the onion and carrots in a little oil.</li>
    <li>Add the lentils and stock, then simmer for @@M25 minutes.</li>
    <li>@@O
'''),
    ("css", r'''
/* Layout for a simple blog */
* {
  box-sizing: border-box;
}

body {@@O
  margin: 0;
  font: 18px/1.6 Georgia, serif;
  background: #fdfcf9;
}

.site-header {
  display: flex;
  justify-content: space-between;
  align-items: @@Mcenter;
  padding: 1rem 2rem;
  border-bottom: 1px solid #ddd;
}

.post {
  max-width: 42rem;
  margin: 2rem auto;
}@@O

.post h1 {
  font-size: @@M2.2rem;
  @@O
'''),
]

RESTRICTED_SNIPPETS += [
    ("py", r'''
def insertion_sort(items):
    """Sort a list in place and return it."""
    for i in range(1, len(items)):@@O
        key = items[i]
        j = i - 1
        while j >= 0 and items[j] > @@Ckey:
            items[j + 1] = items[j]
            j -= 1
        items[j + 1] = @@Mkey
    return items
'''),
    ("py", r'''
def gcd(a, b):
    while b:
        a, b = b, a % @@Cb
    return a


def lcm(a, b):
    return abs(a * b) // @@Mgcd(a, b)
@@O
'''),
    ("py", r'''
import numpy as np

rng = np.random.default_rng(@@M0)
x = rng.normal(size=(100, 3))
mean = x.mean(axis=@@C0)
centered = x - mean@@O
'''),
    ("py", r'''
import unittest


class TestSlugify(unittest.TestCase):
    def test_lowercases(self):
        self.assertEqual(slugify("Hello"), "@@Chello")

    def test_replaces_spaces(self):
        self.assertEqual(slugify("a b c"), @@M"a-b-c")

    def test_strips_punctuation(self):
        @@O
'''),
    ("py", r'''
def merge_sort(seq):
    if len(seq) <= 1:
        return @@Cseq
    mid = len(seq) // 2
    left = merge_sort(seq[:mid])
    right = merge_sort(seq[@@Cmid:])
    merged = []
    i = j = 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            @@Cj += 1
    merged.extend(left[i:])
    merged.extend(@@Mright[j:])
    return merged@@O
'''),
    ("py", r'''
from collections import deque


def bfs(graph, start):
    """Return nodes in breadth-first order starting from ``start``."""
    seen = {start}
    order = []
    queue = deque([start])
    while queue:
        node = queue.@@Cpopleft()
        order.append(node)
        for neighbour in graph[node]:
            if neighbour not in @@Cseen:
                seen.add(neighbour)
                queue.append(@@Mneighbour)
    return order@@O
'''),
    ("py", r'''
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
'''),
    ("py", r'''
import json


def load_records(path):
    with open(path, encoding="utf-8") as fh:
        data = json.@@Cload(fh)
    return [r for r in data if r.get("active")]@@O
'''),
    ("py", r'''
def fibonacci():
    """Yield the Fibonacci numbers forever."""
    a, b = 0, 1
    while @@CTrue:
        yield a
        a, b = b, @@Ma + b


from itertools import islice
first_ten = list(islice(fibonacci(), @@C10))
'''),
    ("py", r'''
import numpy as np


def softmax(z, axis=-1):
    """Numerically stable softmax along ``axis``."""
    z = z - z.max(axis=axis, keepdims=@@CTrue)
    e = np.@@Cexp(z)
    return e / e.sum(axis=axis, keepdims=True)@@O
'''),
    ("py", r'''
import pytest


@pytest.mark.parametrize("text, expected", [
    ("", 0),
    ("one", 1),
    ("two words", @@C2),
    ("  spaced   out  ", @@M2),
])
def test_word_count(text, expected):
    assert word_count(text) == @@Cexpected
'''),
    ("py", r'''
def flatten(nested):
    """Flatten arbitrarily nested lists into a single list."""
    out = []
    for item in nested:
        if isinstance(item, list):
            out.extend(@@Mflatten(item))
        else:
            out.append(@@Citem)
    return out@@O
'''),
    ("py", r'''
from enum import Enum


class Status(Enum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "@@Cdone"
    FAILED = "failed"@@O
'''),
    ("py", r'''
def two_sum(nums, target):
    """Return indices of the two numbers that add up to target."""
    seen = {}
    for i, n in enumerate(nums):
        complement = target - @@Cn
        if complement in seen:
            return seen[complement], @@Ci
        seen[n] = i@@M
    return None
'''),
    ("py", r'''
import re

EMAIL = re.compile(r"^[\w.+-]+@[\w-]+\.[\w.]+$")


def valid_emails(candidates):
    return [c for c in candidates if EMAIL.@@Mmatch(c)]@@O
'''),
    ("py", r'''
import numpy as np

a = np.arange(12).reshape(3, @@C4)
print(a.shape)
print(a[:, 1])
print(a.T @ @@Ma)@@O
'''),
    ("py", r'''
class Node:
    def __init__(self, value, left=None, right=None):
        self.value = value
        self.left = left
        self.right = @@Cright


def height(node):
    if node is None:
        return @@C0
    return 1 + max(height(node.left), @@Cheight(node.right))


def inorder(node):
    @@O
'''),
    ("py", r'''
from datetime import date, timedelta


def business_days(start, end):
    """Count weekdays between two dates, inclusive."""
    days = 0
    current = start
    while current <= end:
        if current.weekday() < @@C5:
            days += 1
        current += timedelta(days=@@C1)
    return days@@O


print(business_days(date(2024, 3, 1), @@Mdate(2024, 3, 31)))
'''),
    ("py", r'''
def chunked(iterable, size):
    """Yield successive lists of length ``size`` (the last may be shorter)."""
    chunk = []
    for item in iterable:
        chunk.append(item)
        if len(chunk) == @@Csize:
            yield chunk
            chunk = @@C[]
    if chunk:
        @@Myield chunk
'''),
    ("py", r'''
class Vector2:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vector2(self.x + other.x, self.y + @@Cother.y)

    def __mul__(self, k):
        return Vector2(self.x * k, @@Cself.y * k)

    def dot(self, other):
        return @@Mself.x * other.x + self.y * other.y

    def __abs__(self):
        @@O
'''),
]

RESTRICTED_SNIPPETS += [
    ("py", r'''
import heapq


def dijkstra(graph, source):
    """Shortest path distances from ``source``.

    ``graph`` maps each node to a list of ``(neighbour, weight)`` pairs.
    All weights must be non-negative.
    """
    dist = {source: 0}
    heap = [(0, source)]
    visited = set()
    while heap:
        d, node = heapq.heappop(heap)@@M
        if node in visited:
            continue
        visited.add(node)@@O
        for neighbour, weight in graph.get(node, ()):
            new_d = d + weight
            if new_d < dist.get(neighbour, float("inf")):
                dist[neighbour] = new_d
                heapq.heappush(heap, (@@Mnew_d, neighbour))
    return dist@@O


if __name__ == "__main__":
    roads = {
        "A": [("B", 4), ("C", 1)],
        "C": [("B", 2), ("D", 5)],
        "B": [("D", 1)],
    }
    @@O
'''),
    ("py", r'''
class Matrix:
    """A small dense matrix stored as a list of rows."""

    def __init__(self, rows):
        if not rows or any(len(r) != len(rows[0]) for r in rows):
            raise ValueError("rows must be non-empty and of equal length")
        self.rows = [list(r) for r in rows]

    @property
    def shape(self):
        return len(self.rows), len(self.rows[0])

    def transpose(self):
        return Matrix([list(col) for col in zip(*@@Cself.rows)])

    def __matmul__(self, other):
        n, k = self.shape
        k2, m = other.shape
        if k != k2:
            raise ValueError(f"shape mismatch: {self.shape} @ {@@Mother.shape}")
        cols = other.transpose().rows@@O
        return Matrix([[sum(a * b for a, b in zip(row, col)) for col in cols]
                       for row in @@Mself.rows])

    def __eq__(self, other):
        return isinstance(other, Matrix) and self.rows == other.rows@@O
'''),
    ("py", r'''
import numpy as np


def linear_regression(X, y):
    """Fit y = X w + b by ordinary least squares.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)

    Returns
    -------
    w : ndarray of shape (n_features,)
    b : float
    """
    X1 = np.hstack([X, np.ones((X.shape[0], 1))])
    coef, *_ = np.linalg.lstsq(X1, y, rcond=@@MNone)
    return coef[:-1], coef[-1]@@O


rng = np.random.default_rng(42)
X = rng.uniform(-1, 1, size=(200, 2))
y = X @ np.array([3.0, -2.0]) + 0.5 + rng.normal(scale=0.1, size=@@C200)
w, b = linear_regression(X, y)@@O
'''),
    ("py", r'''
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
'''),
    ("py", r'''
def longest_common_subsequence(a, b):
    """Length of the longest common subsequence of two strings.

    >>> longest_common_subsequence("kitten", "sitting")
    4
    """
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                table[i][j] = table[i - 1][j - 1] + @@C1
            else:
                table[i][j] = max(table[i - 1][j], @@Ctable[i][j - 1])
    return table[n][m]@@O
'''),
    ("py", r'''
from dataclasses import dataclass, field
from typing import Optional


@dataclass(order=True)
class Task:
    priority: int
    name: str = field(compare=False)
    done: bool = field(default=False, compare=False)
    notes: Optional[str] = field(default=None, compare=False)


class TaskList:
    def __init__(self):
        self._tasks: list[Task] = []

    def add(self, name, priority=3):
        task = Task(priority, name)
        self._tasks.append(task)
        return task@@O

    def pending(self):
        return sorted(t for t in self._tasks if not t.@@Cdone)

    def complete(self, name):
        for task in self._tasks:
            if task.name == name:
                @@Mtask.done = True
                return True
        return False@@O
'''),
    ("py", r'''
import numpy as np


def moving_average(x, window):
    """Simple moving average using a cumulative sum."""
    x = np.asarray(x, dtype=float)
    if window < 1 or window > x.size:
        raise ValueError("window out of range")
    c = np.cumsum(np.insert(x, 0, 0.0))
    return (c[window:] - c[:-window]) / @@Cwindow


signal = np.sin(np.linspace(0, 4 * np.pi, 500))
noisy = signal + np.random.default_rng(1).normal(scale=0.3, size=signal.size)
smooth = moving_average(noisy, @@M25)
print(smooth.shape)@@O
'''),
    ("py", r'''
from functools import lru_cache


@lru_cache(maxsize=None)
def count_paths(rows, cols):
    """Number of monotone lattice paths from the top-left to the bottom-right."""
    if rows == 1 or cols == 1:
        return 1
    return count_paths(rows - 1, cols) + count_paths(rows, @@Ccols - 1)


for n in range(1, 8):
    print(n, count_paths(n, n))@@O
'''),
    ("py", r'''
import itertools


def pairwise_distances(points):
    """Return a dict mapping each unordered pair of points to its distance."""
    out = {}
    for p, q in itertools.combinations(points, @@C2):
        dx = p[0] - q[0]
        dy = p[1] - q[1]
        out[(p, q)] = (dx * dx + dy * dy) ** @@C0.5
    return out@@O
'''),
    ("py", r'''
class RingBuffer:
    """Fixed-size buffer that overwrites its oldest entries when full."""

    def __init__(self, capacity):
        self._data = [None] * capacity
        self._start = 0
        self._size = 0

    def append(self, value):
        end = (self._start + self._size) % len(self._data)
        self._data[end] = value
        if self._size < len(self._data):
            self._size += 1
        else:
            self._start = (self._start + 1) % @@Clen(self._data)

    def __iter__(self):
        for i in range(self._size):
            yield self._data[(self._start + i) % @@Clen(self._data)]

    def __len__(self):
        return self._size@@O
'''),
    ("py", r'''
def parse_duration(text):
    """Parse strings like '1h30m' or '45s' into a number of seconds."""
    units = {"h": 3600, "m": 60, "s": 1}
    total = 0
    number = ""
    for ch in text.strip():
        if ch.isdigit():
            number += ch
        elif ch in units and number:
            total += int(number) * units[@@Cch]
            number = ""
        else:
            raise ValueError(f"bad duration: {text!r}")@@O
    if number:
        @@Mraise ValueError(f"missing unit in {text!r}")
    return total
'''),
    ("py", r'''
import csv
import io

RAW = """name,team,score
ana,red,12
bo,blue,7
cy,red,9
"""

rows = list(csv.DictReader(io.StringIO(RAW)))
by_team = {}
for row in rows:
    by_team.setdefault(row["team"], []).append(int(row[@@C"score"]))@@O
'''),
    ("py", r'''
import numpy as np

image = np.zeros((64, 64), dtype=np.uint8)
image[16:48, 16:48] = @@M255
mask = image > @@M0
print(mask.sum())@@O
'''),
    ("py", r'''
def sieve(limit):
    """Return all primes up to and including ``limit``."""
    if limit < 2:
        return []
    is_prime = [True] * (limit + 1)
    is_prime[0] = is_prime[1] = @@CFalse
    for n in range(2, int(limit ** 0.5) + 1):
        if is_prime[n]:
            for multiple in range(n * n, limit + 1, @@Cn):
                is_prime[multiple] = False
    return [n for n, flag in enumerate(is_prime) if @@Cflag]
'''),
    ("py", r'''
class Timer:
    """Context manager that measures elapsed wall-clock time."""

    def __enter__(self):
        self.start = time.perf_counter()
        return @@Cself

    def __exit__(self, exc_type, exc, tb):
        self.elapsed = time.perf_counter() - self.start
        return @@MFalse


with Timer() as t:
    total = sum(i * i for i in range(1_000_000))
print(f"took {t.elapsed:.3f} s")@@O
'''),
]

RESTRICTED_SNIPPETS += [
    ("py", r'''
"""Utilities for cleaning tabular survey data.

The raw export has one row per respondent. Free-text answers are
normalised, ages are parsed into integers, and rows with no consent
flag are dropped before anything else happens.
"""

from __future__ import annotations

import re
from typing import Iterable

WHITESPACE = re.compile(r"\s+")


def normalise_text(value: str) -> str:
    """Lower-case, trim and collapse internal whitespace."""
    return WHITESPACE.sub(" ", value.strip().lower())


def parse_age(value: str) -> int | None:
    value = value.strip()
    if not value.isdigit():
        return None
    age = int(value)
    return age if 0 < age < 120 else @@MNone


def clean_rows(rows: Iterable[dict]) -> list[dict]:
    cleaned = []
    for row in rows:
        if row.get("consent") != "yes":
            continue@@O
        row = dict(row)
        row["comment"] = normalise_text(row.get("comment", ""))
        row["age"] = parse_age(row.get("age", ""))@@O
'''),
    ("py", r'''
import numpy as np


class KMeans:
    """Plain k-means clustering with random initial centroids."""

    def __init__(self, k, n_iter=100, seed=0):
        self.k = k
        self.n_iter = n_iter
        self.rng = np.random.default_rng(seed)

    def fit(self, X):
        idx = self.rng.choice(len(X), size=self.k, replace=False)
        self.centroids = X[idx].copy()
        for _ in range(self.n_iter):
            dists = np.linalg.norm(X[:, None, :] - self.centroids[None, :, :], axis=@@C2)
            labels = dists.argmin(axis=1)@@O
            new = np.array([X[labels == j].mean(axis=0) for j in range(self.k)])
            if np.allclose(new, @@Mself.centroids):
                break
            self.centroids = new@@O
        self.labels_ = labels
        return self

    def predict(self, X):
        @@O
'''),
    ("py", r'''
import unittest
from unittest import mock


class NotifierTests(unittest.TestCase):
    def setUp(self):
        self.sender = mock.Mock()
        self.notifier = Notifier(sender=self.sender)

    def test_sends_one_message_per_recipient(self):
        self.notifier.notify(["a@example.com", "b@example.com"], "hi")
        self.assertEqual(self.sender.send.call_count, @@C2)

    def test_skips_blank_addresses(self):
        self.notifier.notify(["", "c@example.com"], "hi")
        self.sender.send.assert_called_once_with(@@M"c@example.com", "hi")

    def test_raises_on_empty_message(self):
        with self.assertRaises(@@MValueError):
            self.notifier.notify(["a@example.com"], "")@@O


if __name__ == "__main__":
    @@Cunittest.main()
'''),
    ("py", r'''
def knapsack(weights, values, capacity):
    """0/1 knapsack: best total value within ``capacity``.

    Uses a one-dimensional table, iterating capacities downwards so that
    each item is used at most once.
    """
    best = [0] * (capacity + 1)
    for w, v in zip(weights, values):
        for c in range(capacity, w - 1, -1):
            best[c] = max(best[c], best[c - w] + @@Cv)
    return best[capacity]@@O


if __name__ == "__main__":
    weights = [3, 4, 5, 9, 4]
    values = [3, 4, 4, 10, 4]
    print(knapsack(weights, values, @@M11))
'''),
    ("py", r'''
from pathlib import Path
import hashlib


def file_digest(path, chunk_size=1 << 16):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk_size), b""):
            h.update(block)
    return h.hexdigest()


def find_duplicates(root):
    """Group files under ``root`` that have identical contents."""
    by_size = {}
    for p in Path(root).rglob("*"):
        if p.is_file():
            by_size.setdefault(p.stat().st_size, []).append(p)@@O
    groups = []
    for same_size in by_size.values():
        if len(same_size) < 2:
            @@Ccontinue
        by_hash = {}
        for p in same_size:
            by_hash.setdefault(file_digest(p), []).append(@@Mp)
        groups.extend(g for g in by_hash.values() if len(g) > 1)
    return groups@@O
'''),
    ("py", r'''
class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, name, qty=1):
        self.items[name] = self.items.get(name, 0) + qty

    def remove(self, name, qty=1):
        have = self.items.get(name, 0)
        if qty > have:
            raise KeyError(f"only {have} of {name} in stock")
        if qty == have:
            del self.items[@@Cname]
        else:
            self.items[name] = have - qty

    def report(self):
        @@Mwidth = max(map(len, self.items), default=0)
        for name in sorted(self.items):
            print(f"{name:<{width}}  {self.items[name]:>4}")@@O
'''),
    ("py", r'''
import numpy as np


def cosine_similarity(a, b, eps=1e-12):
    """Pairwise cosine similarity between the rows of ``a`` and ``b``."""
    a = a / (np.linalg.norm(a, axis=1, keepdims=True) + eps)
    b = b / (np.linalg.norm(b, axis=1, keepdims=True) + eps)
    return a @ b.@@CT


embeddings = np.random.default_rng(7).normal(size=(5, 16))
sims = cosine_similarity(embeddings, embeddings)
np.fill_diagonal(sims, -np.inf)
nearest = sims.argmax(axis=@@C1)@@O
'''),
    ("py", r'''
def rle_encode(text):
    """Run-length encode a string: 'aaabcc' -> [('a', 3), ('b', 1), ('c', 2)]."""
    if not text:
        return []
    runs = []
    current, count = text[0], 1
    for ch in text[1:]:
        if ch == current:
            count += 1
        else:
            runs.append((current, count))@@O
            current, count = ch, @@C1
    runs.append((current, count))
    return runs


def rle_decode(runs):
    return "".join(@@Mch * n for ch, n in runs)
'''),
    ("py", r'''
import logging
from typing import Callable, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


def with_retries(attempts: int = 3, delay: float = 0.5):
    """Retry the decorated function when it raises ``OSError``."""
    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        def wrapper(*args, **kwargs) -> T:
            for attempt in range(1, attempts + 1):
                try:
                    return fn(*args, **kwargs)
                except OSError as exc:
                    if attempt == attempts:
                        @@Craise
                    log.info("attempt %d failed (%s); retrying", attempt, exc)@@O
                    time.sleep(delay * @@Mattempt)
            raise AssertionError("unreachable")
        return wrapper
    return decorate@@O
'''),
    ("py", r'''
def transpose(matrix):
    return [list(row) for row in zip(*matrix)]


def rotate_clockwise(matrix):
    """Rotate a square matrix by 90 degrees."""
    return [list(reversed(col)) for col in @@Mzip(*matrix)]


grid = [
    [1, 2, 3],
    [4, 5, 6],
    [7, 8, 9],
]
for row in rotate_clockwise(grid):
    @@Mprint(*row)@@O
'''),
    ("py", r'''
# Group words that are anagrams of each other.
from collections import defaultdict

words = ["listen", "silent", "enlist", "google", "gooegl", "cat", "act"]
groups = defaultdict(list)
for w in words:
    groups["".join(sorted(@@Cw))].append(w)@@O
'''),
    ("py", r'''
import numpy as np

counts = np.array([[12, 5, 0], [3, 20, 2], [1, 4, 18]])
precision = counts.diagonal() / counts.sum(axis=@@M0)
recall = counts.diagonal() / counts.sum(axis=@@M1)
f1 = 2 * precision * recall / (precision + @@Crecall)@@O
'''),
    ("py", r'''
class Graph:
    def __init__(self):
        self.adj = {}

    def add_edge(self, u, v):
        self.adj.setdefault(u, set()).add(v)
        self.adj.setdefault(v, set()).add(@@Cu)

    def has_cycle(self):
        visited = set()

        def visit(node, parent):
            visited.add(node)
            for nxt in self.adj[node]:
                if nxt not in visited:
                    if visit(nxt, node):
                        return True
                elif nxt != @@Cparent:
                    return True
            return @@CFalse

        return any(visit(n, None) for n in self.adj if n not in visited)@@O
'''),
    ("py", r'''
def roman_to_int(s):
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": @@C1000}
    total = 0
    for i, ch in enumerate(s):
        v = values[ch]
        if i + 1 < len(s) and values[s[i + 1]] > v:
            total -= v
        else:
            @@Mtotal += v
    return total@@O
'''),
]

RESTRICTED_SNIPPETS += [
    ("py", r'''
def clamp(value, low, high):
    """Limit ``value`` to the closed interval [low, high]."""
    return max(low, min(value, @@Chigh))
'''),
    ("py", r'''
import random

deck = [rank + suit for suit in "SHDC" for rank in "23456789TJQKA"]
random.shuffle(deck)
hand = deck[:@@M5]@@O
'''),
    ("py", r'''
def binary_search(sorted_items, target):
    lo, hi = 0, len(sorted_items)
    while lo < hi:
        mid = (lo + hi) // 2
        if sorted_items[mid] < target:
            lo = mid + 1
        else:
            hi = @@Cmid
    return @@Mlo
'''),
    ("py", r'''
def read_numbers(path):
    # one number per line; blank lines are ignored
    with open(path) as fh:
        return [float(line) for line in fh if line.@@Mstrip()]
'''),
    ("py", r'''
import numpy as np

weights = np.array([0.2, 0.5, 0.3])
scores = np.array([[70, 80, 90], [60, 75, 85]])
weighted = scores @ @@Cweights
best = int(np.argmax(@@Mweighted))@@O
'''),
    ("py", r'''
def is_balanced(expr):
    """Check that brackets in ``expr`` are properly nested."""
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in expr:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[@@Cch]:
                return False
    return not @@Cstack
'''),
    ("py", r'''
class Counter:
    """Count occurrences of hashable items."""

    def __init__(self, items=()):
        self.counts = {}
        for item in items:
            @@Mself.add(item)

    def add(self, item):
        self.counts[item] = self.counts.get(item, 0) + @@C1

    def most_common(self, n=1):
        @@O
'''),
    ("py", r'''
def test_reverse_words():
    assert reverse_words("hello world") == "world hello"
    assert reverse_words("") == @@M""
    assert reverse_words("one") == @@C"one"@@O
'''),
    ("py", r'''
from statistics import mean, stdev

samples = [9.8, 10.1, 9.9, 10.4, 10.0, 9.7]
mu = mean(samples)
sigma = @@Mstdev(samples)
outliers = [x for x in samples if abs(x - mu) > 2 * @@Csigma]@@O
'''),
    ("py", r'''
def quickselect(items, k):
    """Return the k-th smallest element (0-based) of ``items``."""
    pivot = items[len(items) // 2]
    lows = [x for x in items if x < pivot]
    highs = [x for x in items if x > pivot]
    pivots = [x for x in items if x == @@Cpivot]
    if k < len(lows):
        return quickselect(lows, @@Ck)
    if k < len(lows) + len(pivots):
        return @@Mpivot
    return quickselect(highs, k - len(lows) - @@Mlen(pivots))@@O
'''),
    ("py", r'''
import json
from pathlib import Path

settings_path = Path.home() / ".myapp" / "settings.json"
settings_path.parent.mkdir(parents=True, exist_ok=@@CTrue)
settings = {"theme": "light", "autosave": True, "recent": []}
settings_path.write_text(json.dumps(settings, indent=@@M2))@@O
'''),
    ("py", r'''
def caesar(text, shift):
    out = []
    for ch in text:
        if ch.isalpha():
            base = ord("A") if ch.isupper() else ord(@@C"a")
            out.append(chr((ord(ch) - base + shift) % 26 + @@Cbase))
        else:
            out.append(@@Cch)
    return "".join(out)@@O
'''),
    ("py", r'''
import numpy as np

x = np.linspace(0, 1, 11)
y = x ** 2
area = np.trapz(y, @@Cx)@@O
'''),
    ("py", r'''
class Stopwatch:
    def __init__(self):
        self.laps = []
        self._last = None

    def lap(self, now):
        if self._last is not None:
            self.laps.append(now - @@Cself._last)
        self._last = now@@O
'''),
    ("py", r'''
def histogram(values, bins=10):
    """Return bin edges and counts for ``values`` without numpy."""
    lo, hi = min(values), max(values)
    width = (hi - lo) / bins or 1.0
    counts = [0] * bins
    for v in values:
        i = min(int((v - lo) / width), bins - @@C1)
        counts[i] += 1@@O
    edges = [lo + i * width for i in range(bins + @@C1)]
    return edges, counts
'''),
    ("py", r'''
from typing import NamedTuple


class Point(NamedTuple):
    x: float
    y: float


def centroid(points):
    n = len(points)
    return Point(sum(p.x for p in points) / n, sum(p.y for p in points) / @@Cn)@@O
'''),
    ("py", r'''
def edit_distance(a, b):
    """Levenshtein distance between two strings."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + @@Ccost))
        prev = @@Mcur
    return prev[-1]@@O
'''),
    ("py", r'''
# Convert a list of (key, value) pairs into a nested dict keyed by dotted paths.
def unflatten(pairs):
    root = {}
    for dotted, value in pairs:
        node = root
        *parents, leaf = dotted.split(@@C".")
        for part in parents:
            node = node.setdefault(part, @@C{})
        node[leaf] = @@Mvalue
    return root@@O
'''),
    ("py", r'''
import numpy as np

def one_hot(labels, num_classes):
    out = np.zeros((len(labels), num_classes), dtype=@@Mnp.float32)
    out[np.arange(len(labels)), labels] = @@C1.0
    return out
'''),
    ("py", r'''
def power_set(items):
    """All subsets of ``items``, smallest first."""
    result = [[]]
    for item in items:
        result += [subset + [item] for subset in @@Cresult]
    return sorted(result, key=@@Mlen)
'''),
]

RESTRICTED_SNIPPETS += [
    ("py", r'''
"""A tiny recursive-descent evaluator: expr := term (("+" | "-") term)*."""
import re

TOKEN = re.compile(r"\s*(?:(\d+\.?\d*)|(.))")


def tokenize(src):
    tokens = []
    for number, op in TOKEN.findall(src):
        tokens.append(float(number) if number else op)
    return tokens


class Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.pos = 0

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self):
        tok = self.peek()
        self.pos += 1
        return tok

    def expr(self):
        value = self.term()
        while self.peek() in ("+", "-"):
            if self.take() == "+":
                value += self.@@Cterm()
            else:
                value -= self.term()
        return value@@O

    def term(self):
        @@M
'''),
    ("py", r'''
import numpy as np


def train_logistic_regression(X, y, lr=0.1, epochs=500):
    """Fit weights by batch gradient descent on the log loss.

    X has shape (n, d); y holds 0/1 labels of shape (n,).
    Returns the weight vector and the bias.
    """
    n, d = X.shape
    w = np.zeros(d)
    b = 0.0
    for epoch in range(epochs):
        z = X @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        grad_w = X.T @ (p - y) / n
        grad_b = np.mean(p - @@Cy)
        w -= lr * grad_w
        b -= lr * @@Cgrad_b
        if epoch % 100 == 0:
            loss = -np.mean(y * np.log(p + 1e-9) + (1 - y) * np.log(1 - p + 1e-9))
            print(f"epoch {epoch:4d}  loss {loss:.4f}")@@O
    return w, b


def accuracy(X, y, w, b):
    @@Mpreds = (X @ w + b) > 0
    return float(np.mean(preds == @@My))
'''),
    ("py", r'''
import sqlite3
import pytest


@pytest.fixture
def db():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, age INTEGER)")
    conn.executemany(
        "INSERT INTO users (name, age) VALUES (?, ?)",
        [("ana", 31), ("bo", 17), ("cy", 45)],
    )
    yield conn
    conn.close()


def test_adults_only(db):
    rows = db.execute("SELECT name FROM users WHERE age >= 18 ORDER BY name").fetchall()
    assert [r[0] for r in rows] == ["ana", @@M"cy"]


def test_average_age(db):
    (avg,) = db.execute("SELECT AVG(age) FROM users").fetchone()
    assert avg == pytest.approx(@@M31.0)@@O


def test_insert_increases_count(db):
    before = db.execute("SELECT COUNT(*) FROM users").fetchone()[0]
    @@M
'''),
    ("py", r'''
from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Invoice:
    number: str
    customer: str
    issued: date
    lines: tuple[tuple[str, int, float], ...]
    tax_rate: float = 0.2

    @property
    def subtotal(self) -> float:
        return sum(qty * price for _desc, qty, price in self.lines)

    @property
    def tax(self) -> float:
        return round(self.subtotal * self.tax_rate, 2)

    @property
    def total(self) -> float:
        return round(self.subtotal + @@Mself.tax, 2)

    def render(self) -> str:
        out = [f"Invoice {self.number} for {self.customer} ({self.issued:%d %b %Y})"]
        for desc, qty, price in self.lines:
            out.append(f"  {desc:<24}{qty:>4} x {price:>8.2f}")@@O
        out.append(f"  {'Tax':<24}{self.tax:>17.2f}")
        @@Mout.append(f"  {'Total':<24}{self.total:>17.2f}")
        return "\n".join(out)@@O
'''),
    ("py", r'''
import os
import time


def tail(path, poll=0.5):
    """Follow a growing file, yielding new lines as they are written.

    Behaves roughly like ``tail -f``: starts at the current end of the file
    and sleeps between polls when nothing new has arrived. Handles the file
    being truncated (for example by log rotation) by seeking back to 0.
    """
    with open(path) as fh:
        fh.seek(0, os.SEEK_END)
        while True:
            position = fh.tell()
            line = fh.readline()
            if line:
                yield line.rstrip(@@M"\n")
                continue
            if os.path.getsize(path) < position:
                fh.seek(0)@@O
            time.sleep(@@Mpoll)


for line in tail("/var/log/app.log"):
    if "ERROR" in line:
        @@O
'''),
    ("py", r'''
import numpy as np


def pca(X, n_components=2):
    """Project ``X`` onto its top principal components.

    Returns the projected data and the fraction of variance explained
    by each kept component.
    """
    Xc = X - X.mean(axis=0)
    U, S, Vt = np.linalg.svd(Xc, full_matrices=@@CFalse)
    explained = S ** 2 / np.sum(S ** 2)
    components = Vt[:n_components]
    return Xc @ components.T, explained[:@@Cn_components]


data = np.random.default_rng(3).normal(size=(300, 6))
data[:, 1] = 2 * data[:, 0] + 0.1 * data[:, 1]
projected, ratio = pca(data, @@Mn_components=3)
print(projected.shape, ratio.round(3))@@O
'''),
    ("py", r'''
from collections import OrderedDict


class LRU:
    """Least-recently-used cache with a fixed capacity.

    >>> c = LRU(2)
    >>> c.put("a", 1); c.put("b", 2); c.get("a")
    1
    >>> c.put("c", 3)   # evicts "b"
    >>> c.get("b") is None
    True
    """

    def __init__(self, capacity):
        self.capacity = capacity
        self.data = OrderedDict()

    def get(self, key):
        if key not in self.data:
            return None
        self.data.move_to_end(@@Ckey)
        return self.data[key]

    def put(self, key, value):
        self.data[key] = value
        self.data.move_to_end(key)@@O
        if len(self.data) > self.capacity:
            @@Mself.data.popitem(last=False)
'''),
    ("py", r'''
import argparse
import csv
import sys


def build_parser():
    parser = argparse.ArgumentParser(
        prog="csvstat",
        description="Print summary statistics for numeric CSV columns.",
    )
    parser.add_argument("path", help="CSV file to read, or - for stdin")
    parser.add_argument("-c", "--columns", nargs="+", help="only these columns")
    parser.add_argument("--delimiter", default=",")
    parser.add_argument("--precision", type=int, default=@@M3)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    fh = sys.stdin if args.path == "-" else open(args.path, newline="")
    with fh:
        reader = csv.DictReader(fh, delimiter=args.@@Cdelimiter)
        columns = args.columns or reader.@@Mfieldnames
        values = {c: [] for c in columns}
        for row in reader:
            for c in columns:
                try:
                    values[c].append(float(row[c]))
                except (TypeError, ValueError):
                    @@Mpass
    for c, vs in values.items():
        @@O
'''),
    ("py", r'''
def topological_sort(deps):
    """Order tasks so that every task comes after its dependencies.

    ``deps`` maps a task to the set of tasks it depends on. Raises
    ``ValueError`` if the dependencies contain a cycle.
    """
    indegree = {t: 0 for t in deps}
    dependents = {t: [] for t in deps}
    for task, needs in deps.items():
        for need in needs:
            indegree.setdefault(need, 0)
            dependents.setdefault(need, []).append(task)
            indegree[task] += 1@@O
    ready = [t for t, d in indegree.items() if d == 0]
    order = []
    while ready:
        task = ready.pop()
        order.append(task)
        for nxt in dependents.get(task, ()):
            indegree[nxt] -= 1
            if indegree[nxt] == @@C0:
                ready.append(nxt)
    if len(order) != len(indegree):
        raise ValueError(@@M"dependency cycle detected")
    return order@@O
'''),
    ("py", r'''
import numpy as np


def conv2d(image, kernel):
    """Valid 2-D cross-correlation of a grayscale image with a kernel."""
    kh, kw = kernel.shape
    h, w = image.shape
    out = np.empty((h - kh + 1, w - kw + 1))
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = np.sum(image[i:i + kh, j:j + kw] * @@Ckernel)
    return out


sobel_x = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]])
img = np.random.default_rng(5).random((32, 32))
edges = conv2d(img, @@Msobel_x)
print(edges.min(), edges.max())@@O
'''),
    ("py", r'''
class BankLedger:
    """Double-entry ledger: every transfer debits one account and credits another."""

    def __init__(self):
        self.balances = {}
        self.entries = []

    def open(self, account, initial=0):
        if account in self.balances:
            raise ValueError(f"account {account!r} already exists")
        self.balances[account] = initial

    def transfer(self, src, dst, amount, memo=""):
        if amount <= 0:
            raise ValueError("amount must be positive")
        if self.balances[src] < amount:
            raise ValueError(f"insufficient funds in {src!r}")
        self.balances[src] -= amount
        self.balances[dst] += @@Camount
        self.entries.append((src, dst, amount, memo))@@O

    def statement(self, account):
        @@Mlines = []
        for src, dst, amount, memo in self.entries:
            if account in (src, dst):
                sign = "-" if account == src else "+"
                lines.append(f"{sign}{amount:>10.2f}  {memo}")
        return @@M"\n".join(lines)
'''),
]
