"""requirements-dev.lock pins what pyproject.toml asks for, with hashes, and is what the suite runs on.

`python3 dev.py test` installs the lock (pip --require-hashes) and CI runs that, so a release
upstream cannot change a run; `python3 dev.py test --latest` runs the same suite on the newest
releases the ranges allow (there the installed versions differ from the lock by design).
"""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata

import pytest
from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO

LOCK = REPO / "requirements-dev.lock"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)(?: ; (.+?))?(?: \\)?$")


def declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [
        Requirement(r) for r in [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    ]


def locked() -> dict[str, tuple[str, str | None, int]]:
    """name -> (version, marker, number of hashes) for every pin of the lock."""
    pins: dict[str, tuple[str, str | None, int]] = {}
    current = ""
    for line in LOCK.read_text().splitlines():
        match = PIN.match(line)
        if match:
            current = canonicalize_name(match.group(1))
            pins[current] = (match.group(2), match.group(3), 0)
        elif line.strip().startswith("--hash=sha256:") and current:
            version, marker, hashes = pins[current]
            pins[current] = (version, marker, hashes + 1)
    return pins


def test_every_declared_dependency_is_pinned_inside_its_range_with_hashes() -> None:
    pins = locked()
    assert len(pins) > 40
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in {LOCK.name}: run python3 dev.py lock"
        version = pins[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{LOCK.name} pins {name}=={version} outside {requirement}: run python3 dev.py lock"
        )
    unhashed = [name for name, (_, _, hashes) in pins.items() if hashes == 0]
    assert not unhashed, f"pins without a hash: {unhashed}"


def test_the_lock_says_how_it_is_refreshed() -> None:
    assert "#    python3 dev.py lock" in LOCK.read_text().splitlines()[1]


@pytest.mark.skipif(
    os.environ.get("LEGION_LLM_TEST_VERSIONS") == "latest",
    reason="dev.py test --latest runs on the newest releases, not the lock",
)
def test_the_suite_runs_on_the_locked_versions() -> None:
    environment = default_environment()
    for name, (version, marker, _) in locked().items():
        if marker and not Marker(marker).evaluate(environment):
            continue
        assert metadata.version(name) == version, f"{name} is not the locked {version}"
