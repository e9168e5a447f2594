#!/usr/bin/env python3
"""Context evaluation: what `memoir context` injects for the prompts an agent
harness sends (the user's message as typed), and how `memoir recall` ranks
for the same prompts, next to recall_eval's BM25 baseline.

    python3 bench/context_eval.py [--memoir PATH] [--json] [--by-kind]
                                  [--show-misses] [FILE ...]

A FILE is a prompts YAML list (`{query, relevant: [key, ...], kind}`, the
format bench/recall_eval.py reads; `relevant: []` means no memory helps and
memoir should inject nothing). Its set is the file's parent folder, whose
`memory/<scope>/<slug>.md` files make the store. Default FILEs:
fixtures/recall-agent/prompts-dev.yaml, prompts-test.yaml and
prompts-holdout.yaml. One temporary
store per set (recall_eval.Store: pinned HOME, git config, MEMOIR_NOW;
MEMOIR_EVAL_CONFIG, if set, is copied in as the store's config).

Per prompt:
  context  `memoir --json context -- P`; reads `text`, `tokens`, `memories`
  recall   `memoir --json recall --limit 10 -- P`; reads `hits[].key`
           (notes, key null, are skipped)
  bm25     recall_eval.BM25 over the same memory files, top 10

Context metrics over prompts with relevant keys:
  hit      share where at least one relevant key was injected
  prec     over prompts that injected at least one key: share of the
           injected keys that are relevant, averaged per prompt
  µprec    the same pooled over all injected keys
  mem/inj  mean number of keys per injection (prompts that injected)
  tok/inj  mean `tokens` per injection
  silent   share where nothing was injected
over prompts with `relevant: []`:
  abst     share where nothing was injected (`memories` empty, `text` blank)
  u-tok    mean `tokens` of those false injections
Recall and bm25 over prompts with relevant keys: hit@3, hit@5, MRR@10.

A prompt where memoir exits non-zero or prints invalid JSON counts as an
injection/hit of nothing and is listed under "errors".
"""
import argparse, json, os, signal, statistics, sys, time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import recall_eval  # noqa: E402

ROOT = BENCH.parent
DEFAULT_FILES = [
    ROOT / "fixtures/recall-agent/prompts-dev.yaml",
    ROOT / "fixtures/recall-agent/prompts-test.yaml",
    ROOT / "fixtures/recall-agent/prompts-holdout.yaml",
]


def mean(xs):
    xs = [float(x) for x in xs]
    return round(sum(xs) / len(xs), 3) if xs else None


def keys_of(items):
    """`memories` / hit keys, as strings; entries may be strings or objects."""
    out = []
    for it in items or []:
        key = it.get("key") if isinstance(it, dict) else it
        if key:
            out.append(key)
    return out


