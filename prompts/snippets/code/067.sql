CREATE INDEX idx_orders_customer
    ON orders (customer_id, created_at);@@O

EXPLAIN ANALYZE
SELECT *
FROM orders
WHERE customer_id = @@M42
ORDER BY created_at @@MDESC
LIMIT @@M10;
