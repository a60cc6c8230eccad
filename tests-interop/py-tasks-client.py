#!/usr/bin/env python3
"""The Python SDK's (PyPI ``mcp`` 1.30.0) experimental tasks client against a Junction server
over Streamable HTTP (2025-11-25 tasks), used by crates/cli/tests/tasks_sdk.rs. The 2.x SDK
has no tasks client, so this runs in its own venv ($JUNCTION_PYTHON_TASKS, made by
scripts/install-tools from tests-interop/requirements-tasks.txt). Prints ONE JSON object on
stdout:

    $JUNCTION_PYTHON_TASKS py-tasks-client.py URL TOOL ARGS_JSON

    created      call_tool_as_task(TOOL, ARGS, ttl=60000): the task it created
    polled       each status poll_task saw until the task ended: {status, statusMessage}
    payload      get_task_result(id, CallToolResult)
    listed       list_tasks() after it: the task ids and statuses
    cancelled    a second task, cancelled with cancel_task at once: the cancel answer
    afterCancel  get_task of that second task

Diagnostics go to stderr; exit 0 on success, 1 on error, 2 on bad usage.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client


def task_json(task: Any) -> dict[str, Any]:
    """The members of a task the test compares, as they came over the wire."""
    return task.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run(url: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with streamable_http_client(url) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tasks = session.experimental
            created = await tasks.call_tool_as_task(tool, arguments, ttl=60000)
            out["created"] = task_json(created.task)
            task_id = created.task.taskId
            out["polled"] = [
                {"status": s.status, "statusMessage": s.statusMessage}
                async for s in tasks.poll_task(task_id)
            ]
            payload = await tasks.get_task_result(task_id, types.CallToolResult)
            out["payload"] = payload.model_dump(mode="json", by_alias=True, exclude_none=True)
            listed = await tasks.list_tasks()
            out["listed"] = [{"taskId": t.taskId, "status": t.status} for t in listed.tasks]

            second = await tasks.call_tool_as_task(tool, arguments, ttl=60000)
            cancelled = await tasks.cancel_task(second.task.taskId)
            out["cancelled"] = task_json(cancelled)
            out["afterCancel"] = task_json(await tasks.get_task(second.task.taskId))
    return out


def main() -> int:
    if len(sys.argv) < 3:
        print("usage: py-tasks-client.py URL TOOL [ARGS_JSON]", file=sys.stderr)
        return 2
    url, tool = sys.argv[1], sys.argv[2]
    arguments = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    try:
        out = anyio.run(run, url, tool, arguments)
    except Exception as e:  # noqa: BLE001 - the test reads the error from the JSON
        print(json.dumps({"error": repr(e)}))
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
