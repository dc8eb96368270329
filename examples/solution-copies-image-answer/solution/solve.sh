#!/bin/bash
cp /app/fixtures/page.html /app/out.html
