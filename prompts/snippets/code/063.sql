UPDATE products
SET price = price * 1.10
WHERE category = 'books'
  AND @@Mstock > 0;@@O

DELETE FROM sessions
WHERE last_seen < NOW() - INTERVAL '30 @@Cdays';
