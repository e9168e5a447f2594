"""Drives `memoir mcp` with the official MCP Python SDK (`pip install mcp`).

Usage: python_client.py MEMOIR_BINARY STORE_DIR

Lists the tools, calls every one, and checks what a model relies on: bad
arguments and a refused secret are tool errors it can read (and the secret
is not echoed), a changed memory comes back as a proposal for a human, and
what was remembered is recalled. Exits non-zero with the failed check.
"""
import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SECRET = "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345"
TOOLS = {"remember", "recall", "context", "note", "forget", "show", "list", "conflicts"}


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def data(result):
    """The structured result, else the JSON of the text."""
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def main(binary, store):
    # The SDK passes only a few variables unless told: the pinned author and clock must reach memoir.
    params = StdioServerParameters(command=binary, args=["mcp"], cwd=store, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            check(init.server_info.name == "memoir", "the server says it is memoir")
            check("secret" in (init.instructions or ""), "instructions say what never to remember")

            tools = {t.name: t for t in (await s.list_tools()).tools}
            check(set(tools) == TOOLS, f"tools/list gives {sorted(TOOLS)}")
            schema = tools["remember"].input_schema
            check(set(schema["required"]) == {"scope", "name", "description", "source"},
                  "remember requires scope, name, description and source")
            check("project" in schema["properties"]["scope"]["enum"], "scope is an enum of the store's scopes")
            check(tools["recall"].annotations.read_only_hint is True, "recall is read-only")
            # The SDK validates each result below against its tool's outputSchema (and fails the call if not).
            check(all(t.output_schema and t.output_schema.get("type") == "object" for t in tools.values()),
                  "every tool declares an outputSchema")

            r = await s.call_tool("remember", {
                "scope": "project", "name": "test-command",
                "description": "Run the test suite with `pnpm test`, never `npm test`.",
                "source": "stated by the user on 2026-11-29", "tags": ["tooling", "tests"],
                "body": "CI runs pnpm; npm misses the workspace."})
            check(not r.is_error and data(r)["status"] == "written", "remember writes a memory")

            r = await s.call_tool("remember", {
                "scope": "project", "name": "test-command",
                "description": "Run the test suite with `bun test`.", "source": "a guess"})
            d = data(r)
            check(r.is_error and d["error"]["code"] == "decision" and d["status"] == "proposed",
                  "changing a memory is a proposal for a human (isError, code decision)")
            check("pnpm" in d["diff"] and "bun" in d["diff"], "the proposal carries the diff")

            r = await s.call_tool("remember", {
                "scope": "project", "name": "deploy-token", "description": f"the token is {SECRET}",
                "source": "pasted"})
            d = data(r)
            text = r.content[0].text
            check(r.is_error and d["error"]["code"] == "refused" and d["error"]["exit"] == 3,
                  "a secret is refused (code refused, exit 3)")
            check(SECRET not in text and SECRET not in json.dumps(d), "the refused secret is not echoed")

            r = await s.call_tool("remember", {"scope": "project", "name": "x"})
            check(r.is_error and data(r)["error"]["code"] == "usage", "missing arguments are a usage error")
            r = await s.call_tool("recall", {"query": "tests", "limit": "many"})
            check(r.is_error and "limit" in data(r)["error"]["message"], "a wrong type names the argument")
            r = await s.call_tool("remember", {"scope": "team", "name": "x", "description": "d", "source": "s"})
            check(r.is_error and "scope" in data(r)["error"]["message"], "an unknown scope is refused")
            r = await s.call_tool("show", {"key": "../../etc/passwd"})
            check(r.is_error and data(r)["error"]["exit"] == 3, "a key outside the store is refused")

            r = await s.call_tool("recall", {"query": "which command runs the test suite"})
            hits = data(r)["hits"]
            check(not r.is_error and hits and hits[0]["key"] == "project/test-command", "recall finds the memory")
            r = await s.call_tool("recall", {"query": "what is the capital of Peru"})
            check(not r.is_error and data(r)["hits"] == [], "recall abstains on what the store does not know")

            r = await s.call_tool("context", {"query": "run the tests"})
            check(not r.is_error and "pnpm test" in r.content[0].text
                  and r.content[0].text.startswith("<"), "context gives the memory block as text")
            r = await s.call_tool("context", {})
            check(not r.is_error, "context without a query gives hot memory")
            r = await s.call_tool("context", {"query": "what is the capital of Peru"})
            check(not r.is_error and r.content[0].text.startswith("No memory is relevant")
                  and data(r)["memories"] == [], "context with nothing relevant says so in one line")

            r = await s.call_tool("note", {"text": "the CI cache misses on Mondays"})
            check(not r.is_error and data(r)["id"], "note appends an observation")
            r = await s.call_tool("note", {"text": ""})
            check(r.is_error, "an empty note is refused (never read from stdin)")

            r = await s.call_tool("show", {"key": "project/test-command"})
            d = data(r)
            check(not r.is_error and d["source"] == "stated by the user on 2026-11-29" and d["heads"],
                  "show gives the fields and version ids")
            r = await s.call_tool("list", {"scope": "project"})
            check([m["key"] for m in data(r)["memories"]] == ["project/test-command"], "list gives the memories")
            r = await s.call_tool("conflicts", {})
            waiting = data(r)["conflicts"]
            check(not r.is_error and [c["key"] for c in waiting] == ["project/test-command"]
                  and "bun test" in waiting[0]["candidates"][0]["diff"],
                  "conflicts shows the proposal waiting for a human, as a diff")

            r = await s.call_tool("forget", {"key": "project/test-command", "reason": "we moved to bun"})
            check(not r.is_error and data(r)["key"] == "project/test-command", "forget forgets")
            r = await s.call_tool("show", {"key": "project/test-command"})
            check(r.is_error and "no memory" in data(r)["error"]["message"], "a forgotten memory is gone")
            await s.send_ping()
            print("ok: all checks")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
