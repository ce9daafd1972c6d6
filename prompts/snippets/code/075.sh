#!/usr/bin/env bash
# Wait until a service answers on its health endpoint.
url="http://localhost:8000/health"
for i in $(seq 1 30); do
    if curl -fsS "$url" > /dev/@@Cnull; then
        echo "service is up"
        exit @@C0
    fi
    sleep @@M1
done
echo "service did not start" >&2
@@Mexit 1
