"""Which lines of a real paste name the error: unwrapping, prose, object dumps, tracebacks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from legion_llm.memory.signatures.features import strong_fingerprint
from legion_llm.memory.signatures.lines import signature_lines
from legion_llm.memory.signatures.match import Candidate, SignatureIndex, decide_offline, salient
from legion_llm.memory.signatures.unwrap import unwrap


def test_unwrap_splits_escaped_logs_decodes_entities_and_drops_markdown() -> None:
    logged = '{"level":"error","stack":"Error: boom\\n    at a (x.js:1:2)\\n    at b (y.js:3:4)"}'
    assert unwrap(logged)[1:] == ["    at a (x.js:1:2)", '    at b (y.js:3:4)"}']
    assert unwrap("OOM command not allowed when used memory &gt; &#39;maxmemory&#39;.") == [
        "OOM command not allowed when used memory > 'maxmemory'."
    ]
    assert unwrap("**Unhandled Runtime Error**\n`Error: NextRouter was not mounted.`") == [
        "Unhandled Runtime Error",
        "Error: NextRouter was not mounted.",
    ]
    wrapped = "script_phases.sh: line 86: /usr/local/bin/node\n: No such file or directory"
    assert unwrap(wrapped) == [
        "script_phases.sh: line 86: /usr/local/bin/node: No such file or directory"
    ]


def test_unwrap_reads_reply_quotes_workflow_commands_and_logfmt_lines() -> None:
    quoted = "On Mon, Bob wrote:\n> Traceback (most recent call last):\n>   File \"x.py\", line 1\n>\n> KeyError: 'a'"
    assert unwrap(quoted)[1:] == [
        "Traceback (most recent call last):",
        '  File "x.py", line 1',
        "",
        "KeyError: 'a'",
    ]
    assert unwrap(">> Error: boom\n>>     at a (x.js:1:2)\n>> }") == [
        "Error: boom",
        "    at a (x.js:1:2)",
        "}",
    ]
    assert unwrap(
        "::error file=a.py,line=3::Traceback (x)%0A  File a.py%0AKeyError: 'a' 100%25"
    ) == ["::error file=a.py,line=3::Traceback (x)", "  File a.py", "KeyError: 'a' 100%"]
    logfmt = 'time="2024-05-01T10:00:00Z" level=error msg="ERROR:  violates \\"k\\"\\nDETAIL:  x"'
    assert unwrap(logfmt) == ['ERROR:  violates "k"', "DETAIL:  x"]
    wrapped = 'level=error msg="failed to connect" err="dial tcp 127.0.0.1:5432: connect: refused"'
    assert unwrap(wrapped) == ["failed to connect: dial tcp 127.0.0.1:5432: connect: refused"]
    assert unwrap("> app@1.0.0 start\n> node index.js\n\nError: boom\n    at x\n    at y") == [
        "> app@1.0.0 start",
        "> node index.js",
        "",
        "Error: boom",
        "    at x",
        "    at y",
    ]  # npm's script banner is not a reply


STORED = [
    'Traceback (most recent call last):\n  File "/app/etl/load.py", line 8, in <module>\n'
    "    data = f.read()\nUnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0",
    "node:events:497\n      throw er; // Unhandled 'error' event\n      ^\n\n"
    "Error: listen EADDRINUSE: address already in use :::3000\n    at Server.setupListenHandle\n"
    "    at listenInCluster (node:net:1920:12) {\n  code: 'EADDRINUSE',\n  port: 3000\n}",
    "Error: Cannot find module 'express'\nRequire stack:\n- /app/server.js\n"
    "    at Module._resolveFilename (node:internal/modules/cjs/loader:1145:15)",
]


def _maven(text: str) -> str:
    return "\n".join("[ERROR] " + line for line in text.split("\n"))


def _reply(text: str) -> str:
    return "Bob wrote:\n> Hi, the deploy failed with:\n>\n" + "\n".join(
        "> " + line for line in text.split("\n")
    )


def _logfmt(text: str) -> str:
    escaped = (line.replace('"', '\\"') for line in text.split("\n"))
    return "\n".join(f'ts=1 level=error msg="{line}"' for line in escaped)


def _workflow(text: str) -> str:
    return "::error file=a.py::" + text.replace("%", "%25").replace("\n", "%0A")


@pytest.mark.parametrize(
    "wrap",
    [
        lambda t: "\n".join("[E] " + line for line in t.split("\n")),
        lambda t: "\n".join("[pod/api-7d9f8-x2x9q/api] " + line for line in t.split("\n")),
        _maven, _reply, _logfmt, _workflow,
    ],
    ids=["[E]", "kubectl --prefix", "[ERROR]", "reply", "logfmt", "workflow command"],
)  # fmt: skip
def test_a_wrapped_error_matches_its_bare_self(wrap: Callable[[str], str]) -> None:
    index = SignatureIndex(Candidate(str(i), text) for i, text in enumerate(STORED))
    for i, text in enumerate(STORED):
        best = index.rank(wrap(text), 1)[0]
        assert best.candidate.key == str(i) and decide_offline(best), (wrap(text), best)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # prose around a quoted error: the error
        (
            'I got "/bin/bash: /docker-entrypoint.sh: Permission denied" error.',
            "/bin/bash: /docker-entrypoint.sh: Permission denied",
        ),
        (
            "Postgres logs `FATAL: role \"root\" does not exist` every 10 seconds",
            'FATAL: role "root" does not exist',
        ),
        # ... but not code or a log line that quotes a value
        (
            'called `Result::unwrap()` on an `Err` value: Os { code: 2, message: "No such file or directory" }',
            'called `Result::unwrap()` on an `Err` value: Os { code: 2, message: "No such file or directory" }',
        ),
        # a Python traceback ends with its exception, whatever its class is called
        (
            'Traceback (most recent call last):\n  File "x.py", line 6, in <module>\n'
            "    from app.models import Page\n"
            "django.core.exceptions.AppRegistryNotReady: Apps aren't loaded yet.",
            "django.core.exceptions.AppRegistryNotReady: Apps aren't loaded yet.",
        ),
        # a bare exception name takes its message from the (indented) next line
        (
            'Failure/Error: require "active_support"\n\nNameError:\n'
            "  uninitialized constant ActiveSupport::LoggerThreadSafeLevel::Logger",
            "NameError:\nuninitialized constant ActiveSupport::LoggerThreadSafeLevel::Logger",
        ),
        # a dumped error object's fields are not the message; its `message` field is
        (
            "{ [Error: ER_BAD_DB_ERROR: Unknown database 'books']\n  code: 'ER_BAD_DB_ERROR',\n"
            "  errno: 1049,\n  fatal: true }",
            "{ [Error: ER_BAD_DB_ERROR: Unknown database 'books']",
        ),
        (
            '  name: \'error\',\n  message: "Ident authentication failed for user \\"app\\""',
            'Ident authentication failed for user "app"',
        ),
        # npm only says that the script failed: the script's own error line says why
        (
            "> app@1.0.0 start\n> react-scripts start\n\nsh: react-scripts: command not found\n"
            "npm ERR! code ELIFECYCLE\nnpm ERR! syscall spawn\nnpm ERR! file sh\nnpm ERR! errno ENOENT",
            "npm error code ELIFECYCLE\nreact-scripts: command not found",
        ),
        # a logger's bracketed level and process tag, markdown emphasis around the line
        ("_[FATAL tini (7)] exec ./entrypoint.sh failed: Permission denied_",
         "[FATAL tini (7)] exec ./entrypoint.sh failed: Permission denied"),
        # a user's lead-in on the error's own line
        ("Today my kubernetes cluster give me this error: 0/1 nodes are available: 1 node(s) had "
         "taints that the pod didn't tolerate.",
         "0/1 nodes are available: 1 node(s) had taints that the pod didn't tolerate."),
        # an issue title's tag is not part of the error
        ("[Bug] exec ./docker-entrypoint.sh: no such file or directory",
         "exec ./docker-entrypoint.sh: no such file or directory"),
    ],
)  # fmt: skip
def test_salient_of_real_pastes(text: str, expected: str) -> None:
    assert salient(text) == expected


def test_a_describe_listing_without_a_message_line_is_read_by_its_fields() -> None:
    text = "    State:          Terminated\n      Reason:       OOMKilled\n      Exit Code:    137"
    assert signature_lines(text).salient == [
        "State:          Terminated",
        "Reason:       OOMKilled",
        "Exit Code:    137",
    ]


def test_a_dumped_error_without_a_message_is_read_by_its_telling_fields() -> None:
    text = (
        "    at Connection.parseE (/app/node_modules/pg/lib/connection.js:546:11)\n"
        "  name: 'error',\n  length: 104,\n  severity: 'FATAL',\n  code: '28P01',\n"
        "  detail: undefined,\n  routine: 'auth_failed' }"
    )
    salient_lines = signature_lines(text).salient
    assert "code: '28P01'," in salient_lines and "routine: 'auth_failed' }" in salient_lines


def test_a_banner_salient_line_yields_to_the_line_that_names_the_cause() -> None:
    denied = "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository."
    host = "Host key verification failed.\nfatal: Could not read from remote repository."
    index = SignatureIndex([Candidate("key", denied), Candidate("host", host)])
    [best, other] = index.rank(
        "Host key verification failed.\r\nfatal: Could not read from remote repository.", 2
    )
    assert best.candidate.key == "host" and best.score > 2 * other.score


def test_the_strong_fingerprint_is_the_whole_output_and_needs_a_name() -> None:
    # the same error line with different output around it (another cause) is no exact match
    bare = "AttributeError: module 'collections' has no attribute 'Callable'"
    quoted = f'"{bare}" occurs for multiple reasons:'
    assert strong_fingerprint(bare) != strong_fingerprint(quoted)
    # frames and the source lines they quote do not count
    one = f'Traceback (most recent call last):\n  File "/a/b.py", line 3, in f\n    x()\n{bare}'
    assert strong_fingerprint(one) == strong_fingerprint(bare)
    # a line that only says how something failed, not which thing, decides nothing alone
    assert strong_fingerprint("Module parse failed: Unexpected token (4:2)") is None


NPM7_GYP = """npm error code 1
npm error path /home/dev/app/node_modules/bcrypt
npm error command failed
npm error command sh -c node-pre-gyp install --fallback-to-build
npm error gyp info it worked if it ends with ok
npm error gyp info using node-gyp@9.4.0
npm error Traceback (most recent call last):
npm error   File "/usr/lib/node_modules/npm/node_modules/node-gyp/gyp/gyp_main.py", line 42, in <module>
npm error     import gyp
npm error ModuleNotFoundError: No module named 'distutils'
npm error gyp ERR! configure error
npm error gyp ERR! stack Error: `gyp` failed with exit code: 1
npm error A complete log of this run can be found in: /home/dev/.npm/_logs/2024-01-01T00_00_00_000Z-debug-0.log"""
NPM7_SHARP = """npm error code 1
npm error path /home/dev/app/node_modules/sharp
npm error command failed
npm error command sh -c (node install/libvips && node install/dll-copy && prebuild-install) || (node install/can-compile && node-gyp rebuild && node install/dll-copy)
npm error sharp: Installation error: getaddrinfo ENOTFOUND github.com
npm error A complete log of this run can be found in: /home/dev/.npm/_logs/2024-01-01T00_00_00_000Z-debug-0.log"""


def test_npm_7_reads_the_failed_script_s_own_error_under_its_prefix() -> None:
    """npm 7+ prints a failed install script's output under `npm error`: that output holds the
    cause, not npm's `code 1` / `command failed`, which every script failure shares."""
    assert salient(NPM7_GYP).splitlines()[-1].endswith("No module named 'distutils'")
    assert "ENOTFOUND github.com" in salient(NPM7_SHARP)
    found = SignatureIndex([Candidate("E-1", NPM7_GYP, "install setuptools")]).rank(NPM7_SHARP, 1)
    assert not found or not decide_offline(found[0])
    again = NPM7_GYP.replace("bcrypt", "argon2").replace("/home/dev", "/Users/ana")
    same = SignatureIndex([Candidate("E-1", NPM7_GYP, "install setuptools")]).rank(again, 1)
    assert same and decide_offline(same[0])
