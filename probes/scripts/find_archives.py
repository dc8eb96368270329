"""Runs INSIDE the environment's image (python3, stdlib only): encrypted files and archives whose name,
path or member names point at a solution or expected outputs. Prints one JSON list on stdout.

stdin (optional) is a JSON list of {value, origin}: published adapter passwords (core/adapter_passwords.toml).
Each encrypted hit is tried with them (openssl enc, Fernet as TheAgentCompany uses it, zip, BrowseComp-style
XOR, gpg); the one that opens it is reported with its origin.

Files a Debian package installed are skipped (dpkg's lists, merged /usr accounted for), as are system
library trees: a wheel in site-packages named `solution` is not a leaked answer.
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

HINT = re.compile(r"(solution|solve|answers?|expected|golden|oracle|ground[_-]?truth|reference[_-]?out)", re.I)
SKIP = ("/proc", "/sys", "/dev", "/run", "/usr/lib", "/usr/share", "/usr/include", "/usr/local/lib", "/var/lib/dpkg",
        "/var/lib/apt", "/var/cache", "/var/log", "/tests", "/solution", "/logs", "/etc/ssl", "/root/.cache")
ENC_SUFFIX = (".enc", ".aes", ".gpg", ".pgp", ".age", ".crypt", ".encrypted")
ARCHIVE_SUFFIX = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".7z", ".rar", ".gz")

owned = set()
for lst in glob.glob("/var/lib/dpkg/info/*.list"):
    with open(lst, errors="replace") as fh:
        owned.update(line.strip() for line in fh)
owned |= {os.path.realpath(p) for p in list(owned) if p.startswith(("/bin/", "/sbin/", "/lib"))}


def kind_of(path, head):
    name = path.lower()
    if head.startswith(b"Salted__") or head.startswith(b"U2FsdGVkX1"):
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
    except Exception:
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
    """Whether `key` opens the file (no file is written: only the verdict is reported)."""
    with open(path, "rb") as fh:
        data = fh.read(64 * 1024 * 1024)
    openssl, gpg = shutil.which("openssl"), shutil.which("gpg")
    if kind == "openssl-encrypted" and openssl:
        armored = data.startswith(b"U2FsdGVkX1")
        for opts in (["-pbkdf2"], ["-md", "sha256"], ["-md", "md5"]):
            out = run([openssl, "enc", "-d", "-aes-256-cbc", *opts, "-pass", "pass:" + key] + (["-a"] if armored else []), data)
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
        except Exception:
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


try:
    KEYS = json.loads(sys.stdin.read() or "[]") if not sys.stdin.isatty() else []
except ValueError:
    KEYS = []

hits = []
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if not os.path.join(root, d).startswith(SKIP) and d != "__pycache__"]
    for f in files:
        p = os.path.join(root, f)
        if p in owned or os.path.islink(p) or not os.path.isfile(p):
            continue
        try:
            if os.path.getsize(p) > 256 * 1024 * 1024:
                continue
            with open(p, "rb") as fh:
                head = fh.read(512)
        except OSError:
            continue
        kind, encrypted = kind_of(p, head)
        if kind is None:
            continue
        inner = members(p, kind)
        pointing = [m for m in inner if HINT.search(m)]
        if HINT.search(p) or pointing:
            opened = next((k for k in KEYS if encrypted and opens(p, kind, k["value"])), None)
            hits.append({"path": p, "kind": kind, "encrypted": encrypted, "hint": HINT.search(p).group(0)
                         if HINT.search(p) else None, "members": pointing[:5], "opened_with": opened})
print(json.dumps(hits[:50]))
