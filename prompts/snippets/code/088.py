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
