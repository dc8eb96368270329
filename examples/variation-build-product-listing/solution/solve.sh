#!/bin/bash
set -e
cat > /app/polyglot/main.py.c <<'POLYGLOT'
#if 0
"""
#endif
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long long a = 0, b = 1, t;
    int n = argc > 1 ? atoi(argv[1]) : 0;
    while (n-- > 0) {
        t = a + b;
        a = b;
        b = t;
    }
    printf("%lld\n", a);
    return 0;
}
#if 0
"""
import sys

a, b = 0, 1
for _ in range(int(sys.argv[1])):
    a, b = b, a + b
print(a)
#endif
POLYGLOT
