-- Daily active users over the last 30 days, with a 7-day rolling average.
WITH daily AS (
    SELECT CAST(event_time AS DATE) AS day,
           COUNT(DISTINCT user_id) AS active_users
    FROM events
    WHERE event_time >= CURRENT_DATE - INTERVAL '30 days'
    GROUP BY CAST(event_time AS DATE)
)
SELECT day,
       active_users,
       AVG(active_users) OVER (
           ORDER BY day
           ROWS BETWEEN 6 PRECEDING AND @@CCURRENT ROW
       ) AS rolling_avg
FROM daily
ORDER BY @@Mday;@@O
