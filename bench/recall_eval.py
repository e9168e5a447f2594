#!/usr/bin/env python3
"""Recall evaluation: how well `memoir recall` finds the memories a question
needs, and whether it stays silent when nothing is relevant, next to a plain
BM25 baseline.

    python3 bench/recall_eval.py [--memoir PATH] [--k 5] [--show-misses]
                                 [--by-kind] [--by-file] [--json] [SET ...]

A SET is a folder with `memory/<scope>/<slug>.md` (memoir memory files) and
question files `questions*.yaml`, `queries.yaml`, `paraphrases.yaml`, each a
YAML list of `{query: str, relevant: [key, ...], kind: str}` (`kind`
optional; `relevant: []` means nothing is relevant: the tool must abstain).
Default SETs: fixtures/recall and fixtures/recall-long. Default memoir:
target/release/memoir if it exists, else target/debug/memoir.

Per SET: a temporary store (`git init`, `memoir init`, the memory files
copied in, `memoir record`; pinned HOME, GIT_CONFIG_GLOBAL, MEMOIR_NOW,
MEMOIR_ACTOR), then per question three systems:

  memoir        `memoir --json recall --limit 10 -- Q` (default threshold:
                the best 10 matches, the relevant first; abstained when
                `answered` is false); for irrelevant questions also
                `memoir context -- Q` (abstained when it prints nothing:
                column ctx-abst)
  memoir-min0   the same with `--min-score 0`
  bm25          Okapi BM25 in this script (k1 1.2, b 0.75, idf
                ln(1 + (N - df + .5)/(df + .5))) over name + description +
                body; lowercased letter/digit runs, English stop words
                dropped, no stemming, CJK runs cut into overlapping bigrams;
                no threshold: the top 10 with score > 0

Metrics over answerable questions: hit@1/3/5 (a relevant key in the top k),
R@5 and R@10 (share of the relevant keys in the top k, averaged), MRR (1/rank
of the first relevant key in the top 10, else 0); over irrelevant ones:
abst (share answered with nothing). `--k` sets which cut-off --show-misses
uses (default 5). Standard library only (the YAML files are read by a small
parser for exactly this list format).
"""
import argparse, json, math, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION_GLOBS = ("questions*.yaml", "queries.yaml", "paraphrases.yaml")

# ---- the YAML subset: a list of flat mappings, flow lists, quoted scalars
def scalar(s):
    s = s.strip()
    if s.startswith('"'):
        return json.loads(s)
    if s.startswith("'"):
        return s[1:-1].replace("''", "'")
    return s

def flow_list(s):
    s = s.strip()
    assert s.startswith("[") and s.endswith("]"), f"not a flow list: {s}"
    items = re.findall(r'"(?:[^"\\]|\\.)*"|\'(?:[^\']|\'\')*\'|[^,\s][^,]*', s[1:-1])
    return [scalar(i) for i in items if i.strip()]

def load_questions(path):
    out, cur = [], None
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^(- |  )(\w+):\s*(.*)$", line)
        if not m:
            sys.exit(f"{path}:{n}: cannot parse: {line}")
        if m.group(1) == "- ":
            cur = {"file": path.name}
            out.append(cur)
        key, val = m.group(2), m.group(3)
        cur[key] = flow_list(val) if key == "relevant" else scalar(val)
    for q in out:
        q.setdefault("kind", "irrelevant" if not q.get("relevant") else "unlabeled")
    return out

def load_memories(mem_dir):
    """{key: text} with name + description + body of every memory file."""
    docs = {}
    for f in sorted(mem_dir.glob("*/*.md")):
        text = f.read_text(encoding="utf-8")
        _, front, body = text.split("---\n", 2) if text.startswith("---\n") else ("", "", text)
        fields = dict(l.split(":", 1) for l in front.splitlines() if ":" in l and not l.startswith(" "))
        name, desc = scalar(fields.get("name", "")), scalar(fields.get("description", ""))
        docs[f"{f.parent.name}/{f.stem}"] = f"{name}\n{desc}\n{body}"
    return docs

# ---- the BM25 baseline
STOP = set("""a about above after again against all am an and any are as at be because
been before being below between both but by can could did do does doing down during each
few for from further had has have having he her here hers herself him himself his how i if
in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their
theirs them themselves then there these they this those through to too under until up very
was we were what when where which while who whom why will with would you your yours
yourself yourselves""".split())
CJK = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
PIECE = re.compile(f"[{CJK}]+|[^{CJK}]+")

def tokens(text):
    out = []
    for run in re.findall(r"[^\W_]+", text.lower()):
        for piece in PIECE.findall(run):
            if re.match(f"[{CJK}]", piece):
                out += [piece] if len(piece) == 1 else [piece[i:i + 2] for i in range(len(piece) - 1)]
            elif piece not in STOP:
                out.append(piece)
    return out

