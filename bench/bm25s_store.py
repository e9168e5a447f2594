#!/usr/bin/env python3
"""A BM25 alternative to memoir's recall, for bench/run.sh: every memory
indexed once by bm25s (https://github.com/xhluca/bm25s, sparse matrices on
numpy/scipy), the index saved, then each query a new process that loads it
(memory-mapped) and retrieves the top 10.

    bm25s_store.py build <store> <dir>     # once: index the memory files
    bm25s_store.py search <dir> WORD...    # a query: load, retrieve, top 10

A memory's text is its name, description and body, tokenized by bm25s's
default (lowercased words of two or more characters, no stemming).
"""
import json
import os
import sys

from json_store import main, memories


def build(store, out):
    import bm25s

    keys, texts = zip(
        *((m["key"], f"{m['name']} {m['description']} {m['body']}") for m in memories(store))
    )
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(list(texts), show_progress=False), show_progress=False)
    retriever.save(out)
    with open(os.path.join(out, "keys.json"), "w", encoding="utf-8") as f:
        json.dump(keys, f, ensure_ascii=False)


def search(path, words):
    import bm25s

    retriever = bm25s.BM25.load(path, mmap=True)
    with open(os.path.join(path, "keys.json"), encoding="utf-8") as f:
        keys = json.load(f)
    query = bm25s.tokenize(" ".join(words), return_ids=False, show_progress=False)
    docs, scores = retriever.retrieve(query, k=10, show_progress=False)
    for doc, score in zip(docs[0], scores[0]):
        if score > 0:
            print(f"{score:.2f} {keys[doc]}")


if __name__ == "__main__":
    main(__doc__, build, search)
