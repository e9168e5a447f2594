#!/bin/sh
# Claude Code UserPromptSubmit hook: prints the memories relevant to the
# prompt, inside <relevant_memories>, or nothing when none is relevant.
# Reads the hook's JSON (with "prompt" and "cwd") on stdin; never fails the prompt.
exec memoir context --from-hook --budget "${MEMOIR_BUDGET:-800}"
