"""Calibration texts for the grounding thresholds (memory/terms.py), written for this repo.

GOOD holds what a careful model writes for a fixture phase's plans: paraphrased, compressed,
reordered, never copied wholesale. GENERIC holds content-free status lines and PLACEHOLDERS the
lazy stand-ins seen from careless models. The swapped-plan texts are made in the tests by
giving each plan another plan's good text.
"""

from __future__ import annotations

# case -> plan id -> (deliverable, decision or "")
GOOD: dict[str, dict[str, tuple[str, str]]] = {
    "legion-spec-billing-exports": {
        "03-01": (
            "CSV export service with a fixed column order that pages through invoices by keyset "
            "and streams rows, tested for header order, amounts in cents and memory use.",
            "Keyset pagination on issued_at and id replaced OFFSET, which got slow on big ledgers.",
        ),
        "03-02": (
            "Download endpoint that streams the export for a validated date range, behind a new "
            "billing:export permission for finance and owner roles.",
            "A separate billing:export grant rather than billing:read, so bookkeepers can read "
            "invoices without pulling the ledger.",
        ),
        "03-03": (
            "Scheduled exports: a migration for schedules, a worker with bounded retries, and a "
            "column reference written for accountants.",
            "Scheduled files land in object storage and the email sends a signed link that "
            "expires after 7 days.",
        ),
    },
    "gsd-frontmatter-session-auth": {
        "02-01": (
            "Password hashing with argon2id, rehashing on login when parameters change, a "
            "credentials table of its own, and sign-up validation with email normalisation.",
            "Unknown emails are verified against a dummy hash so timing does not leak whether "
            "an account exists.",
        ),
        "02-02": (
            "Server-side sessions: opaque cookies whose token hashes live in Postgres, rotated "
            "at login, with sliding expiry and a revoke-all-other-sessions action.",
            "Sessions are stored server-side instead of JWTs, and only the token hash is kept.",
        ),
        "02-03": (
            "Web login and sign-up screens sharing one form, plus throttling of failed logins "
            "per account and per address in Postgres.",
            "No CAPTCHA in this milestone; account and address throttling together instead.",
        ),
    },
    "partial-and-failed-plans": {
        "04-01": (
            "Search index mapping with analyzers and boosts and a bulk indexer that swaps an "
            "alias; a timing run over the whole corpus.",
            "Batches of 500 documents: 100 meant too many round trips, 2000 spiked memory.",
        ),
        "04-02": (
            "Change-feed consumer for publish and edit events with a lag metric and alert; "
            "deletes only partly propagate when a page moved sections first.",
            "The consumer reads the existing transactional outbox, not a new broker.",
        ),
        "04-03": (
            "Query tokenizer handling quoted phrases and field prefixes; fuzzy matching failed "
            "and the relevance suite was skipped.",
            "Quoted phrases always match exactly and are never fuzzed.",
        ),
    },
    "prose-status-requirements": {
        "05-01": (
            "Hub-side MQTT ingest of JSON readings into a day-partitioned table with nightly "
            "retention and a backfill command for benches that were offline.",
            "Readings are partitioned by day because dropping a partition is instant on the Pi.",
        ),
        "05-02": (
            "Bench firmware samples soil and air sensors every 30 seconds, publishes the median "
            "of three reads over MQTT, and reconnects with backoff.",
            "Each payload carries a SHA-256 digest so corrupted radio frames are dropped.",
        ),
        "05-03": (
            "Hub screen grid with the latest reading per bench over a websocket and a stale "
            "marker; the seven-day sparkline is not done.",
            "One websocket for all benches, since the kiosk browser allows only six sockets.",
        ),
    },
    "ten-plan-phase": {
        "05-01": ("v9 settings schema and a loader that validates and upgrades v8 settings.", ""),
        "05-02": ("Idempotent migration of v8 state sections to v9, with a backup copy.", ""),
        "05-05": (
            "Findings become review blockers or suggestions; panel mode uses two reviewers.",
            "",
        ),
        "05-09": ("Migration guide written and the README quick start updated.", ""),
    },
}

GENERIC = [
    "Implemented the planned changes.",
    "Completed all tasks in the plan successfully.",
    "Work was done as described in the plan.",
    "Made the necessary updates and fixed the issues.",
    "Delivered the plan's deliverables as expected.",
    "Various changes were made to several files.",
]

PLACEHOLDERS = [
    "x", "X", "xx", "TBD", "todo", "n/a", "N/A", "-", "...", "", "   ", "(no deliverable proposed)",
    "None recorded.", "None recorded", "Plan x", "plan 1", "See the plan summary.", "placeholder",
    "Lorem ipsum dolor sit amet", "x x x", "a b c", "none", "| x | x |", "?", ", `a.test.ts`",
]  # fmt: skip
