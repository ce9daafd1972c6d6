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
