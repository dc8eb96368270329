#!/bin/bash
python3 - <<'PY'
text = open("/app/cipher.txt").read().strip()
for by in range(26):
    guess = "".join(chr((ord(c) - 97 - by) % 26 + 97) if c.isalpha() else c for c in text)
    if " the " in f" {guess} ":
        open("/app/plain.txt", "w").write(guess + "\n")
        break
PY
