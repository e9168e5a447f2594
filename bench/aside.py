"""Puts a store back at the tag before-consolidate without deleting a file.

The store files the tag lacks (what consolidate created) are renamed into
a folder outside the store, then git resets to the tag. Deleting them
instead would make the next run slower than any real one: ext4 without a
journal does not reuse an inode in the minutes after it is freed, so each
file consolidate creates again steps over the freed ones (see
docs/performance.md). A real consolidation does not follow the deletion of
the 1,000 files it is about to create.

    python3 bench/aside.py FOLDER      (run in the store's work tree)
"""
import os
import subprocess
import sys
import time


def paths(*args):
    out = subprocess.run(["git", *args], capture_output=True, check=True).stdout
    return [p.decode() for p in out.split(b"\0") if p]


folder = os.path.join(sys.argv[1], str(time.time_ns()))
added = paths("diff", "-z", "--name-only", "--diff-filter=A", "before-consolidate", "HEAD", "--", "memory")
untracked = paths("ls-files", "-oz", "--exclude-standard", "memory")
for path in added + untracked:
    if os.path.lexists(path):
        os.makedirs(os.path.join(folder, os.path.dirname(path)), exist_ok=True)
        os.rename(path, os.path.join(folder, path))
subprocess.run(["git", "reset", "-q", "--hard", "before-consolidate"], check=True)
