#!/usr/bin/env bash
# Drives `memoir mcp` with the official MCP Inspector's CLI mode
# (npm @modelcontextprotocol/inspector 2.x), a client no one here wrote.
#
# Usage: inspector.sh INSPECTOR MEMOIR_BINARY STORE_DIR
# Exits non-zero with the failed check.
set -euo pipefail
inspector=$1 memoir=$2 store=$3
cd "$store"

# The client starts the server with a few variables of its own choosing
# (HOME, PATH, USER…), as clients do: the test's git identity (a config
# file beside its HOME) and clock are handed over by name, since memoir
# refuses to log a write by no one.
server_env=()
for v in GIT_CONFIG_GLOBAL GIT_CONFIG_NOSYSTEM MEMOIR_NOW MEMOIR_ACTOR; do
  [ -n "${!v:-}" ] && server_env+=(-e "$v=${!v}")
done
# Runs the inspector; server arguments go before `--`, its own after.
call() { "$inspector" --cli "$memoir" mcp -- "${server_env[@]}" --format json "$@" 2>/dev/null || true; }
# Checks a Python expression over the JSON answer `r`.
expect() {
  local what=$1 expr=$2 answer=$3
  if python3 -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if ($expr) else 1)" "$answer"; then
    echo "ok: $what"
  else
    echo "FAILED: $what"; echo "$answer" | head -c 2000; exit 1
  fi
}

r=$(call --method tools/list)
expect "tools/list lists the eight tools" \
  "sorted(t['name'] for t in r['result']['tools']) == ['conflicts','context','forget','list','note','recall','remember','show']" "$r"

r=$(call --method tools/call --tool-name remember --tool-args-json \
  '{"scope":"project","name":"db","description":"The database is Postgres 16","source":"stated by the user on 2026-11-29","tags":["db"]}')
expect "remember writes" "r['result']['isError'] is False and r['result']['structuredContent']['status'] == 'written'" "$r"

secret="ghp_0123456789abcdefghijABCDEFGHIJ012345"
r=$(call --method tools/call --tool-name remember --tool-args-json \
  "{\"scope\":\"project\",\"name\":\"token\",\"description\":\"the token is $secret\",\"source\":\"pasted\"}")
expect "a secret is refused as a tool error" "r['result']['isError'] and r['result']['structuredContent']['error']['code'] == 'refused'" "$r"
expect "the secret is not echoed" "'$secret' not in json.dumps(r)" "$r"

r=$(call --method tools/call --tool-name recall --tool-args-json '{"query":"which database do we use"}')
expect "recall finds it" "r['result']['structuredContent']['hits'][0]['key'] == 'project/db'" "$r"

r=$(call --method tools/call --tool-name recall --tool-args-json '{"query":"db","limit":0}')
expect "a bad argument is a usage error naming it" "r['result']['isError'] and 'limit' in r['result']['structuredContent']['error']['message']" "$r"

# A JSON-RPC error: the inspector fails and says why.
if r=$("$inspector" --cli "$memoir" mcp -- --method tools/call --tool-name nope 2>&1); then
  echo "FAILED: an unknown tool is an error"; echo "$r"; exit 1
fi
case $r in *nope*) echo "ok: an unknown tool is an error naming it" ;;
  *) echo "FAILED: an unknown tool is an error naming it"; echo "$r"; exit 1 ;; esac
echo "ok: inspector checks"
