INSERT INTO authors (name, born)
VALUES ('Ada Example', 1961),
       ('Ben Sample', @@M1974);@@O

SELECT name FROM authors WHERE born BETWEEN 1950 AND @@M1970;
