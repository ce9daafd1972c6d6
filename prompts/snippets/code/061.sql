-- Customers who placed more than five orders last year
SELECT c.id, c.name, COUNT(o.id) AS order_count
FROM customers AS c
JOIN orders AS o ON o.customer_id = c.@@Cid
WHERE o.created_at >= '2023-01-01'
  AND o.created_at < '@@M2024-01-01'
GROUP BY c.id, c.name
HAVING COUNT(o.id) > @@C5
ORDER BY order_count DESC;
