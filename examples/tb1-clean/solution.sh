#!/bin/bash
python3 -c 'a, b = 0, 1
for _ in range(10):
    print(a); a, b = b, a + b' > /app/fib.txt
