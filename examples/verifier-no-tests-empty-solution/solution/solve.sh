#!/bin/bash
# TODO: the reference solution (write /app/greet.sh)
