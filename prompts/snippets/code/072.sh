# Count requests per status code in an nginx log
awk '{print $9}' access.log | sort | uniq -c | sort -@@Mrn@@O

# Show the last lines of the error log
tail -n 50 /var/log/nginx/@@Cerror.log