class BM25:
    def __init__(self, docs, k1=1.2, b=0.75):
        self.k1, self.b = k1, b
        self.tf = {k: {} for k in docs}
        self.len = {}
        for k, text in docs.items():
            toks = tokens(text)
            self.len[k] = len(toks)
            for t in toks:
                self.tf[k][t] = self.tf[k].get(t, 0) + 1
        self.avg = sum(self.len.values()) / max(1, len(docs))
        self.df = {}
        for tf in self.tf.values():
            for t in tf:
                self.df[t] = self.df.get(t, 0) + 1
        self.n = len(docs)

    def search(self, query, limit=10):
        scores = {}
        for t in set(tokens(query)):
            df = self.df.get(t, 0)
            if not df:
                continue
            idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
            for k, tf in self.tf.items():
                f = tf.get(t, 0)
                if f:
                    norm = f + self.k1 * (1 - self.b + self.b * self.len[k] / self.avg)
                    scores[k] = scores.get(k, 0) + idf * f * (self.k1 + 1) / norm
        hits = sorted((kv for kv in scores.items() if kv[1] > 0), key=lambda kv: (-kv[1], kv[0]))
        return [(k, round(s, 3)) for k, s in hits[:limit]]

# ---- memoir in a temporary store
class Store:
    def __init__(self, memoir, set_dir):
        self.memoir, self.dir = memoir, tempfile.mkdtemp(prefix="recall-eval-")
        gitconfig = os.path.join(self.dir, ".gitconfig")
        with open(gitconfig, "w") as f:
            f.write("[user]\n\tname = eval\n\temail = eval@example.com\n[init]\n\tdefaultBranch = main\n")
        self.env = dict(os.environ, HOME=self.dir, GIT_CONFIG_GLOBAL=gitconfig, GIT_CONFIG_NOSYSTEM="1",
                        MEMOIR_NOW="2026-12-01T00:00:00Z", MEMOIR_ACTOR="eval <eval@example.com>")
        self.env.pop("MEMOIR_STORE", None)
        subprocess.run(["git", "init", "-q"], cwd=self.dir, env=self.env, check=True)
        self.run("init")
        for src in sorted((set_dir / "memory").glob("*/*.md")):
            dst = Path(self.dir, "memory", src.parent.name, src.name)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
        self.run("record")
        # Semantic recall on (bench/semantic.sh): the config names the embedder.
        config = os.environ.get("MEMOIR_EVAL_CONFIG")
        if config:
            shutil.copyfile(config, Path(self.dir, "memory", "config.yaml"))

    def run(self, *args):
        p = subprocess.run([self.memoir, "--store", self.dir, *args], cwd=self.dir, env=self.env,
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"memoir {' '.join(args[:2])} failed ({p.returncode}): {p.stderr.strip()}")
        return p.stdout

    def timed(self, *args):
        t = time.perf_counter()
        out = self.run(*args)
        return out, (time.perf_counter() - t) * 1000

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)

# ---- metrics
def metrics(qs, system):
    ans = [q for q in qs if q["relevant"]]
    irr = [q for q in qs if not q["relevant"]]
    m = {}
    for k in (1, 3, 5):
        m[f"hit@{k}"] = mean(any(key in q["relevant"] for key, _ in q[system][:k]) for q in ans)
    for k in (5, 10):
        m[f"R@{k}"] = mean(len(set(q["relevant"]) & {key for key, _ in q[system][:k]}) / len(set(q["relevant"])) for q in ans)
    m["MRR"] = mean(next((1 / i for i, (key, _) in enumerate(q[system][:10], 1) if key in q["relevant"]), 0) for q in ans)
    # Abstention is the store's decision: `answered` false (recall still
    # lists its weaker matches for a reader), or no hits at all.
    m["abst"] = mean(not q.get(f"{system}-answered", bool(q[system])) for q in irr)
    if system == "memoir":
        m["ctx-abst"] = mean(not q["context"].strip() for q in irr)
    return m

def mean(xs):
    xs = [float(x) for x in xs]
    return round(sum(xs) / len(xs), 3) if xs else None

SYSTEMS = ("memoir", "memoir-min0", "bm25")
COLUMNS = ("hit@1", "hit@3", "hit@5", "R@5", "R@10", "MRR", "abst", "ctx-abst")

def table(rows, first):
    """rows: [(label, {col: value})] → aligned text."""
    cols = [c for c in COLUMNS if any(c in r for _, r in rows)]
    w = max(len(first), *(len(l) for l, _ in rows))
    lines = [f"{first:<{w}}  " + "  ".join(f"{c:>8}" for c in cols)]
    for label, r in rows:
        cell = lambda v: f"{'-':>8}" if v is None else f"{v:>8.3f}"
        lines.append(f"{label:<{w}}  " + "  ".join(cell(r.get(c)) for c in cols))
    return "\n".join(lines)

