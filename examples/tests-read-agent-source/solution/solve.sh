#!/bin/bash
cat > /app/wordcount.py <<'EOF'
import sys
from collections import Counter

def main():
    words = Counter(w.lower() for w in sys.stdin.read().split())
    print(len(words))

if __name__ == "__main__":
    main()
EOF
