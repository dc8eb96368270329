#!/bin/bash
cd /app && tar -czf /app/logs.tar.gz logs
