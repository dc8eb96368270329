"""The one guarded way to read a file someone else wrote: task files, trial files, job folders, config.

Every input file qa reads may be broken in an ordinary way: cut short, a folder where a file should be, a
dangling symlink, a FIFO, unreadable, not UTF-8, a BOM or CRLF line endings, nested deeper than Python's JSON
parser allows, or far too large. Each of these becomes an `InputFileError` naming the file and the problem, so a
caller never sees an `OSError`, `RecursionError` or `UnicodeError`, and can name the file and read the rest.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

from envqa.core.defaults import INPUT_FILE_MAX, JSON_DEPTH_MAX, JSON_DEPTH_SCAN_MAX, JSON_MAX
from envqa.core.errors import InputError


class InputFileError(InputError):
    """A file that could not be read, with the path and what is wrong with it (one short phrase).

    An InputError (exit 2, the file named): a command that does not catch it on purpose (the run readers name
    it and read the rest) reports it through the CLI's input-error path like any other bad input."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(str(path), message)
        self.path = Path(path)  # type: ignore[assignment]  # a Path here; InputError keeps a str
        self.message = message


def _kind(mode: int) -> str | None:
    """What a path is when it is not a regular file ("a folder", "a FIFO", ...), else None."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder where a file should be"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a file"
    return "a device, not a file"


def check_file(path: Path) -> os.stat_result:
    """The file's stat once it is known to be a readable regular file; else an InputFileError saying what it is."""
    try:
        st = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            raise InputFileError(path, f"a dangling symlink (to {os.readlink(path)})") from None
        raise InputFileError(path, "missing") from None
    except OSError as e:
        raise InputFileError(path, f"unreadable: {e.strerror or e}") from None
    kind = _kind(st.st_mode)
    if kind:
        raise InputFileError(path, kind)
    return st


def read_bytes(path: Path, *, limit: int = INPUT_FILE_MAX, head: int | None = None, tail: int | None = None) -> bytes:
    """The file's bytes: all of them (refused over `limit`), or only the first `head` / last `tail` bytes."""
    st = check_file(path)
    if head is None and tail is None and st.st_size > limit:
        raise InputFileError(path, f"too large to read ({st.st_size:,} bytes; the limit is {limit:,})")
    try:
        with path.open("rb") as f:
            if tail is not None:
                f.seek(max(0, st.st_size - tail))
                return f.read()
            return f.read(head) if head is not None else f.read(limit + 1)
    except OSError as e:
        raise InputFileError(path, f"unreadable: {e.strerror or e}") from None


def decode(path: Path, data: bytes, *, strict: bool = True) -> str:
    """UTF-8 text without a BOM and with `\\n` line endings. strict: undecodable bytes are an InputFileError
    naming the byte; else they are replaced (logs, where a stray byte must not lose the rest)."""
    try:
        text = data.decode("utf-8-sig", errors="strict" if strict else "replace")
    except UnicodeDecodeError as e:
        raise InputFileError(path, f"not UTF-8 text: {e.reason} at byte {e.start}") from None
    return text.replace("\r\n", "\n") if "\r\n" in text else text


def read_text(
    path: Path,
    *,
    strict: bool = True,
    limit: int = INPUT_FILE_MAX,
    head: int | None = None,
    tail: int | None = None,
) -> str:
    """A text file (see `read_bytes` and `decode`)."""
    return decode(path, read_bytes(path, limit=limit, head=head, tail=tail), strict=strict)


def _too_deep(text: str, limit: int) -> bool:
    """True when brackets outside strings nest deeper than `limit` (checked before parsing: the parser's own
    RecursionError comes late and costs a deep stack). Visits only texts that could be: fewer openers than the
    limit cannot nest deeper (str.count runs at C speed, so 64 MB of anything else costs milliseconds), and a text
    over JSON_DEPTH_SCAN_MAX is left to the parser, whose RecursionError parse_json names the same way."""
    if text.count("[") + text.count("{") <= limit or len(text) > JSON_DEPTH_SCAN_MAX:
        return False
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def parse_json(path: Path, text: str, *, max_depth: int = JSON_DEPTH_MAX) -> object:
    """JSON text from `path`; truncated, invalid or too deeply nested text is an InputFileError naming it."""
    if not text.strip():
        raise InputFileError(path, "empty file")
    if _too_deep(text, max_depth):
        raise InputFileError(path, f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError:
        raise InputFileError(path, "JSON nested deeper than Python's parser allows") from None
    except json.JSONDecodeError as e:
        # Cut off by a writer that stopped: the parser fails at the end, or inside a string the cut left open (its
        # error points at where that string starts), and the text no longer ends with a closing bracket.
        end = text.rstrip()
        truncated = e.pos >= len(end) - 1 or (e.msg.startswith("Unterminated string") and not end.endswith(("}", "]")))
        what = "truncated JSON (the file ends early)" if truncated else "invalid JSON"
        raise InputFileError(path, f"{what} at line {e.lineno} column {e.colno}: {e.msg}") from None


def read_json(path: Path, *, limit: int = JSON_MAX, max_depth: int = JSON_DEPTH_MAX) -> object:
    """A JSON file (UTF-8, a BOM allowed), guarded as `read_bytes` and `parse_json` say."""
    return parse_json(path, decode(path, read_bytes(path, limit=limit)), max_depth=max_depth)


def read_json_object(path: Path, *, limit: int = JSON_MAX) -> dict:
    """A JSON file whose top level must be an object."""
    data = read_json(path, limit=limit)
    if not isinstance(data, dict):
        raise InputFileError(path, f"expected a JSON object, got {type(data).__name__}")
    return data


def read_toml(path: Path) -> dict:
    """A TOML file; invalid TOML is an InputFileError with the parser's line and column."""
    text = read_text(path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputFileError(path, f"invalid TOML: {e}") from None
    except RecursionError:
        raise InputFileError(path, "TOML nested deeper than the parser allows") from None
