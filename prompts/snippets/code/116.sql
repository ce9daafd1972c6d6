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
