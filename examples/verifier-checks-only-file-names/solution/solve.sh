#!/bin/bash
mkdir -p /app/by_customer
awk -F, 'NR == 1 {head = $0; next} {f = "/app/by_customer/" $2 ".csv"; if (!(f in seen)) {print head > f; seen[f] = 1} print >> f}' /app/orders.csv
