#!/bin/bash
set -e
cat > /app/fib/main.c <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    unsigned long long a = 0, b = 1;
    for (int n = argc > 1 ? atoi(argv[1]) : 0; n > 0; n--) { unsigned long long t = a + b; a = b; b = t; }
    printf("%llu\n", a);
    return 0;
}
C
