#!/usr/bin/env python3
"""Runs the README's commands as a new user would type them (ctest: "readme: ...").

Every line of a README code block that starts with "$ " is a command. Each runs with bash in a fresh
folder whose entries link to the repository's top level (so files a command writes land there, not in the
tree), with the build folder's binaries where the README says build/. A command must exit 0 within its
time limit. Commands the README itself says take minutes (layout searches and capacity plans: --search,
--gpus) are listed as skipped, by name, not run.

usage: check_readme_commands.py REPO BUILD_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

SLOW = ("--search", "--gpus")
LIMIT_S = 300

repo, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
text = open(os.path.join(repo, "README.md"), encoding="utf-8").read()
commands = []
for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
    commands += [line[2:].strip() for line in block.splitlines() if line.startswith("$ ")]
if not commands:
    sys.exit("README.md: no '$ ' commands found in its code blocks")

failed = 0
with tempfile.TemporaryDirectory(prefix="readme-") as work:
    for entry in os.listdir(repo):
        if entry not in ("build", ".git"):
            os.symlink(os.path.join(repo, entry), os.path.join(work, entry))
    os.symlink(build, os.path.join(work, "build"))
    for cmd in commands:
        if any(flag in cmd for flag in SLOW):
            print("skipped (minutes, see the README):", cmd)
            continue
        try:
            r = subprocess.run(["bash", "-c", cmd], cwd=work, capture_output=True, text=True, timeout=LIMIT_S)
            ok = r.returncode == 0
            why = "exit %d: %s" % (r.returncode, (r.stderr or r.stdout).strip().splitlines()[-1:] )
        except subprocess.TimeoutExpired:
            ok, why = False, "did not finish in %d s" % LIMIT_S
        print(("ok      " if ok else "FAILED  ") + cmd + ("" if ok else "  -> " + why))
        failed += not ok
print("%d of %d README commands failed" % (failed, len(commands)) if failed else "all README commands ran")
sys.exit(1 if failed else 0)
