"""Runs INSIDE the environment's image (python3, stdlib only): the probes' searches of the image's file system.

One script, one walk and one notion of "a file a Debian package installed", three questions:

  python3 image_scan.py archives [ROOT]   encrypted files and archives whose name, path or member names point
        at a solution or expected outputs (probes/static/image_checks.py: encrypted-solution-in-image).
        stdin (optional): a JSON list of {value, origin}, published adapter passwords
        (core/adapter_passwords.toml); each encrypted hit is tried with them (openssl enc, Fernet as
        TheAgentCompany uses it, zip, BrowseComp-style XOR, gpg) and the one that opens it is reported.
  python3 image_scan.py literals [ROOT]   stdin {"literals": [...], "commands": [...]}: which files the task
        added contain each literal the tests compare against, and which commands test.sh runs resolve to a
        file no Debian package installed (test-literals-in-image, verifier-runs-image-file).
  python3 image_scan.py copies [ROOT]     stdin {"files": [{path, size, sha256}], "skip": [...], "exclude": [...]}:
        image files byte-identical to the oracle's outputs (probes/oracle_state.py: solution-output-in-image).

Each prints one JSON document on stdout. ROOT (default /) is the tree to treat as the image's /: skip lists,
package ownership and reported paths are image paths, so the scan can be run on an unpacked tree on the host.
Files a Debian package installed are skipped (dpkg's lists, merged /usr accounted for), as are system library
trees: a wheel in site-packages named `solution` is not a leaked answer.
"""

import base64
import glob
import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

ROOT = "/"

HINT = re.compile(r"(solution|solve|answers?|expected|golden|oracle|ground[_-]?truth|reference[_-]?out)", re.I)
ARCHIVE_SKIP = (
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/usr/lib",
    "/usr/share",
    "/usr/include",
    "/usr/local/lib",
    "/var/lib/dpkg",
    "/var/lib/apt",
    "/var/cache",
    "/var/log",
    "/tests",
    "/solution",
    "/logs",
    "/etc/ssl",
    "/root/.cache",
)
LITERAL_SKIP = (
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/var/lib/dpkg",
    "/var/lib/apt",
    "/var/cache",
    "/var/log",
    "/tmp",
    "/etc/ld.so.cache",
)
ENC_SUFFIX = (".enc", ".aes", ".gpg", ".pgp", ".age", ".crypt", ".encrypted")
ARCHIVE_SUFFIX = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".7z", ".rar", ".gz")


def host(path):
    """Where the image path `path` is on this machine."""
    return path if ROOT == "/" else os.path.join(ROOT, path.lstrip("/"))


def image(path):
    """The image path of the host path `path` (the inverse of host)."""
    if ROOT == "/":
        return path
    rel = os.path.relpath(path, ROOT)
    return "/" if rel == "." else "/" + rel


def realpath(path):
    return image(os.path.realpath(host(path)))


def walk(skip, prune_pycache=True):
    """Every file's image path under ROOT, except under the `skip` prefixes."""
    for root, dirs, files in os.walk(host("/")):
        root = image(root)
        dirs[:] = [
            d for d in dirs if not os.path.join(root, d).startswith(skip) and not (prune_pycache and d == "__pycache__")
        ]
        for f in files:
            yield os.path.join(root, f)


def package_owned():
    """Paths a Debian package installed. Merged /usr (and any symlinked directory): dpkg records /bin/grep, the
    file is /usr/bin/grep; compare real paths: every recorded path is also owned under the path it resolves to."""
    owned = set()
    for lst in glob.glob(host("/var/lib/dpkg/info/*.list")):
        with open(lst, errors="replace") as fh:
            owned.update(line.strip() for line in fh)
    owned |= {realpath(p) for p in list(owned) if p.startswith(("/bin/", "/sbin/", "/lib"))}
    return owned


# --- archives -----------------------------------------------------------------------------------------------


