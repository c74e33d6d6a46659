"""The bridge from the sampling engine (llm/sampling.py) to the MCP client's session.

A tool runs in a worker thread (params.stoppable_call, with anyio.to_thread); each sample is a
`sampling/createMessage` request sent on the event loop with anyio.from_thread, tied to the tool
call that caused it, bounded by the configured deadline (`deadline_s`) and ended at once when
that tool call is cancelled. A refusal, an error reply or no
answer in time is SamplingUnavailableError (the step falls back to offline under `auto`).
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import anyio
import anyio.from_thread
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import ModelHint, ModelPreferences, SamplingMessage, TextContent

from legion_llm.app.session import McpClient
from legion_llm.llm.cancel import CallCancelled, current_stop
from legion_llm.llm.sampling import Sampler, SampleReply, SampleRequest, SamplingUnavailableError

STOP_POLL_S = 0.1  # how often a sampling wait looks whether its tool call was cancelled


def client_of(ctx: Context[Any, Any] | None) -> McpClient:
    """The client as the engine selection sees it: a sampler when it declared sampling."""
    if ctx is None:
        return McpClient()
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.sampling is None:
        return McpClient()
    return McpClient(sampler=_sampler(ctx))


def _sampler(ctx: Context[Any, Any]) -> Sampler:
    session, request_id = ctx.session, ctx.request_id

    async def create(request: SampleRequest) -> Any:
        messages = [SamplingMessage(role=role, content=TextContent(type="text", text=text))  # type: ignore[arg-type]
                    for role, text in request.messages]  # fmt: skip
        preferences = ModelPreferences(hints=[ModelHint(name=request.model)],
                                       cost_priority=0.5, speed_priority=0.3,
                                       intelligence_priority=0.6)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks sampling deprecated for 2026-07-28+
            return await session.create_message(
                messages, max_tokens=request.max_tokens, system_prompt=request.system,
                model_preferences=preferences, include_context="none",
                related_request_id=request_id,
            )  # fmt: skip

    async def ask(request: SampleRequest, stop: threading.Event | None) -> Any:
        """The client's reply, within the deadline; CallCancelled as soon as the tool call that
        asked was cancelled (its stop event, llm/cancel.py), not at the deadline."""
        outcome: list[Any] = []

        async def answer(scope: anyio.CancelScope) -> None:
            try:
                outcome.append(await create(request))
            except Exception as exc:  # raised below, outside the group (never as a group)
                outcome.append(exc)
            scope.cancel()

        async def watch(scope: anyio.CancelScope) -> None:
            while stop is not None and not stop.is_set():
                await anyio.sleep(STOP_POLL_S)
            if stop is not None:
                scope.cancel()

        with anyio.fail_after(request.timeout_s):
            async with anyio.create_task_group() as group:
                group.start_soon(answer, group.cancel_scope)
                group.start_soon(watch, group.cancel_scope)
        if not outcome:
            raise CallCancelled()
        if isinstance(outcome[0], Exception):
            raise outcome[0]
        return outcome[0]

    def sample(request: SampleRequest) -> SampleReply:
        try:
            result = anyio.from_thread.run(ask, request, current_stop())
        except TimeoutError:
            raise SamplingUnavailableError(
                f"the MCP client did not answer the sampling request within {request.timeout_s:g} s"
            ) from None
        except MCPError as exc:
            raise SamplingUnavailableError(
                f"the MCP client refused the sampling request: {exc}"
            ) from None
        content = result.content if isinstance(result.content, list) else [result.content]
        text = "".join(block.text for block in content if isinstance(block, TextContent))
        return SampleReply(
            text, getattr(result, "model", None), getattr(result, "stop_reason", None)
        )

    return sample
