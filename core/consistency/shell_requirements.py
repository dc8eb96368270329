"""What shell tests require (test.sh, helper scripts, and command lines the Python tests run), read through
core/parsers/shell.py: paths tested, read, run or hashed; the test's own writes (redirections, `cp`, `mkdir`);
URLs fetched; users and branches looked up; strings compared with `[ … = … ]` or `grep -F`. A Python heredoc
(`python3 - <<EOF`) is read as Python, at its lines.
"""

from __future__ import annotations

import re

from envqa.core.consistency.model import URLISH, Requirement
from envqa.core.parsers.shell import FILE_TESTS, HEREDOC, Command, blank_heredocs, parse_script

HASHERS = {"sha256sum", "sha1sum", "sha512sum", "md5sum", "cksum", "b2sum", "shasum", "sum"}
READERS = {
    "cat",
    "head",
    "tail",
    "wc",
    "diff",
    "cmp",
    "grep",
    "jq",
    "file",
    "ls",
    "stat",
    "sqlite3",
    "readlink",
    "du",
    "sort",
    "uniq",
    "awk",
    "sed",
    "od",
    "xxd",
    "hexdump",
    "tar",
    "unzip",
    "zcat",
    "source",
    ".",
}
WRITERS = {"mkdir", "touch", "rm", "tee", "chmod", "chown", "ln", "install", "truncate", "rmdir"}
TESTS = {"test", "[", "[["}
USER_CMDS = {
    "su": None,
    "runuser": "-u",
    "sudo": "-u",
    "id": None,
    "getent": "passwd",
    "chsh": None,
    "crontab": "-u",
    "groups": None,
}
BRANCH_VERBS = {"checkout", "switch", "rev-parse", "log", "show", "merge-base", "rev-list", "diff", "ls-tree"}
USER_AT = re.compile(r"^([a-z_][\w.-]{0,31})@([A-Za-z0-9][\w.-]*)(?::|$)")


def _plain(words: list[str]) -> list[str]:
    return [w for w in words[1:] if not w.startswith("-")]


def _paths(words: list[str]) -> list[str]:
    return [w for w in words if w.startswith("/") and "$" not in w and "*" not in w and len(w) > 1]


def _blank(kind: str, value: str, role: str) -> Requirement:
    return Requirement(kind, value, role, "", 0, "")


def _user_names(name: str, words: list[str]) -> list[str]:
    args = words[1:]
    flag = USER_CMDS.get(name)
    if name == "getent":
        return [args[1]] if len(args) >= 2 and args[0] == "passwd" else []
    if flag and flag in args:
        i = args.index(flag)
        return [args[i + 1]] if i + 1 < len(args) else []
    if name in ("su", "id", "groups", "chsh"):
        return [a for a in args if not a.startswith("-")][:1]  # `su -c CMD user`: CMD is dropped below
    return []


def _branches(words: list[str]) -> list[str]:
    if not words or words[0].rsplit("/", 1)[-1] != "git":
        return []
    args = words[1:]
    while len(args) >= 2 and args[0] in ("-C", "--git-dir", "--work-tree", "-c"):
        args = args[2:]
    out = []
    for i, w in enumerate(args):
        if w in ("-b", "--branch") and i + 1 < len(args):
            out.append(args[i + 1])
        for prefix in ("refs/heads/", "origin/", "refs/remotes/origin/"):
            if w.startswith(prefix) and len(w) > len(prefix):
                out.append(w[len(prefix) :])
    plain = [a for a in args[1:] if not a.startswith("-")]
    if args and args[0] in BRANCH_VERBS and plain:
        first = plain[0].split("^")[0].split("~")[0].split(":")[0]
        out += [first] if re.fullmatch(r"[A-Za-z][\w.-]*", first) and first != "HEAD" else []
    return out


def _redirected(redirects: list[tuple[str, str]], write_ops: tuple[str, ...]) -> list[Requirement]:
    """The absolute paths a command's redirections write (`write_ops`) or read."""
    return [_blank("path", t, "write" if op in write_ops else "read") for op, t in redirects if t.startswith("/")]


