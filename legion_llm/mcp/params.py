"""Typed tool parameters shared by the tools (pydantic turns them into each tool's input schema)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

Today = Annotated[
    str | None,
    Field(description="Use this date (YYYY-MM-DD) as today (reproducible runs); default: today."),
]
Tags = Annotated[
    tuple[str, ...], Field(description="Tags; a record matches when any of its tags matches.")
]
TaskTypes = Annotated[
    tuple[str, ...], Field(description="Task types, e.g. backend, frontend, quality-review.")
]
Branch = Annotated[
    str, Field(description="all (default), current (the git branch) or a branch name.")
]
Limit = Annotated[int, Field(ge=1, description="At most this many records.")]
Agent = Annotated[str | None, Field(description="Only records of this agent id.")]
Engine = Annotated[
    Literal["auto", "anthropic", "offline"] | None,
    Field(
        description="auto (Claude when a key is set, else the offline engine), anthropic or "
        "offline; default: settings.json memory.llm, else auto."
    ),
]
Model = Annotated[str | None, Field(description="Claude model; default: settings, else built in.")]
MaxCost = Annotated[
    float | None,
    Field(ge=0, description="Stop before a call that could take the run past this many USD."),
]
PhaseSpec = Annotated[
    str,
    Field(
        min_length=1,
        description="Phase number (3, 03, 6.1), phase folder name (03-fx-rates) or a folder path "
        "inside the project.",
    ),
]
