"""Topic matching for prose (near-duplicate patterns, same-topic learnings), on pairs written
apart from the fixtures the thresholds were set on."""

from __future__ import annotations

from legion_llm.memory.signatures.topics import TopicIndex, identifiers, stem, topic_terms, words

STORED = {
    "helm": ("Run database migrations in a Helm pre-upgrade hook Job",
             "Migrations ran in an init container on every replica and deadlocked. A `pre-upgrade` "
             "hook Job runs them once per release."),
    "gin": ("Trigram GIN index for product search",
            "EXPLAIN ANALYZE showed a sequential scan; `CREATE INDEX ... USING gin (name "
            "gin_trgm_ops)` brought p95 to 45 ms."),
    "csrf": ("One CSRF middleware for every state-changing route",
             "Double-submit tokens bound to the session id, mounted before every router in "
             "`src/http/csrf.ts`."),
    "vite": ("Vite dev server needs --host inside Docker",
             "Without `--host 0.0.0.0` the dev server listens on localhost only and the browser "
             "gets connection refused."),
}  # fmt: skip


def index() -> TopicIndex:
    return TopicIndex((key, topic_terms(f"{t}\n{b}")) for key, (t, b) in STORED.items())


def best(title: str, body: str) -> object:
    return index().best(topic_terms(f"{title}\n{body}"))


def test_a_paraphrase_is_the_same_topic() -> None:
    found = best("Database migrations belong in a pre-upgrade Helm hook",
                 "Init containers ran the migration on each replica; a Helm `pre-upgrade` hook Job "
                 "runs it once.")  # fmt: skip
    assert found is not None and found.key == "helm" and found.same  # type: ignore[attr-defined]
    vite = best("Vite inside a container must listen on 0.0.0.0",
                "Start the dev server with `vite --host`; otherwise connections from the host are "
                "refused.")  # fmt: skip
    assert vite.key == "vite" and vite.same  # type: ignore[attr-defined]


def test_a_neighbouring_topic_is_related_not_the_same() -> None:
    found = best("Helm hooks need a hook-delete-policy",
                 "Old hook Jobs block the next release unless "
                 "`helm.sh/hook-delete-policy: before-hook-creation` is set.")  # fmt: skip
    assert found.key == "helm" and found.related and not found.same  # type: ignore[attr-defined]


def test_an_unrelated_topic_matches_nothing() -> None:
    assert best("Kafka consumer commits offsets manually",
                "Auto-commit lost messages on rebalance; `enable.auto.commit=false`.") is None  # fmt: skip
    assert TopicIndex([]).best("anything") is None and index().rank("") == []


def test_terms_keep_identifiers_whole_and_stem_words() -> None:
    text = "Run `pnpm --filter api test` on src/db/index.ts with --root and build:packages"
    assert identifiers(text) == ["pnpm --filter api test", "src/db/index.ts", "--root",
                                 "build:packages"]  # fmt: skip
    terms = topic_terms(text).split()
    assert terms[:4] == ["pnpm_filter_api_test", "src_db_index_ts", "root", "build_packages"]
    assert [stem(w) for w in ("queries", "fixes", "passes", "posted", "named", "repo")] == [
        "query", "fix", "pass", "post", "named", "repository",
    ]  # fmt: skip
    assert words("The tests require the repository") == ["test", "repository"]
    assert topic_terms("Port 5433", extra=["Docker"]).split() == ["port", "n5433", "docker"]
