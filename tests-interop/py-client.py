#!/usr/bin/env python3
"""MCP client built on the official Python SDK (PyPI ``mcp`` 2.3.0), a real peer for Junction's
interop tests. It connects over stdio (a command after ``--``) or Streamable HTTP (a URL), in
handshake ("legacy") mode by default, performs what the flags ask and prints ONE JSON object
on stdout. Diagnostics go to stderr. Exit 0 on success, 1 on error, 2 on bad usage.

    $JUNCTION_PYTHON py-client.py [flags] -- COMMAND ARGS...        # stdio
    $JUNCTION_PYTHON py-client.py [flags] http://127.0.0.1:PORT/mcp  # Streamable HTTP

Flags (the same as tests-interop/ts-client.mjs, plus --mode):
  --mode legacy|auto|2026-07-28   legacy = initialize handshake (default); auto = probe
                                  server/discover, fall back to initialize; 2026-07-28 = adopt
                                  the stateless revision without a probe
  --tool NAME [--args JSON] [--progress]
  --list-resources  --read URI (repeatable)  --list-prompts  --prompt NAME [--prompt-args JSON]
  --no-list-tools   --all-conformance   --answers default|suite   --timeout SECONDS (default 30)

Results are the raw wire JSON of each response (captured below the SDK's typed layer, after the
SDK validated it), so they can be compared byte for byte with what another client saw.

Server->client requests (the client declares sampling, elicitation and roots):
  sampling/createMessage -> {role: assistant, content: {type: text, text: "sampled: <first
                             user text>"}, model: py-test-model, stopReason: endTurn}
  elicitation/create     -> accept, content = every property's default, else a plausible value
  roots/list             -> [{uri: file:///tmp/py-client-root, name: py-client-root}]
With --answers suite the sampling/elicitation answers are those of the conformance suite 0.1.16.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import warnings
from typing import Any

try:
    import anyio
    import mcp_types as types
    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError
    from mcp.shared.exceptions import MCPDeprecationWarning
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
    from mcp_types import JSONRPCNotification, JSONRPCRequest
except ImportError as e:  # pragma: no cover - environment problem
    sys.stderr.write(
        f"py-client: cannot import the mcp SDK ({e}); run scripts/install-tools and use $JUNCTION_PYTHON\n"
    )
    sys.exit(1)


# Handshake-era methods (ping, logging/setLevel, resources/subscribe) warn under mcp 2.x.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)


def fail(message: str, code: int = 1) -> None:
    sys.stderr.write(f"py-client: {message}\n")
    sys.exit(code)


# ------------------------------------------------------------------ raw wire capture
# Every request the SDK sends goes through JSONRPCDispatcher.send_raw_request, which returns the
# response's raw `result` dict; keep a copy so the output shows the wire, not a re-serialization.
RAW: list[tuple[str, Any]] = []
_orig_send_raw = JSONRPCDispatcher.send_raw_request


async def _spy_send_raw(self: Any, method: str, params: Any, opts: Any = None) -> dict[str, Any]:
    raw = await _orig_send_raw(self, method, params, opts)
    RAW.append((method, copy.deepcopy(raw)))
    return raw


JSONRPCDispatcher.send_raw_request = _spy_send_raw  # type: ignore[method-assign]

# Inbound requests and notifications, as the wire had them (before the SDK types them).
INBOUND: list[Any] = []  # callables taking (kind, {"method", "params"?})
_orig_dispatch = JSONRPCDispatcher._dispatch  # pyright: ignore[reportPrivateUsage]


async def _spy_dispatch(self: Any, item: Any, *rest: Any, **kw: Any) -> None:
    msg = getattr(item, "message", None)
    if isinstance(msg, (JSONRPCRequest, JSONRPCNotification)) and INBOUND:
        entry: dict[str, Any] = {"method": msg.method}
        if msg.params is not None:
            entry["params"] = copy.deepcopy(msg.params)
        INBOUND[0]("serverRequests" if isinstance(msg, JSONRPCRequest) else "notifications", entry)
    await _orig_dispatch(self, item, *rest, **kw)


JSONRPCDispatcher._dispatch = _spy_dispatch  # type: ignore[method-assign]


def last_raw(method: str, since: int) -> Any:
    for m, raw in reversed(RAW[since:]):
        if m == method:
            return raw
    return None


def dump(model: Any) -> Any:
    if model is None:
        return None
    if hasattr(model, "model_dump"):
        return model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return model


# ------------------------------------------------------------------ answers to the server
def first_user_text(params: types.CreateMessageRequestParams) -> str:
    for m in params.messages:
        if m.role != "user":
            continue
        blocks = m.content if isinstance(m.content, list) else [m.content]
        for b in blocks:
            if getattr(b, "type", None) == "text":
                return b.text
    return ""


def plausible_value(name: str, s: Any) -> Any:
    if not isinstance(s, dict):
        return "test"
    if "default" in s:
        return s["default"]
    if s.get("enum"):
        return s["enum"][0]
    for key in ("oneOf", "anyOf"):
        if s.get(key) and isinstance(s[key][0], dict) and "const" in s[key][0]:
            return s[key][0]["const"]
    t = s.get("type")
    if t == "boolean":
        return True
    if t == "integer":
        return int(s["minimum"]) if isinstance(s.get("minimum"), (int, float)) else 1
    if t == "number":
        return s["minimum"] if isinstance(s.get("minimum"), (int, float)) else 1
    if t == "array":
        items = s.get("items") or {}
        if items.get("enum"):
            opts = list(items["enum"])
        elif items.get("anyOf") or items.get("oneOf"):
            opts = [x.get("const") for x in (items.get("anyOf") or items.get("oneOf"))]
        else:
            opts = ["test"]
        n = max(1, int(s.get("minItems", 1)))
        return opts[: min(n, len(opts))]
    n = name.lower()
    fmt = s.get("format")
    if fmt == "email" or "email" in n:
        return "test@example.com"
    if fmt == "uri" or "url" in n or "uri" in n:
        return "https://example.com"
    if fmt == "date":
        return "2025-01-01"
    if fmt == "date-time":
        return "2025-01-01T00:00:00Z"
    v = "testuser" if "name" in n else f"test-{name}"
    if isinstance(s.get("minLength"), int) and len(v) < s["minLength"]:
        v = v.ljust(s["minLength"], "x")
    if isinstance(s.get("maxLength"), int):
        v = v[: s["maxLength"]]
    return v


SUITE_SAMPLING_TEXT = "This is a test response from the client"
SUITE_ELICITATION: dict[str, dict[str, Any]] = {
    "test_elicitation": {"username": "testuser", "email": "test@example.com"},
    "test_elicitation_sep1034_defaults": {
        "name": "Jane Smith",
        "age": 25,
        "score": 88.0,
        "status": "inactive",
        "verified": False,
    },
    "test_elicitation_sep1330_enums": {
        "untitledSingle": "option1",
        "titledSingle": "value1",
        "legacyEnum": "opt1",
        "untitledMulti": ["option1", "option2"],
        "titledMulti": ["value1", "value2"],
    },
}

CONFORMANCE_TOOLS: list[dict[str, Any]] = [
    {"name": "test_simple_text"},  # sent without `arguments`, as the suite does
    {"name": "test_image_content", "args": {}},
    {"name": "test_audio_content", "args": {}},
    {"name": "test_embedded_resource", "args": {}},
    {"name": "test_multiple_content_types", "args": {}},
    {"name": "test_tool_with_logging", "args": {}, "set_level": "debug"},
    {"name": "test_error_handling", "args": {}},
    {"name": "test_tool_with_progress", "args": {}, "progress": True},
    {"name": "test_sampling", "args": {"prompt": "Test prompt for sampling"}},
    {"name": "test_elicitation", "args": {"message": "Please provide your information"}},
    {"name": "test_elicitation_sep1034_defaults", "args": {}},
    {"name": "test_elicitation_sep1330_enums", "args": {}},
    {"name": "json_schema_2020_12_tool", "args": {"name": "Ada", "address": {"street": "1 Main St", "city": "Springfield"}, "email": "ada@example.com"}},
    {"name": "test_reconnection", "args": {}},
]
CONFORMANCE_READS = ["test://static-text", "test://static-binary", "test://template/123/data", "test://watched-resource"]
CONFORMANCE_PROMPTS: list[dict[str, Any]] = [
    {"name": "test_simple_prompt"},
    {"name": "test_prompt_with_arguments", "args": {"arg1": "testValue1", "arg2": "testValue2"}},
    {"name": "test_prompt_with_embedded_resource", "args": {"resourceUri": "test://example-resource"}},
    {"name": "test_prompt_with_image"},
]


# ------------------------------------------------------------------ arguments
def parse_args(argv: list[str]) -> argparse.Namespace:
    command: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1 :]
    p = argparse.ArgumentParser(prog="py-client.py", description="Python-SDK MCP client for interop tests")
    p.add_argument("url", nargs="?", help="Streamable HTTP endpoint (else give -- COMMAND ARGS...)")
    p.add_argument("--mode", default="legacy", choices=["legacy", "auto", "2026-07-28"])
    p.add_argument("--tool")
    p.add_argument("--args", dest="tool_args")
    p.add_argument("--progress", action="store_true")
    p.add_argument("--list-resources", action="store_true")
    p.add_argument("--read", action="append", default=[])
    p.add_argument("--list-prompts", action="store_true")
    p.add_argument("--prompt")
    p.add_argument("--prompt-args")
    p.add_argument("--no-list-tools", action="store_true")
    p.add_argument("--all-conformance", action="store_true")
    p.add_argument("--answers", default="default", choices=["default", "suite"])
    p.add_argument("--timeout", type=float, default=30.0)
    a = p.parse_args(argv)
    a.command = command
    if bool(a.url) == bool(command):
        p.error("give either a URL or -- COMMAND ARGS...")
    for attr in ("tool_args", "prompt_args"):
        v = getattr(a, attr)
        if v is not None:
            try:
                setattr(a, attr, json.loads(v))
            except json.JSONDecodeError as e:
                p.error(f"--{attr.replace('_', '-').replace('tool-', '')} expects JSON: {e}")
    return a


# ------------------------------------------------------------------ main
async def run(a: argparse.Namespace) -> int:
    notifications: list[Any] = []
    server_requests: list[Any] = []
    errors: list[str] = []
    state: dict[str, Any] = {"sink": None, "tool": None}

    def note(key: str, item: Any) -> None:
        if item["method"] == "notifications/progress":
            return  # reported per call under "progress", as ts-client does
        (notifications if key == "notifications" else server_requests).append(item)
        if state["sink"] is not None:
            state["sink"][key].append(item)

    INBOUND[:] = [note]

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            sys.stderr.write(f"py-client: transport error: {message}\n")

    async def on_sampling(_ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        text = SUITE_SAMPLING_TEXT if a.answers == "suite" else f"sampled: {first_user_text(params)}"
        model = "test-model" if a.answers == "suite" else "py-test-model"
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=text), model=model, stop_reason="endTurn"
        )

    async def on_elicitation(_ctx: Any, params: Any) -> Any:
        if a.answers == "suite" and state["tool"] in SUITE_ELICITATION:
            return types.ElicitResult(action="accept", content=SUITE_ELICITATION[state["tool"]])
        if getattr(params, "mode", "form") == "url":
            return types.ElicitResult(action="accept")
        schema = getattr(params, "requested_schema", None) or {}
        content = {k: plausible_value(k, v) for k, v in (schema.get("properties") or {}).items()}
        return types.ElicitResult(action="accept", content=content)

    async def on_roots(_ctx: Any) -> Any:
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/py-client-root", name="py-client-root")])

    if a.url:
        server: Any = a.url
    else:
        server = StdioServerParameters(command=a.command[0], args=a.command[1:], env=dict(os.environ))

    client = Client(
        server,
        mode=a.mode,
        sampling_callback=on_sampling,
        elicitation_callback=on_elicitation,
        list_roots_callback=on_roots,
        message_handler=on_message,
        client_info=types.Implementation(name="junction-py-client", version="1.0.0"),
        read_timeout_seconds=a.timeout,
        cache=None,
    )

    out: dict[str, Any] = {"transport": "streamable-http" if a.url else "stdio", "mode": a.mode}
    connected = False
    printed = False
    try:
        async with client:
            connected = True
            init = last_raw("initialize", 0) or last_raw("server/discover", 0)
            out["negotiatedProtocolVersion"] = client.protocol_version
            out["serverInfo"] = (init or {}).get("serverInfo") or dump(client.server_info)
            out["serverCapabilities"] = (init or {}).get("capabilities") or dump(client.server_capabilities)
            out["instructions"] = (init or {}).get("instructions", client.instructions)
            caps = out["serverCapabilities"] or {}

            async def track(label: str, method: str | None, fn: Any, settle: float = 0.0, **extra: Any) -> dict[str, Any]:
                rec: dict[str, Any] = {"notifications": [], "serverRequests": [], **extra}
                state["sink"] = rec
                mark = len(RAW)
                try:
                    typed = await fn(rec)
                    raw = last_raw(method, mark) if method else None
                    rec["result"] = raw if raw is not None else dump(typed)
                except MCPError as e:
                    rec["error"] = {"code": e.code, "message": e.message, **({"data": e.data} if e.data is not None else {})}
                    errors.append(f"{label}: {e.message}")
                except Exception as e:  # noqa: BLE001 - any failure of one operation is recorded
                    rec["error"] = {"message": describe(e)}
                    errors.append(f"{label}: {describe(e)}")
                if settle:
                    await anyio.sleep(settle)
                state["sink"] = None
                for k in ("notifications", "serverRequests"):
                    if not rec[k]:
                        del rec[k]
                return rec

            async def list_all(method: str, key: str, fetch: Any) -> Any:
                items: list[Any] = []
                cursor = None
                for _ in range(1000):
                    mark = len(RAW)
                    typed = await fetch(cursor)
                    raw = last_raw(method, mark) or dump(typed)
                    items.extend(raw.get(key) or [])
                    cursor = raw.get("nextCursor")
                    if not cursor:
                        return items
                raise RuntimeError(f"{method}: more than 1000 pages")

            async def listing(label: str, method: str, key: str, fetch: Any) -> Any:
                rec = await track(label, None, lambda _r: list_all(method, key, fetch))
                return rec.get("result") if "error" not in rec else None

            async def call_tool(name: str, args: Any, progress: bool = False) -> dict[str, Any]:
                state["tool"] = name
                try:

                    async def go(rec: dict[str, Any]) -> Any:
                        cb = None
                        if progress:
                            rec["progress"] = []

                            async def cb(p: float, total: float | None, message: str | None) -> None:
                                item: dict[str, Any] = {"progress": p}
                                if total is not None:
                                    item["total"] = total
                                if message is not None:
                                    item["message"] = message
                                rec["progress"].append(item)

                        return await client.call_tool(name, args, progress_callback=cb)

                    rec = await track(f"tools/call {name}", "tools/call", go, settle=0.02 if progress else 0.0)
                    head: dict[str, Any] = {"name": name}
                    if args is not None:
                        head["arguments"] = args
                    return {**head, **rec}
                finally:
                    state["tool"] = None

            async def read(uri: str) -> dict[str, Any]:
                return await track(f"resources/read {uri}", "resources/read", lambda _r: client.read_resource(uri))

            async def get_prompt(name: str, args: Any) -> dict[str, Any]:
                rec = await track(f"prompts/get {name}", "prompts/get", lambda _r: client.get_prompt(name, args))
                return {"name": name, **({"arguments": args} if args is not None else {}), **rec}

            tools_fetch = lambda c: client.list_tools(cursor=c)  # noqa: E731
            res_fetch = lambda c: client.list_resources(cursor=c)  # noqa: E731
            tpl_fetch = lambda c: client.list_resource_templates(cursor=c)  # noqa: E731
            prompts_fetch = lambda c: client.list_prompts(cursor=c)  # noqa: E731

            if a.all_conformance:
                out["tools"] = await listing("tools/list", "tools/list", "tools", tools_fetch)
                out["ping"] = await track("ping", "ping", lambda _r: client.send_ping())
                out["setLevel"] = await track("logging/setLevel", "logging/setLevel", lambda _r: client.set_logging_level("info"))
                out["complete"] = await track(
                    "completion/complete",
                    "completion/complete",
                    lambda _r: client.complete(
                        types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                        {"name": "arg1", "value": "test"},
                    ),
                )
                out["calls"] = {}
                for t in CONFORMANCE_TOOLS:
                    if t.get("set_level"):
                        await track("logging/setLevel", "logging/setLevel", lambda _r, lv=t["set_level"]: client.set_logging_level(lv))
                    out["calls"][t["name"]] = await call_tool(t["name"], t.get("args"), bool(t.get("progress")))
                    if t["name"] == "test_tool_with_logging":
                        await anyio.sleep(0.05)
                out["resources"] = await listing("resources/list", "resources/list", "resources", res_fetch)
                out["resourceTemplates"] = await listing(
                    "resources/templates/list", "resources/templates/list", "resourceTemplates", tpl_fetch
                )
                out["reads"] = {uri: await read(uri) for uri in CONFORMANCE_READS}
                out["subscribe"] = await track(
                    "resources/subscribe", "resources/subscribe", lambda _r: client.subscribe_resource("test://watched-resource")
                )
                out["unsubscribe"] = await track(
                    "resources/unsubscribe",
                    "resources/unsubscribe",
                    lambda _r: client.unsubscribe_resource("test://watched-resource"),
                )
                out["prompts"] = await listing("prompts/list", "prompts/list", "prompts", prompts_fetch)
                out["getPrompts"] = {p["name"]: await get_prompt(p["name"], p.get("args")) for p in CONFORMANCE_PROMPTS}
            else:
                if not a.no_list_tools and caps.get("tools") is not None:
                    out["tools"] = await listing("tools/list", "tools/list", "tools", tools_fetch)
                if a.tool:
                    out["called"] = await call_tool(a.tool, a.tool_args, a.progress)
                if a.list_resources:
                    out["resources"] = await listing("resources/list", "resources/list", "resources", res_fetch)
                    out["resourceTemplates"] = await listing(
                        "resources/templates/list", "resources/templates/list", "resourceTemplates", tpl_fetch
                    )
                if a.read:
                    out["read"] = {uri: await read(uri) for uri in a.read}
                if a.list_prompts:
                    out["prompts"] = await listing("prompts/list", "prompts/list", "prompts", prompts_fetch)
                if a.prompt:
                    out["prompt"] = await get_prompt(a.prompt, a.prompt_args)

            out["notifications"] = notifications
            out["serverRequests"] = server_requests
            out["errors"] = errors
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
            printed = True
    except Exception as e:  # noqa: BLE001 - report connect and shutdown failures the same way
        if not connected:
            fail(f"cannot connect: {describe(e)}")
        if not printed:
            fail(f"failed: {describe(e)}")
        # The result is out; a peer that dies at shutdown is not the operation's failure.
        sys.stderr.write(f"py-client: while closing: {describe(e)}\n")
    if errors:
        sys.stderr.write(f"py-client: {len(errors)} operation(s) failed:\n  " + "\n  ".join(errors) + "\n")
        return 1
    return 0


def describe(e: BaseException) -> str:
    """Flattens exception groups (anyio task groups wrap the real cause)."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(x) for x in e.exceptions)
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def main() -> None:
    a = parse_args(sys.argv[1:])
    try:
        code = anyio.run(run, a)
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    main()
