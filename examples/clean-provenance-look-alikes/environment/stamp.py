"""Writes the build's stamp; imported once at build and deleted with its __pycache__ (a look-alike)."""

with open("/app/.build-stamp", "w") as fh:
    fh.write("numbers v1\n")
