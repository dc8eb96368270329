#!/bin/bash
cat > /app/greet.sh <<'SH'
#!/bin/bash
echo "hello, $1"
SH
chmod +x /app/greet.sh
