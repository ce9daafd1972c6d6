WITH monthly AS (
    SELECT date_trunc('month', paid_at) AS month,
           SUM(amount) AS revenue
    FROM payments@@M
    GROUP BY 1
)
SELECT month,
       revenue,
       revenue - LAG(revenue) OVER (ORDER BY @@Cmonth) AS change
FROM @@Cmonthly
ORDER BY month;
