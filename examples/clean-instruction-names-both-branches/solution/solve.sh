#!/bin/bash
set -e
cd /app/repo
git checkout -q main
printf '1.4.2\n' > VERSION
git add VERSION
git -c user.name=oracle -c user.email=oracle@example.test commit -q -m 'bump version to 1.4.2'
