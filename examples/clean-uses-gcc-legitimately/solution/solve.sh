#!/bin/bash
set -e
cat > /app/collatz.c <<'C'
#include <stdio.h>

int main(void) {
    unsigned long long n;
    int steps = 0;
    if (scanf("%llu", &n) != 1) return 1;
    while (n != 1) {
        n = (n % 2 == 0) ? n / 2 : 3 * n + 1;
        steps++;
    }
    printf("%d\n", steps);
    return 0;
}
C
