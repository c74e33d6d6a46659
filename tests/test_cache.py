"""The user's cache folder (legion_llm/cache.py): where it is, atomic writes, old versions go."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from legion_llm import cache


def test_a_file_is_kept_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache.keep("x.bin", b"data")
    assert cache.read("x.bin") == b"data" and cache.read("missing") is None
    assert sorted(p.name for p in (tmp_path / "legion-llm").iterdir()) == ["x.bin"]
    assert (tmp_path / "legion-llm").stat().st_mode & 0o777 == 0o700


def test_only_the_newest_of_a_family_stay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache.keep("other.bin", b"kept")
    for n in range(6):
        cache.keep(f"fam-{n}.json", b"{}", family="fam-", newest=2)
        path = tmp_path / "legion-llm" / f"fam-{n}.json"
        os.utime(path, ns=(n * 10**9, n * 10**9))  # a clear order
    names = sorted(p.name for p in (tmp_path / "legion-llm").iterdir())
    assert names == ["fam-4.json", "fam-5.json", "other.bin"]


def test_no_absolute_cache_home_no_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    monkeypatch.delenv("HOME", raising=False)
    cache.keep("x.bin", b"data")
    assert cache.cache_folder() is None and cache.read("x.bin") is None
    assert list(tmp_path.iterdir()) == []
