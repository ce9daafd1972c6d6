-- Find duplicate email addresses
SELECT email, COUNT(*)
FROM users
GROUP BY @@Cemail
HAVING COUNT(*) > 1;
