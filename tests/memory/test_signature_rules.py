"""Issue 22's matcher rules, one fixture each (written for these tests, not taken from a corpus):
the salient line is not a wrapper or a trailer, platform prefixes are removed, and the names
that decide a fix keep two look-alikes apart."""

from __future__ import annotations

import pytest

from legion_llm.memory.signatures.match import Candidate, SignatureIndex, features, salient


def _pair(stored: str, query: str) -> tuple[float, tuple[str, ...]]:
    index = SignatureIndex([Candidate("s", stored)])
    [found] = index.rank(query, 1)
    return found.score, found.conflicts


def test_a_build_step_banner_is_not_the_salient_line() -> None:
    text = "Step 3/7 : RUN pip install -r requirements.txt\nERROR: No matching distribution found for torch==9.9"
    assert salient(text) == "ERROR: No matching distribution found for torch==9.9"


def test_make_trailers_are_not_the_salient_line() -> None:
    text = (
        "cc -c lib/io.c\nlib/io.c:4:10: fatal error: lzma.h: No such file or directory\n"
        "Makefile:30: recipe for target 'lib/io.o' failed\nmake: *** [lib/io.o] Error 1"
    )
    assert "lzma.h" in salient(text)
    assert "recipe" not in salient(text) and "Error 1" not in salient(text)


def test_a_request_failed_due_to_wrapper_is_dropped_from_the_line() -> None:
    text = "Request failed due to the following errors: the token has expired"
    assert salient(text) == "the token has expired"


def test_a_hosting_platforms_remote_marker_is_a_prefix() -> None:
    bare = "No such app as shop-backend."
    assert features(f"remote: !\t{bare}").salient == features(bare).salient
    assert features(f"remote:  !  {bare}").salient == features(bare).salient


def test_a_klog_header_is_a_prefix_not_an_error_code() -> None:
    line = "W1103 08:15:42.311907    4711 controller.go:88] watch of *v1.Secret ended: too old"
    feat = features(line)
    assert "W1103" not in feat.codes and "w1103" not in feat.salient
    assert feat.salient == features("watch of *v1.Secret ended: too old").salient


@pytest.mark.parametrize(
    ("stored", "query", "kind"),
    [
        ("/usr/bin/ld: cannot find -lcurl", "/usr/bin/ld: cannot find -lxml2", "link-library"),
        ("error: linker `cc` not found", "error: linker `clang` not found", "linker"),
        ("ReferenceError: window is not defined", "ReferenceError: exports is not defined", "undefined"),
        ("Could not find gem 'mysql2' in locally installed gems.",
         "Could not find gem 'redis' in locally installed gems.", "gem"),
        ("dial tcp 127.0.0.1:8500: connect: connection refused",
         "dial tcp consul:8500: connect: connection refused", "host"),
        ("Error: Cannot find module './lib/config'", "Error: Cannot find module 'config'", "import-style"),
        ("Module not found: Error: Can't resolve '@/store/user' in '/w/src'",
         "Module not found: Error: Can't resolve './store/user' in '/w/src'", "import-style"),
        ("ERROR in ./node_modules/chart-kit/esm/index.js 40:9\nModule parse failed: Unexpected token (40:9)",
         "ERROR in ./src/views/Chart.vue 40:9\nModule parse failed: Unexpected token (40:9)", "code-in"),
    ],
)  # fmt: skip
def test_a_deciding_name_keeps_look_alikes_apart(stored: str, query: str, kind: str) -> None:
    score, conflicts = _pair(stored, query)
    assert any(c.startswith(f"{kind}=") for c in conflicts), conflicts
    same_score, same_conflicts = _pair(stored, stored)
    assert not any(c.startswith(f"{kind}=") for c in same_conflicts)
    assert score < same_score
