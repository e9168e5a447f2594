#!/bin/sh
# Claude Code SessionStart hook: prints the hot memory (MEMORY.md's index,
# open conflicts, today's and yesterday's notes) for Claude to see when a
# session begins. Reads the hook's JSON on stdin; never fails the session.
exec memoir context --from-hook --budget "${MEMOIR_BUDGET:-1500}"