def _path_roles(name: str, words: list[str], paths: list[str]) -> list[Requirement]:
    """The role of each absolute path argument, decided by the command: a hasher preserves (or, with `-c`, reads
    its list), a test reads or runs, a writer or copy writes its destination, an interpreter runs its script;
    any other command only mentions it."""
    if name in HASHERS and ("-c" in words or "--check" in words):
        return [_blank("path", p, "read") for p in paths]  # a checksum list, read; the files it names are checked
    if name in HASHERS or (name == "stat" and any("%Y" in w or "%y" in w or "%Z" in w for w in words)):
        return [_blank("path", p, "preserve") for p in paths]
    if name in TESTS:
        tested = [
            _blank("path", w, "exec" if words[i] == "-x" else "read")
            for i, w in enumerate(words[1:])
            if w in paths and words[i] in FILE_TESTS
        ]
        return tested + _compared_in_test(words)
    if name in WRITERS or name in ("cp", "mv", "rsync", "curl", "wget"):
        dest = _dest(name, words)
        return [_blank("path", p, "write" if p == dest or name in WRITERS else "read") for p in paths]
    if name in ("python", "python3") and words[1:2] == ["-m"]:  # `python3 -m pip install --find-links /opt/w`:
        return [_blank("path", p, "mention") for p in paths]  # the module reads its own arguments, as `pip` would
    if name in READERS or name in ("python", "python3", "bash", "sh", "node", "ruby", "perl"):
        runs_script = name in ("python", "python3", "bash", "sh")
        return [_blank("path", p, "exec" if runs_script and i == 0 else "read") for i, p in enumerate(paths)]
    return [_blank("path", p, "mention") for p in paths]


def _named_things(name: str, words: list[str]) -> list[Requirement]:
    """The non-path requirements on a command line: a string `grep -F`/`-q` looks for, URLs, users (`su`,
    `sudo -u`, `user@host`), hosts and git branches."""
    out: list[Requirement] = []
    if name == "grep" and ("-F" in words or "-q" in words):
        pat = _plain(words)[:1]
        out += [_blank("compared", p, "ci" if "-i" in words else "cs") for p in pat if not p.startswith("/")]
    out += [_blank("url", w, "fetch") for w in words if URLISH.match(w)]
    out += [_blank("name", u, "user") for u in _user_names(name, words) if re.fullmatch(r"[a-z_][\w.-]{0,31}", u)]
    out += [_blank("name", b, "branch") for b in _branches(words)]
    if name in ("ssh", "scp", "git", "sftp", "rsync"):
        for m in filter(None, (USER_AT.match(w) for w in words[1:])):
            out += [_blank("name", m.group(1), "user"), _blank("name", m.group(2), "host")]
    return out


def command_requirements(words: list[str], redirects: list[tuple[str, str]]) -> list[Requirement]:
    """One simple command's requirements, without file or line (the caller places them)."""
    if not words:  # a bare redirection (`> /app/out`): `>|` is not a write here, as before
        return _redirected(redirects, (">", ">>", "&>"))
    name = words[0].rsplit("/", 1)[-1]
    out = _redirected(redirects, (">", ">>", "&>", ">|"))
    if words[0].startswith("/"):
        out.append(_blank("path", words[0], "exec"))
    out += _path_roles(name, words, _paths(words[1:]))
    return out + _named_things(name, words)


def _dest(name: str, words: list[str]) -> str | None:
    if name in ("curl", "wget"):
        for flag in ("-o", "--output", "-O", "--output-document"):
            if flag in words and words.index(flag) + 1 < len(words):
                return words[words.index(flag) + 1]
        return None
    plain = [w for w in words[1:] if not w.startswith("-")]
    return plain[-1] if plain else None


def _compared_in_test(words: list[str]) -> list[Requirement]:
    out = []
    for i, w in enumerate(words):
        if w in ("=", "==", "!=") and 0 < i < len(words) - 1:
            for side in (words[i - 1], words[i + 1]):
                if "$" not in side and side not in ("]", "]]"):
                    out.append(_blank("compared", side, "cs"))
    return out


def _placed(reqs: list[Requirement], file: str, cmd: Command) -> list[Requirement]:
    return [Requirement(r.kind, r.value, r.role, file, cmd.line, cmd.text) for r in reqs]


def shell_requirements(file: str, text: str) -> list[Requirement]:
    """Every requirement of one shell script's reachable commands (its Python heredocs: `python_heredocs`)."""
    return commands_requirements(file, parse_script(text))


def commands_requirements(file: str, commands: list[Command]) -> list[Requirement]:
    """`shell_requirements` over a script already parsed (the test model's commands, core/task_model/)."""
    out: list[Requirement] = []
    for cmd in commands:
        if cmd.reachable:
            out += _placed(command_requirements(cmd.words, cmd.redirects), file, cmd)
    return out


def python_heredocs(text: str) -> list[tuple[int, str]]:
    """(line before the body, body) of each heredoc fed to python (`python3 - <<EOF`): Python to read as such."""
    _blanked, bodies = blank_heredocs(text)
    lines = text.split("\n")
    out = []
    for start, body in bodies.items():
        opener = lines[start - 1] if 0 < start <= len(lines) else ""
        if HEREDOC.search(opener) and re.search(r"\bpython3?\b", opener):
            out.append((start, body))
    return out