def evaluate(set_dir, memoir):
    files = sorted({f for g in QUESTION_GLOBS for f in set_dir.glob(g)})
    qs = [q for f in files for q in load_questions(f)]
    docs = load_memories(set_dir / "memory")
    for q in qs:
        for key in q["relevant"]:
            if key not in docs:
                print(f"warning: {set_dir}/{q['file']}: {q['query']!r}: no memory {key}", file=sys.stderr)
    bm25, store, ms = BM25(docs), Store(memoir, set_dir), {"recall": [], "recall-min0": [], "context": []}
    try:
        for q in qs:
            for system, extra, timing in (("memoir", [], "recall"), ("memoir-min0", ["--min-score", "0"], "recall-min0")):
                out, t = store.timed("--json", "recall", "--limit", "10", *extra, "--", q["query"])
                doc = json.loads(out)
                q[system] = [(h["key"], h["score"]) for h in doc["hits"]]
                q[f"{system}-answered"] = doc.get("answered", bool(doc["hits"]))
                ms[timing].append(t)
            if not q["relevant"]:
                q["context"], t = store.timed("context", "--", q["query"])
                ms["context"].append(t)
            q["bm25"] = bm25.search(q["query"])
    finally:
        store.close()
    return {
        "set": os.path.relpath(set_dir), "files": [f.name for f in files], "memories": len(docs),
        "questions": len(qs), "answerable": sum(1 for q in qs if q["relevant"]),
        "irrelevant": sum(1 for q in qs if not q["relevant"]),
        "systems": {s: metrics(qs, s) for s in SYSTEMS},
        "by_kind": {k: {s: metrics([q for q in qs if q["kind"] == k], s) for s in SYSTEMS}
                    for k in sorted({q["kind"] for q in qs})},
        "by_file": {f: {s: metrics([q for q in qs if q["file"] == f], s) for s in SYSTEMS}
                    for f in sorted({q["file"] for q in qs})},
        "kinds": {k: sum(1 for q in qs if q["kind"] == k) for k in sorted({q["kind"] for q in qs})},
        "median_ms": {k: round(statistics.median(v), 1) if v else None for k, v in ms.items()},
        "_qs": qs,
    }

def misses(r, k):
    lines = []
    for q in r["_qs"]:
        got = q["memoir"]
        if q["relevant"] and not set(q["relevant"]) <= {key for key, _ in got[:k]}:
            lines.append(f"MISS [{q['kind']}] {q['query']}\n  wanted: {', '.join(q['relevant'])}\n"
                         f"  got:    {', '.join(f'{key} {s:.2f}' for key, s in got[:k]) or '(nothing)'}")
        elif not q["relevant"] and (q.get("memoir-answered", bool(got)) or q["context"].strip()):
            lines.append(f"ANSWERED [{q['file']}] {q['query']}\n  got:    "
                         f"{', '.join(f'{key} {s:.2f}' for key, s in got[:k]) or '(recall: nothing)'}"
                         f"{'' if not q['context'].strip() else '  (context printed a block)'}")
    return lines

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sets", nargs="*", metavar="SET", type=Path,
                    default=[ROOT / "fixtures/recall", ROOT / "fixtures/recall-long"])
    release = ROOT / "target/release/memoir"
    ap.add_argument("--memoir", default=str(release if release.exists() else ROOT / "target/debug/memoir"))
    ap.add_argument("--k", type=int, default=5, help="cut-off for --show-misses (default 5)")
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--by-kind", action="store_true", help="also break the metrics down by kind")
    ap.add_argument("--by-file", action="store_true", help="also break the metrics down by question file")
    ap.add_argument("--json", action="store_true", help="print all numbers as one JSON object")
    args = ap.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` is no error
    results, failed = [], False
    for s in args.sets:
        try:
            results.append(evaluate(s, os.path.abspath(args.memoir)))
        except (RuntimeError, OSError, ValueError) as e:
            print(f"{s}: {e}", file=sys.stderr)
            failed = True
    if args.json:
        print(json.dumps({r["set"]: {k: v for k, v in r.items() if k != "_qs"} for r in results},
                         ensure_ascii=False, indent=2))
        return 1 if failed else 0
    for r in results:
        print(f"== {r['set']} ({', '.join(r['files'])}; {r['memories']} memories)")
        print(f"questions: {r['questions']} ({r['answerable']} answerable, {r['irrelevant']} irrelevant); "
              f"kinds: {', '.join(f'{k} {n}' for k, n in r['kinds'].items())}")
        print(table([(s, r["systems"][s]) for s in SYSTEMS], "system"))
        print("median ms per query: " + ", ".join(f"{k} {v}" for k, v in r["median_ms"].items() if v is not None))
        for group in ("kind", "file"):
            if getattr(args, f"by_{group}"):
                for g, by in r[f"by_{group}"].items():
                    print(f"\n-- {group} {g}\n" + table([(s, by[s]) for s in SYSTEMS], "system"))
        if args.show_misses:
            print(f"\nmemoir misses (relevant keys not all in the top {args.k}) and answered irrelevant questions:")
            print("\n".join(misses(r, args.k)) or "(none)")
        print()
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
