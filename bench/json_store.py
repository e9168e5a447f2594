#!/usr/bin/env python3
"""The simplest alternative to memoir's recall, for bench/run.sh: every memory
in one JSON file, searched by keyword (what many agent memory tools do).

    json_store.py build <store> <out.json>     # once: gather the memory files
    json_store.py search <out.json> WORD...    # a query: load, score, top 10

A memory's score is how many of the query's words occur in its name,
description and body (lowercased substring match), ties by name.
"""
import json
import os
import sys


def memories(store):
    """Every memory file of the store's three scopes, as a dict of its key,
    name, description and body (bench/bm25s_store.py reads them too)."""
    for scope in ("user", "project", "task"):
        folder = os.path.join(store, "memory", scope)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".md"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                text = f.read()
            _, front, body = text.split("---\n", 2)
            fields = dict(
                line.split(": ", 1) for line in front.splitlines() if ": " in line
            )
            yield {
                "key": f"{scope}/{name[:-3]}",
                "name": fields.get("name", ""),
                "description": fields.get("description", ""),
                "body": body,
            }


def build(store, out):
    with open(out, "w", encoding="utf-8") as f:
        json.dump(list(memories(store)), f, ensure_ascii=False)


def search(path, words):
    with open(path, encoding="utf-8") as f:
        memories = json.load(f)
    words = [w.lower() for w in words]
    scored = []
    for m in memories:
        text = f"{m['name']} {m['description']} {m['body']}".lower()
        score = sum(1 for w in words if w in text)
        if score:
            scored.append((-score, m["name"], m["key"]))
    scored.sort()
    for score, _, key in scored[:10]:
        print(f"{-score} {key}")


def main(usage, build, search):
    """`build <store> <out>` or `search <index> WORD...`, else the usage."""
    if len(sys.argv) >= 4 and sys.argv[1] == "build":
        build(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "search":
        search(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(usage)


if __name__ == "__main__":
    main(__doc__, build, search)
