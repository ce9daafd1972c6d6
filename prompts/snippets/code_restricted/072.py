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
