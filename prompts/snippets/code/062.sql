CREATE TABLE employees (
    id          INTEGER PRIMARY @@CKEY,
    first_name  VARCHAR(50) NOT NULL,
    last_name   VARCHAR(50) NOT NULL,
    department  VARCHAR(@@M50),
    salary      NUMERIC(10, 2) CHECK (salary >= @@C0),
    hired_on    DATE DEFAULT CURRENT_DATE
);
