"""Recording stand-ins for the system commands deploy/install.sh runs.

install.sh changes a whole machine (packages, users, services), which a test cannot do to
the machine it runs on.  With ``NIUNIU_ROOT`` it writes every file under a temporary root;
these fakes, first on PATH, take the place of the commands that would touch the real
system.  They keep just enough state (installed packages, users, enabled units) for the
script's "is it already done?" checks to see what an earlier run did, which is exactly
what the idempotency tests need.  Every call is appended to ``$FAKE_STATE/log.jsonl``.

One file serves every command: it is linked under each name and dispatches on argv[0].

Faults, for the tests of what a failed or cut-off run leaves behind:
  FAKE_FAIL_AT="CMD WORD !WORD"  the call of CMD whose arguments hold every WORD and no
                                  !WORD exits 1 (e.g. "venv-python --editable !--dry-run")
  FAKE_KILL_AT="CMD WORD ..."    that call SIGKILLs the script that made it: a power cut
  FAKE_APT_NEEDS_UPDATE=1        `apt-get install` fails until `apt-get update` has run, as
                                  on a fresh image with empty package lists
  FAKE_NO_ENSUREPIP=1            `python3 -c "import ensurepip"` fails (Debian without
                                  python3-venv)
  FAKE_UID=N                     what `id -u` prints
  FAKE_ARCH=NAME                 what `uname -m` prints (default aarch64)
  FAKE_DPKG_ARCH=NAME            what `dpkg --print-architecture` prints (default: Debian's name
                                  for FAKE_ARCH: arm64, amd64, armhf); armhf with FAKE_ARCH
                                  aarch64 is the 32-bit Raspberry Pi OS on its 64-bit kernel

`runuser -u USER -- CMD ...` runs CMD as this user, and `venv/bin/python [-B] -c CODE ...`
runs CODE with the interpreter running these fakes: the installer's check of the table file
is then the real check of the code tree it names.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

COMMANDS = ("apt-get", "dpkg-query", "dpkg", "useradd", "usermod", "getent", "id", "chown",
            "systemctl", "python3", "uname", "runuser")

STATE = Path(os.environ.get("FAKE_STATE", "/nonexistent"))


def _load(name: str, default):
    path = STATE / name
    return json.loads(path.read_text()) if path.exists() else default


def _save(name: str, value) -> None:
    (STATE / name).write_text(json.dumps(value, indent=1, sort_keys=True))


def _log(cmd: str, args: list[str]) -> None:
    with (STATE / "log.jsonl").open("a") as fh:
        fh.write(json.dumps({"cmd": cmd, "args": args}) + "\n")


def _matches(rule: str, cmd: str, args: list[str]) -> bool:
    words = rule.split()
    if not words or words[0] != cmd:
        return False
    return all(w[1:] not in args if w.startswith("!") else w in args for w in words[1:])


def apt_get(args: list[str]) -> int:
    if "update" in args:
        (STATE / "apt-lists").write_text("updated\n")
    if "install" in args:
        if os.environ.get("FAKE_APT_NEEDS_UPDATE") == "1" and not (STATE / "apt-lists").exists():
            print("E: Unable to locate package " + args[-1], file=sys.stderr)
            return 100
        names = [a for a in args[args.index("install") + 1:] if not a.startswith("-")]
        packages = set(_load("packages.json", []))
        _save("packages.json", sorted(packages | set(names)))
    return 0


def dpkg_query(args: list[str]) -> int:
    name = args[-1]
    if name in _load("packages.json", []):
        print("installed", end="")
        return 0
    print(f"dpkg-query: no packages found matching {name}", file=sys.stderr)
    return 1


def _users() -> dict:
    return _load("users.json", {})


def getent(args: list[str]) -> int:
    database, key = args[0], args[1]
    assert database == "passwd", args
    for name, user in _users().items():
        if key in (name, str(user["uid"])):
            print(f"{name}:x:{user['uid']}:{user['uid']}::{user['home']}:{user['shell']}")
            return 0
    return 2


def useradd(args: list[str]) -> int:
    users = _users()
    name = args[-1]
    if name in users:
        print(f"useradd: user '{name}' already exists", file=sys.stderr)
        return 9
    groups = args[args.index("--groups") + 1].split(",") if "--groups" in args else []
    home = args[args.index("--home-dir") + 1] if "--home-dir" in args else f"/home/{name}"
    shell = args[args.index("--shell") + 1] if "--shell" in args else "/bin/sh"
    users[name] = {"uid": 900 + len(users), "home": home, "shell": shell, "groups": [name, *groups]}
    _save("users.json", users)
    return 0


def usermod(args: list[str]) -> int:
    users = _users()
    name = args[-1]
    group = args[args.index("-G") + 1]
    users[name]["groups"] = sorted(set(users[name]["groups"]) | {group})
    _save("users.json", users)
    return 0


def id_(args: list[str]) -> int:
    if args == ["-u"]:
        print(os.environ.get("FAKE_UID", os.getuid()))
        return 0
    user = _users().get(args[-1])
    if user is None:
        print(f"id: '{args[-1]}': no such user", file=sys.stderr)
        return 1
    print(" ".join(user["groups"]))
    return 0


def systemctl(args: list[str]) -> int:
    enabled = set(_load("enabled.json", []))
    verb = next(a for a in args if not a.startswith("-"))
    unit = args[-1]
    if verb == "is-enabled":
        return 0 if unit in enabled else 1
    if verb == "enable":
        _save("enabled.json", sorted(enabled | {unit}))
    return 0


def python3(args: list[str]) -> int:
    # `python3 -c CHECK` (version, ensurepip) succeeds; otherwise only
    # `python3 -m venv [--system-site-packages] DIR` is expected.
    if args[:1] == ["-c"]:
        return 1 if os.environ.get("FAKE_NO_ENSUREPIP") == "1" and "ensurepip" in args[1] else 0
    assert args[:2] == ["-m", "venv"], args
    venv = Path(args[-1])
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    (venv / "bin" / "python").symlink_to(Path(__file__).resolve())
    system = "true" if "--system-site-packages" in args else "false"
    (venv / "pyvenv.cfg").write_text(f"home = /usr/bin\ninclude-system-site-packages = {system}\n")
    return 0


def venv_python(args: list[str]) -> int:
    if "-c" in args[:2]:   # a check the installer runs with the new code: run it
        os.execv(sys.executable, [sys.executable, *args])
    return 0  # `venv/bin/python -m pip install ...`: recorded only


def runuser(args: list[str]) -> int:
    assert args[0] == "-u" and args[2] == "--", args
    os.execvp(args[3], args[3:])


def uname(args: list[str]) -> int:
    print(os.environ.get("FAKE_ARCH", "aarch64"))
    return 0


_DEBIAN_ARCH = {"aarch64": "arm64", "x86_64": "amd64", "armv7l": "armhf", "armv6l": "armhf"}


def dpkg(args: list[str]) -> int:
    assert args == ["--print-architecture"], args
    machine = os.environ.get("FAKE_ARCH", "aarch64")
    print(os.environ.get("FAKE_DPKG_ARCH", _DEBIAN_ARCH.get(machine, machine)))
    return 0


HANDLERS = {"apt-get": apt_get, "dpkg-query": dpkg_query, "dpkg": dpkg, "useradd": useradd,
            "usermod": usermod, "getent": getent, "id": id_, "chown": lambda args: 0, "systemctl": systemctl,
            "python3": python3, "python": venv_python, "uname": uname, "runuser": runuser}


def main() -> int:
    name = Path(sys.argv[0]).name
    args = sys.argv[1:]
    cmd = "venv-python" if name == "python" else name
    _log(cmd, args)
    if _matches(os.environ.get("FAKE_KILL_AT", ""), cmd, args):
        os.kill(os.getppid(), signal.SIGKILL)
        return 137
    if _matches(os.environ.get("FAKE_FAIL_AT", ""), cmd, args):
        print(f"{cmd}: failing as FAKE_FAIL_AT asks", file=sys.stderr)
        return 1
    return HANDLERS[name](args)


if __name__ == "__main__":
    sys.exit(main())