def kind_of(path, head):
    name = path.lower()
    if head.startswith((b"Salted__", b"U2FsdGVkX1")):
        return "openssl-encrypted", True
    if head.startswith(b"gAAAAA"):
        return "fernet-encrypted", True
    if head.startswith(b"age-encryption.org/v1"):
        return "age-encrypted", True
    if b"-----BEGIN PGP MESSAGE" in head or (name.endswith((".gpg", ".pgp")) and head[:1] and head[0] & 0x80):
        return "gpg-encrypted", True
    if head.startswith(b"PK\x03\x04"):
        return "zip", bool(head[6] & 1) if len(head) > 6 else False
    if head.startswith(b"7z\xbc\xaf\x27\x1c"):
        return "7z", False
    if head.startswith(b"Rar!\x1a\x07"):
        return "rar", False
    if name.endswith(ARCHIVE_SUFFIX) and (head.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ")) or name.endswith(".tar")):
        return "tar/compressed", False
    if name.endswith(ENC_SUFFIX):
        return "encrypted (by its name)", True
    return None, False


def members(path, kind):
    try:
        if kind == "zip":
            with zipfile.ZipFile(path) as z:
                return z.namelist()[:2000]
        if kind == "tar/compressed" and tarfile.is_tarfile(path):
            with tarfile.open(path) as t:
                return t.getnames()[:2000]
    except Exception:  # noqa: BLE001 - an unreadable archive lists nothing
        pass
    return []


def plausible(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data[:2] in (b"PK", b"\x1f\x8b") or data[:3] == b"BZh"  # an archive inside
    return bool(text) and sum(c.isprintable() or c in "\n\r\t" for c in text) >= 0.95 * len(text)


def run(cmd, data=None):
    try:
        r = subprocess.run(cmd, input=data, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def fernet_opens(token, key):
    """Fernet (version 0x80 | time | iv | AES-128-CBC | HMAC-SHA256): the HMAC proves the key without AES."""
    try:
        raw = base64.urlsafe_b64decode(token.strip())
    except ValueError:
        return False
    if len(raw) < 57 or raw[0] != 0x80:
        return False
    keys = [key.encode().ljust(32, b"\0")[:32], hashlib.sha256(key.encode()).digest()]
    try:
        keys.append(base64.urlsafe_b64decode(key)) if len(key) == 44 else None
    except ValueError:
        pass
    for k in keys:
        if len(k) == 32 and hmac.compare_digest(hmac.new(k[:16], raw[:-32], hashlib.sha256).digest(), raw[-32:]):
            openssl = shutil.which("openssl")
            if openssl is None:
                return True
            plain = run([openssl, "enc", "-d", "-aes-128-cbc", "-K", k[16:].hex(), "-iv", raw[9:25].hex()], raw[25:-32])
            return plain is not None and plausible(plain)
    return False


def opens(path, kind, key):
    """Whether `key` opens the file at host path `path` (no file is written: only the verdict is reported)."""
    with open(path, "rb") as fh:
        data = fh.read(64 * 1024 * 1024)
    openssl, gpg = shutil.which("openssl"), shutil.which("gpg")
    if kind == "openssl-encrypted" and openssl:
        armored = data.startswith(b"U2FsdGVkX1")
        for opts in (["-pbkdf2"], ["-md", "sha256"], ["-md", "md5"]):
            out = run(
                [openssl, "enc", "-d", "-aes-256-cbc", *opts, "-pass", "pass:" + key] + (["-a"] if armored else []),
                data,
            )
            if out is not None and plausible(out):
                return True
        return False
    if kind == "fernet-encrypted":
        return fernet_opens(data, key)
    if kind == "zip":
        try:
            with zipfile.ZipFile(path) as z:
                z.setpassword(key.encode())
                return z.testzip() is None
        except Exception:  # noqa: BLE001 - a wrong password raises many types
            return False
    if kind == "gpg-encrypted" and gpg:
        out = run([gpg, "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", key, "-d", path])
        return out is not None
    if kind == "encrypted (by its name)":  # BrowseComp-style: base64 text XORed with sha256(password) repeated
        try:
            raw = base64.b64decode(data.strip(), validate=True)
        except ValueError:
            return False
        pad = hashlib.sha256(key.encode()).digest()
        return bool(raw) and plausible(bytes(b ^ pad[i % 32] for i, b in enumerate(raw)))
    return False


def archives(stdin):
    try:
        keys = json.loads(stdin.read() or "[]") if not stdin.isatty() else []
    except ValueError:
        keys = []
    owned = package_owned()
    hits = []
    for p in walk(ARCHIVE_SKIP):
        h = host(p)
        if p in owned or os.path.islink(h) or not os.path.isfile(h):
            continue
        try:
            if os.path.getsize(h) > 256 * 1024 * 1024:
                continue
            with open(h, "rb") as fh:
                head = fh.read(512)
        except OSError:
            continue
        kind, encrypted = kind_of(p, head)
        if kind is None:
            continue
        inner = members(h, kind)
        pointing = [m for m in inner if HINT.search(m)]
        if HINT.search(p) or pointing:
            opened = next((k for k in keys if encrypted and opens(h, kind, k["value"])), None)
            hits.append(
                {
                    "path": p,
                    "kind": kind,
                    "encrypted": encrypted,
                    "hint": HINT.search(p).group(0) if HINT.search(p) else None,
                    "members": pointing[:5],
                    "opened_with": opened,
                }
            )
        elif encrypted:  # a neutral name (the maze task's /app/encrypted.enc): only a *published* key convicts it
            published = [k for k in keys if k.get("origin", "").startswith("the public default")]
            opened = next((k for k in published if opens(h, kind, k["value"])), None)
            if opened:
                hits.append(
                    {"path": p, "kind": kind, "encrypted": True, "hint": None, "members": [], "opened_with": opened}
                )
    return hits[:50]


# --- literals and commands ----------------------------------------------------------------------------------


def literals(want):
    owned = package_owned()
    hits = {}
    for p in walk(LITERAL_SKIP):
        h = host(p)
        if p in owned or os.path.islink(h) or p.endswith((".pyc", ".so")):
            continue
        try:
            if os.path.getsize(h) > 8 * 1024 * 1024:
                continue
            with open(h, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if b"\0" in data[:1024]:
            continue
        text = data.decode("utf-8", "replace")
        for lit in want["literals"]:
            if lit in text:
                hits.setdefault(lit, []).append(p)
    res = {}
    for cmd in want["commands"] if owned else []:  # no package database: cannot tell
        path = (
            cmd
            if cmd.startswith("/")
            else next(
                (
                    os.path.join(d, cmd)
                    for d in os.environ.get("PATH", "").split(":")
                    if os.path.isfile(host(os.path.join(d, cmd)))
                ),
                None,
            )
        )
        real = realpath(path) if path else None
        if path and os.path.isfile(host(path)) and real not in owned and path not in owned:
            res[cmd] = path
    return {"literals": hits, "commands": res}


# --- copies -------------------------------------------------------------------------------------------------


def copies(want):
    exclude = set(want["exclude"])
    hits = []
    for p in walk(tuple(want["skip"]), prune_pycache=False):
        h = host(p)
        if p in exclude or os.path.islink(h) or not os.path.isfile(h):
            continue
        try:
            size = os.path.getsize(h)
            for w in want["files"]:
                if w["size"] == size:
                    with open(h, "rb") as fh:
                        if hashlib.sha256(fh.read()).hexdigest() == w["sha256"]:
                            hits.append([w["path"], p])
        except OSError:  # unreadable (or gone meanwhile): one file, not the whole scan
            continue
    return hits


def main(argv):
    global ROOT
    mode = argv[1] if len(argv) > 1 else ""
    ROOT = os.path.abspath(argv[2]) if len(argv) > 2 else "/"
    if mode == "archives":
        out = archives(sys.stdin)
    elif mode == "literals":
        out = literals(json.load(sys.stdin))
    elif mode == "copies":
        out = copies(json.load(sys.stdin))
    else:
        raise SystemExit("usage: image_scan.py archives|literals|copies [ROOT]")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)
