"""The application layer: the use cases both front ends call, and the LLM session they share.

`cli/` (typer and its fast path) and `mcp/` (the MCP server's tools) only adapt: parse their
input, call a use case here, render or shape what it returns. A use case takes typed input (a
`Common` for the options every command shares, then its own) and returns a `CommandResult`: the
--json data, a human view (text, tables, styled lines: `app/result.py`, drawn by the CLI),
warnings and an exit status. It never parses options, never prints, and never knows which front
end called it; what it must report as it goes (an engine's notice, a progress bar) goes to the
callbacks its `Common` carries.

    context.py   Common, the shared option values and their parsers
    result.py    CommandResult, the blocks of a human view, the --json envelope, and text made
                 safe to show (no secret, no control character)
    session.py   the LLM session: engine choice, budget, usage
    host.py      the host route: prepare a request, submit a proposal
    batch.py     submit, wait and collect for every --batch command
    commands/    one module per concern: outcomes, knowledge, errors, phases, distill,
                 learnings, batches, trust, scan, llm, hooks, evals/

docs/architecture.md maps the layers and one command's path through both front ends.
"""