def run_prompt(store, bm25, q):
    p = q["query"]
    q["errors"] = []
    t = time.perf_counter()
    try:
        ctx = json.loads(store.run("--json", "context", "--", p))
        q["injected"] = keys_of(ctx.get("memories"))
        q["text"] = ctx.get("text") or ""
        q["tokens"] = ctx.get("tokens") or 0
    except (RuntimeError, ValueError) as e:
        q["errors"].append(f"context: {e}")
        q["injected"], q["text"], q["tokens"] = [], "", 0
    q["ms_context"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    try:
        rec = json.loads(store.run("--json", "recall", "--limit", "10", "--", p))
        q["recall"] = keys_of(rec.get("hits"))
    except (RuntimeError, ValueError) as e:
        q["errors"].append(f"recall: {e}")
        q["recall"] = []
    q["ms_recall"] = (time.perf_counter() - t) * 1000
    q["bm25"] = [k for k, _ in bm25.search(p, limit=10)]
    q["did_inject"] = bool(q["injected"]) or bool(q["text"].strip())


def rank_metrics(ans, system):
    m = {}
    for k in (3, 5):
        m[f"{system}@{k}"] = mean(any(key in q["relevant"] for key in q[system][:k]) for q in ans)
    m[f"{system}-MRR"] = mean(next((1 / i for i, key in enumerate(q[system][:10], 1) if key in q["relevant"]), 0)
                              for q in ans)
    return m


def metrics(qs):
    ans = [q for q in qs if q["relevant"]]
    irr = [q for q in qs if not q["relevant"]]
    inj = [q for q in ans if q["did_inject"]]
    keyed = [q for q in ans if q["injected"]]
    false_inj = [q for q in irr if q["did_inject"]]
    pooled = [key in q["relevant"] for q in keyed for key in q["injected"]]
    m = {
        "n": len(qs), "n_rel": len(ans), "n_unrel": len(irr),
        "hit": mean(any(k in q["relevant"] for k in q["injected"]) for q in ans),
        "prec": mean(sum(k in q["relevant"] for k in q["injected"]) / len(q["injected"]) for q in keyed),
        "µprec": mean(pooled),
        "mem/inj": mean(len(q["injected"]) for q in inj),
        "tok/inj": mean(q["tokens"] for q in inj),
        "silent": mean(not q["did_inject"] for q in ans),
        "abst": mean(not q["did_inject"] for q in irr),
        "u-tok": mean(q["tokens"] for q in false_inj),
        "errors": sum(1 for q in qs if q["errors"]),
    }
    m.update(rank_metrics(ans, "recall"))
    m.update(rank_metrics(ans, "bm25"))
    return m


CTX_COLS = ("n_rel", "hit", "prec", "µprec", "mem/inj", "tok/inj", "silent", "n_unrel", "abst", "u-tok")
RANK_COLS = ("recall@3", "recall@5", "recall-MRR", "bm25@3", "bm25@5", "bm25-MRR", "errors")
INT_COLS = {"n", "n_rel", "n_unrel", "errors"}


def table(rows, first, cols):
    w = max(len(first), *(len(l) for l, _ in rows))
    cw = max(8, *(len(c) for c in cols))
    lines = [f"{first:<{w}}  " + "  ".join(f"{c:>{cw}}" for c in cols)]
    for label, r in rows:
        def cell(c):
            v = r.get(c)
            if v is None:
                return f"{'-':>{cw}}"
            if c in INT_COLS:
                return f"{v:>{cw}d}"
            if c in ("tok/inj", "u-tok"):
                return f"{v:>{cw}.1f}"
            if c == "mem/inj":
                return f"{v:>{cw}.2f}"
            return f"{v:>{cw}.3f}"
        lines.append(f"{label:<{w}}  " + "  ".join(cell(c) for c in cols))
    return "\n".join(lines)


def print_tables(rows, first):
    print("context:")
    print(table(rows, first, CTX_COLS))
    print("recall / bm25 (relevant prompts):")
    print(table(rows, first, RANK_COLS))


def misses(qs):
    out = []
    for q in qs:
        short = q["query"].replace("\n", " ")[:80]
        inj = ", ".join(q["injected"]) or ("(text only)" if q["did_inject"] else "(nothing)")
        rel = set(q["relevant"])
        err = "".join(f"\n  ERROR: {e}" for e in q["errors"])
        if rel:
            extra = [k for k in q["injected"] if k not in rel]
            if not rel & set(q["injected"]):
                tag = "MISS"
            elif extra:
                tag = "NOISE"
            else:
                continue
            out.append(f"{tag} [{q['kind']}] {short}\n  injected: {inj}\n  relevant: {', '.join(q['relevant'])}"
                       f"\n  recall:   {', '.join(q['recall'][:5]) or '(nothing)'}{err}")
        elif q["did_inject"] or q["errors"]:
            out.append(f"INJECTED [{q['kind']}] {short}\n  injected: {inj} ({q['tokens']} tokens)"
                       f"\n  relevant: (none){err}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", metavar="FILE", type=Path, default=DEFAULT_FILES)
    release = ROOT / "target/release/memoir"
    ap.add_argument("--memoir", default=str(release if release.exists() else ROOT / "target/debug/memoir"))
    ap.add_argument("--json", action="store_true", help="print all results as one JSON object")
    ap.add_argument("--by-kind", action="store_true", help="also break the metrics down by prompt kind")
    ap.add_argument("--show-misses", action="store_true",
                    help="list prompts that missed, injected irrelevant keys, or injected when nothing is relevant")
    args = ap.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    memoir = os.path.abspath(args.memoir)
    if not os.path.exists(memoir):
        sys.exit(f"no memoir binary at {memoir}")

    by_set = {}
    for f in args.files:
        f = f.resolve()
        by_set.setdefault(f.parent, []).append(f)

    per_file, all_qs, failed = {}, [], False
    for set_dir, files in by_set.items():
        docs = recall_eval.load_memories(set_dir / "memory")
        bm25 = recall_eval.BM25(docs)
        try:
            store = recall_eval.Store(memoir, set_dir)
        except (RuntimeError, OSError) as e:
            print(f"{set_dir}: {e}", file=sys.stderr)
            failed = True
            continue
        try:
            for f in files:
                qs = recall_eval.load_questions(f)
                for q in qs:
                    for key in q["relevant"]:
                        if key not in docs:
                            print(f"warning: {f.name}: {q['query'][:60]!r}: no memory {key}", file=sys.stderr)
                    run_prompt(store, bm25, q)
                    q["set"] = os.path.relpath(set_dir, ROOT)
                label = os.path.relpath(f, ROOT)
                per_file[label] = {"memories": len(docs), "qs": qs}
                all_qs += qs
        finally:
            store.close()

    if not per_file:
        return 1
    groups = list(per_file.items())
    if len(groups) > 1:
        groups.append(("overall", {"memories": None, "qs": all_qs}))
    kinds = lambda qs: sorted({q["kind"] for q in qs})
    results = {
        label: {
            "memories": g["memories"],
            "counts": {k: sum(1 for q in g["qs"] if q["kind"] == k) for k in kinds(g["qs"])},
            "metrics": metrics(g["qs"]),
            "by_kind": {k: metrics([q for q in g["qs"] if q["kind"] == k]) for k in kinds(g["qs"])},
            "median_ms": {"context": round(statistics.median(q["ms_context"] for q in g["qs"]), 1),
                          "recall": round(statistics.median(q["ms_recall"] for q in g["qs"]), 1)},
        }
        for label, g in groups
    }
    errors = [q for q in all_qs if q["errors"]]

    if args.json:
        prompts = [{k: q[k] for k in ("file", "kind", "query", "relevant", "injected", "tokens", "recall", "bm25",
                                       "errors")} for q in all_qs]
        print(json.dumps({"memoir": memoir, "results": results, "prompts": prompts}, ensure_ascii=False, indent=2))
        return 1 if failed or errors else 0

    print(f"memoir: {os.path.relpath(memoir, ROOT) if memoir.startswith(str(ROOT)) else memoir}")
    for label, r in results.items():
        counts = ", ".join(f"{k} {n}" for k, n in r["counts"].items())
        mem = f"; {r['memories']} memories" if r["memories"] else ""
        print(f"  {label}{mem}: {counts}")
    print()
    print_tables([(label, r["metrics"]) for label, r in results.items()], "file")
    print("median ms per prompt: " + "; ".join(
        f"{label} context {r['median_ms']['context']}, recall {r['median_ms']['recall']}" for label, r in results.items()))
    if args.by_kind:
        for label, r in results.items():
            print(f"\n-- by kind: {label}")
            print_tables(list(r["by_kind"].items()), "kind")
    if args.show_misses:
        for label, g in per_file.items():
            print(f"\n-- misses: {label} (MISS: no relevant key injected; NOISE: relevant and irrelevant keys; "
                  f"INJECTED: something injected for an unrelated prompt)")
            print("\n".join(misses(g["qs"])) or "(none)")
    if errors:
        print(f"\nerrors ({len(errors)} prompts):", file=sys.stderr)
        for q in errors:
            print(f"  [{q['file']}] {q['query'][:60]!r}: {'; '.join(q['errors'])}", file=sys.stderr)
    return 1 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main())
