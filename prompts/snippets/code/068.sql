SELECT d.name AS department,
       AVG(e.salary) AS avg_salary
FROM departments d
LEFT JOIN employees e ON e.department_id = d.id
GROUP BY d.@@Cname;
@@O
