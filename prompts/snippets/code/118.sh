#!/usr/bin/env bash
# Print a short report about the machine.
echo "Host:    $(hostname)"
echo "Kernel:  $(uname -r)"
echo "Uptime:  $(uptime -p)"
echo
echo "Disk usage:"
df -h / /home | tail -n +2
echo
echo "Memory:"
free -h | awk 'NR==2 {print "  used " $3 " of " $2}'
echo
echo "Top processes by memory:"
ps aux --sort=-%mem | head -n @@M6
@@O
