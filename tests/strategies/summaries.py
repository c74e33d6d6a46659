"""A hypothesis strategy that invents one phase of plan summaries for pattern distillation,
with the truth recorded as it builds them.

`summary_phases()` draws a `SummaryPhase` (frozen, pure data: every summary's bytes and what was
put in it); `write_phase(phase, root)` writes `.planning/phases/NN-slug/NN-MM-SUMMARY.md` under
`root` and returns a `WrittenPhase`. The truth (plan ids, each plan's outcome, each declared
`patterns-established` entry as written) comes from how the text was built, never from parsing
it. Like tests/strategies/phases.py, the module imports nothing from `legion_llm`; every choice is
drawn by hypothesis, so the same example builds the same bytes.

Dimensions spanned (each drawn independently):

- 1 to 5 plans, numbered `01..` with gaps sometimes; phase numbers 1..99 (two digits), an
  invented slug; the phase named to distil by number, padded number, folder name or path
- outcome success / partial / failed, written as `**Status**: X`, `**Status:** X`, `## Status: X`,
  a blockquote, a frontmatter `status:`, or not at all (success; or partial through a
  `## Self-Check: FAILED` heading); statuses such as `Complete with Warnings`, `Blocked`
- `patterns-established:` (or `patterns_established:`) as a block list (indented or not, with a
  `# comment` line, an entry folded over two lines) or a flow list `[a, "b, c", 'd']`; entries
  plain, double-quoted (with `\\"` escapes) or single-quoted (with `''` escapes); entries with
  backticked code and paths, colons, commas, numbers, apostrophes, German, Spanish, Japanese and
  Russian prose; an empty `[]` list; no frontmatter at all
- two to five plans establishing the same approach in identical or near-identical words; a key
  decision restating a declared entry; a declared entry that joins several approaches (over 500
  characters at times); genuine approaches worded like a status (`Export job: done in a worker,
  ...`), drawn rarely
- `key-decisions:` frontmatter lists and `## Decisions Made` sections (some "Followed plan as
  specified", some "See frontmatter key-decisions"), `## Deviations from Plan` with fix lines
  (one-line `[Rule 1 - Bug] ...; Fix: ...` or GSD's bold block with `**Fix:**`) or "None",
  a Lessons Learned section or a `**Conventions established**:` line, `## Verification` with
  ticked boxes, a count such as `12/12 tests pass`, a `## Self-Check: PASSED` heading, or none
- titles `# Phase 3 Plan 2: Name Summary`, `# Plan 03-02 Summary: Name`, `# 03-02 Summary`, none
- filler (accomplishments, task commits, files, next-phase notes) from nothing to a few KB;
  CRLF line endings; a UTF-8 BOM
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")

SUCCESS, PARTIAL, FAILED = "success", "partial", "failed"

# ---------------------------------------------------------------------------------------------
# Sentence banks: an invented project (Tallyhall: a ledger, billing and shift-scheduling app).
# Every sentence is written for this generator.
# ---------------------------------------------------------------------------------------------

ENTRIES_EN: tuple[str, ...] = (
    "Postings are append-only; a correction is a reversing posting, never an UPDATE",
    "Money is integer cents in `amount_cents` columns, formatted only at the edge by "
    "`formatMoney()`",
    "Every posting endpoint takes an `Idempotency-Key` header and stores it with a unique index",
    "Balances are derived from postings by `ledger.balance_at(account, ts)`, never stored as a "
    "running total",
    "Account codes follow the chart in `docs/ledger/accounts.md`: 4 digits, the first one naming "
    "the class",
    "Each journal entry must balance to zero before commit, enforced by a deferred constraint "
    "trigger",
    "Invoice numbers come from a per-month sequence table locked with `SELECT ... FOR UPDATE`",
    "Tax is rounded per line, half-even, and the invoice total is the sum of the rounded lines",
    "Provider webhooks are stored raw in `webhook_events` first and applied by a worker, so "
    "retries are safe",
    "Plan changes are prorated to the day with `prorate(daysUsed, daysInPeriod)` in "
    "`src/billing/proration.ts`",
    "Dunning retries at 1, 3 and 7 days after a declined charge, then the subscription is paused "
    "rather than cancelled",
    "Customer-facing amounts go through `Intl.NumberFormat` with the account's locale, never "
    "string concatenation",
    "PDF invoices are rendered from the stored invoice snapshot, not from live prices, so a "
    "reprint matches the original",
    "Shifts are stored in UTC with the site's IANA zone beside them; the UI converts with "
    "`date-fns-tz`",
    "Overlapping shifts are rejected by an exclusion constraint on "
    "`tstzrange(starts_at, ends_at)` per worker",
    "Recurring rota templates expand lazily: only the next 8 weeks are materialised and a nightly "
    "job extends the window",
    "The `useRoster()` hook owns fetching and caching; components never call the API client "
    "directly",
    "Swap requests are a small state machine (requested, accepted, approved, cancelled) kept in "
    "`src/lib/swaps.ts`",
    "Clock-in events carry a device timestamp and a server timestamp; payroll uses the server one",
    "Availability is read through one SQL view, `worker_availability_v`, so the API and the "
    "export agree",
    "Feature flags live in `config/flags.yaml` and are read once per request through "
    "`flags.get(name)`",
    "Background jobs are idempotent by design: each job id is a hash of its inputs, so a "
    "duplicate enqueue is a no-op",
    "API errors use one envelope `{ error: { code, message } }` built by `apiError()`",
    "Migrations are forward-only and each one is paired with a data backfill script in "
    "`db/backfills/`",
    "Tests freeze time with `vi.useFakeTimers()` and a fixed `2025-03-01T09:00:00Z` clock",
    "Repository functions take a transaction handle `tx` as their first argument, so callers "
    "decide the boundary",
    "Audit rows are written in the same transaction as the change they describe, never from a "
    "trigger",
    "CSV exports stream rows through a cursor, 500 at a time, to keep memory flat on large ledgers",
    "Permissions are checked in one middleware, `requireRole('finance')`, not inside handlers",
    "Retry with exponential backoff: 250 ms, then 1 s, then 4 s, capped at 3 attempts",
    "Seed data for local runs comes from `scripts/seed.ts`, which is also what the e2e suite loads",
    "Rate limits are per API key, 60 requests per minute, counted in Redis with a sliding window",
    "Currency codes are ISO 4217 strings and every amount travels with its currency, never alone",
    "Dates in URLs are `YYYY-MM-DD` in the site's zone; times never appear in a URL",
    "Long-running reports run in a worker and the page polls `/api/reports/:id` every 2 s",
    "Schema validation with zod at every API boundary: `InvoiceInput.parse(body)` before any query",
    "Partial refunds are modelled as negative invoice lines, never as edits to the paid invoice",
    "Approved timesheets are locked; an edit after approval creates an adjustment row instead",
    "The scheduler's conflict check runs in the database, not in the browser, so two managers "
    "can't double-book a worker",
    "A worker's hours are summed per ISO week and the payroll export doesn't round until the "
    "final total, so cents never drift",
    'Empty states say "No shifts yet" and offer the create button, never a blank table',
    'Labels go through `t("billing.total")`, so every string on the invoice page is translated',
)

# genuine patterns in other languages (written for this generator)
ENTRIES_INTL: tuple[str, ...] = (
    "Beträge werden als ganze Cent in `betrag_cent` gespeichert, nie als Gleitkommazahl",
    "Jede Buchung ist unveränderlich; Korrekturen entstehen als Gegenbuchung mit Verweis auf "
    "das Original",
    "Schichtpläne werden in UTC gespeichert und erst in der Oberfläche in die Zeitzone des "
    "Standorts umgerechnet",
    "Los impuestos se redondean por línea y el total de la factura es la suma de las líneas "
    "redondeadas",
    "Cada webhook se guarda sin procesar en `webhook_events` y un proceso aparte lo aplica, así "
    "los reintentos son seguros",
    "Los números de factura salen de una secuencia mensual bloqueada con `FOR UPDATE`",
    "請求書番号は月ごとの連番テーブルで採番し、`FOR UPDATE` で排他制御する",
    "シフトはUTCで保存し、画面に表示するときだけ拠点のタイムゾーンに変換する",
    "金額は最小通貨単位の整数で `amount_cents` に保存し、浮動小数点数は使わない",
    "Каждая проводка неизменяема: исправление оформляется сторнирующей проводкой",
    "Повторные попытки списания идут через 1, 3 и 7 дней, затем подписка приостанавливается",
    "Проверка прав выполняется в одном middleware `requireRole()`, а не в обработчиках",
)

# genuine patterns that carry a status word where a status would stand (drawn rarely: they
# probe whether a real approach is mistaken for how a plan ended)
ENTRIES_STATUSLIKE: tuple[str, ...] = (
    "Export job: done in a worker, never in the request, so the page stays fast",
    "Nightly calendar rebuild: complete reindex of the shift table rather than incremental patches",
    "Invoice totals: verified against the ledger on every write, not in a nightly batch",
)

# one approach in near-identical words: a template and the words its slot takes
NEAR_SAME: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Idempotency keys on every {} endpoint, stored with a unique index",
     ("posting", "refund", "payout")),
    ("Amounts are integer cents in `{}`, formatted only by `formatMoney()`",
     ("amount_cents", "fee_cents", "tax_cents")),
    ("Shift times are stored in UTC with the site zone beside them; the {} UI converts them",
     ("roster", "timesheet", "availability")),
    ("Every {} PDF is rendered from its stored snapshot, never from live prices",
     ("invoice", "credit note", "receipt")),
    ("Webhook events from {} are stored raw first and applied by a worker, so retries are safe",
     ("Stripe", "Adyen", "the bank feed")),
    ("Jede {} erhält einen Idempotenzschlüssel mit eindeutigem Index in der Datenbank",
     ("Buchung", "Rückbuchung", "Auszahlung")),
    ("Los {} se redondean por línea antes de sumar el total de la factura",
     ("impuestos", "descuentos", "recargos")),
)  # fmt: skip

DECISIONS: tuple[str, ...] = (
    "Kept proration in the billing service rather than the database: the rules change with pricing",
    "Used a deferred constraint trigger for journal balance because row-level checks fire too "
    "early",
    "Chose `pg-boss` over a Redis queue so that jobs commit in the same transaction as the data",
    "Stored the site's IANA zone name, not an offset, so daylight-saving changes are handled",
    "Rendered invoices server-side with the same template as the email, one source of layout",
    "Swap approval goes to the manager of the receiving shift, as the rota policy asks",
    "Rejected a generic rules engine for dunning; three fixed retry steps cover every plan",
    "Die Rundung passiert pro Zeile, weil die Steuerberaterin das so verlangt",
)
NOT_DECISIONS: tuple[str, ...] = (
    "Followed plan as specified",
    "Followed plan as specified - no deviations in approach",
    "None",
)

FIXES: tuple[tuple[str, str], ...] = (
    ("Balances drifted under concurrent postings",
     "recompute balances inside the posting transaction so readers never see a half write"),
    ("Invoice numbers skipped after a rollback",
     "take the next number inside the same transaction that inserts the invoice"),
    ("The overlap check missed back-to-back shifts",
     "use a half-open `[)` range so a shift ending at 17:00 does not clash with one starting "
     "at 17:00"),
    ("The webhook handler timed out on large payloads",
     "acknowledge with 200 first and hand the payload to the worker queue"),
    ("Scheduler tests broke around midnight UTC",
     "freeze the clock in every scheduler test instead of reading `Date.now()`"),
    ("Rounding differed between the PDF and the API",
     "route both through `roundLine()` so there is exactly one rounding rule"),
)  # fmt: skip

LESSONS: tuple[str, ...] = (
    "Write the reversing posting test before the posting code; it caught two sign errors early",
    "Keep money formatting out of components: one helper, one rounding rule, one locale source",
    "Time-zone bugs show up only near midnight, so scheduler tests run at 23:59 and 00:01",
    "Model every state change of a swap request as a row, so support can replay what happened",
)

NAMES: tuple[str, ...] = (
    "Ledger postings",
    "Invoice numbering",
    "Dunning retries",
    "Shift swaps",
    "Roster templates",
    "Webhook intake",
    "Tax rounding",
    "Audit trail",
    "CSV export",
    "Clock-in API",
    "Schichttausch",
    "Facturación mensual",
    "請求書の採番",
    "Сторно проводок",
)
SLUGS: tuple[str, ...] = (
    "ledger-core",
    "billing",
    "invoice-numbering",
    "shift-scheduler",
    "rota-templates",
    "payments-webhooks",
    "audit-and-exports",
    "timesheets",
)

ACCOMPLISHMENTS: tuple[str, ...] = (
    "Postings table with a reversing-entry helper and its migration",
    "Invoice sequence per month, with a lock test that runs two writers at once",
    "Roster page lists the next four weeks of shifts for a site",
    "Swap request form with validation and an approval queue for managers",
    "Webhook intake endpoint with a raw event store and a retry worker",
    "Nightly export of approved timesheets to the payroll folder",
    "Balance report per account and period, paginated",
)
PATHS: tuple[str, ...] = (
    "src/ledger/postings.ts",
    "src/ledger/balance.ts",
    "src/billing/invoices.ts",
    "src/billing/proration.ts",
    "src/scheduler/roster.tsx",
    "src/lib/swaps.ts",
    "db/migrations/0007_postings.sql",
    "db/migrations/0012_invoice_seq.sql",
    "tests/ledger/postings.test.ts",
    "tests/scheduler/swaps.test.ts",
)
PROSE: tuple[str, ...] = (
    "The roster page now reads from the availability view, so the numbers on screen match the "
    "export that payroll receives every Monday.",
    "Invoices created before this plan keep their old numbers; only new invoices draw from the "
    "monthly sequence.",
    "Two follow-ups are left for the next phase: the manager digest email and the CSV import of "
    "historical shifts.",
    "The posting service was split from the HTTP layer, which made the balance tests run without "
    "a server and cut the suite time.",
    "Support asked for the swap history to be visible; the rows are stored, the screen comes "
    "later.",
)
CHECKS: tuple[str, ...] = (
    "Postings replay to the same balances",
    "Two concurrent writers never share an invoice number",
    "A shift ending at 17:00 and one starting at 17:00 both save",
    "Webhook retries apply each event once",
    "Exports open in the payroll tool",
)

# ---------------------------------------------------------------------------------------------
# The data a strategy draws
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanTruth:
    """One plan summary as built: its id, outcome, declared entries and its bytes."""

    plan_id: str  # `03-02`
    file_name: str  # `03-02-SUMMARY.md`
    outcome: str  # success | partial | failed
    established: tuple[str, ...]  # every patterns-established entry as written (unquoted)
    decisions: tuple[str, ...]  # the key decisions it records (some not worth reusing)
    fixes: tuple[str, ...]  # the fix of every deviation it records
    features: frozenset[str]
    text: str  # as built, LF endings, no BOM
    data: bytes  # what is written (CRLF and a BOM when drawn)


@dataclass(frozen=True, repr=False)
class SummaryPhase:
    number: int
    slug: str
    phase_spec: str  # how the phase is named to distil: `3`, `03`, `03-billing` or a path
    plans: tuple[PlanTruth, ...]
    shared: tuple[tuple[str, ...], ...] = ()  # plan ids establishing one approach together

    @property
    def token(self) -> str:
        return f"{self.number:02d}"

    @property
    def folder(self) -> str:
        return f".planning/phases/{self.token}-{self.slug}"

    @property
    def plan_ids(self) -> tuple[str, ...]:
        return tuple(p.plan_id for p in self.plans)

    @property
    def features(self) -> frozenset[str]:
        found = {f for p in self.plans for f in p.features}
        found |= {"shared"} if self.shared else set()
        found |= {"shared_three"} if any(len(s) >= 3 for s in self.shared) else set()
        found |= {"shared_four_plus"} if any(len(s) >= 4 for s in self.shared) else set()
        return frozenset(found)

    def __repr__(self) -> str:
        """What a falsifying example shows: the folder and every summary's text as built."""
        lines = [f"SummaryPhase {self.folder} (distilled as {self.phase_spec!r})"]
        for plan in self.plans:
            how = [x for x in ("crlf", "bom") if x in plan.features]
            lines.append(
                f"--- {plan.file_name}: {plan.outcome}" + (f" ({', '.join(how)})" if how else "")
            )
            lines.append(plan.text.rstrip("\n"))
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """hypothesis prints a falsifying example through this (else field by field)."""
        printer.text(repr(self))

    def declared(self) -> list[tuple[str, str]]:
        """(plan id, entry) for every entry a plan that did not fail declares."""
        return [(p.plan_id, e) for p in self.plans if p.outcome != FAILED for e in p.established]


@dataclass(frozen=True)
class WrittenPhase:
    phase: SummaryPhase
    root: Path
    phase_dir: Path
    files: dict[str, Path] = field(default_factory=dict)  # plan id -> its summary


def write_phase(phase: SummaryPhase, root: Path) -> WrittenPhase:
    """The phase's summaries written under `root` (which must exist)."""
    folder = root / phase.folder
    folder.mkdir(parents=True)
    files = {}
    for plan in phase.plans:
        path = folder / plan.file_name
        path.write_bytes(plan.data)
        files[plan.plan_id] = path
    return WrittenPhase(phase, root, folder, files)


# ---------------------------------------------------------------------------------------------
# YAML as a person writes it
# ---------------------------------------------------------------------------------------------

_PLAIN_START = set("-?:,[]{}#&*!|>'\"%@")


def plain_ok(value: str, flow: bool) -> bool:
    """Whether `value` can stand unquoted (a backtick start is allowed: GSD writes it)."""
    if not value or value[0] in _PLAIN_START or value != value.strip() or " #" in value:
        return False
    return not (flow and any(c in value for c in ",[]{}"))


def quoted(value: str, style: str) -> str:
    if style == "single":
        return "'" + value.replace("'", "''") + "'"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def scalar(value: str, style: str, flow: bool) -> str:
    """`value` plain, double- or single-quoted (plain falls back to double quotes)."""
    if style == "plain" and plain_ok(value, flow):
        return value
    return quoted(value, "single" if style == "single" else "double")


# ---------------------------------------------------------------------------------------------
# Drawing
# ---------------------------------------------------------------------------------------------


@functools.cache
def ints(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


def choose(draw: st.DrawFn, options: Sequence[T]) -> T:
    return options[draw(ints(0, len(options) - 1))]


def chance(draw: st.DrawFn, one_in: int) -> bool:
    return draw(ints(1, one_in)) == 1


def distinct(draw: st.DrawFn, options: Sequence[T], low: int, high: int) -> list[T]:
    top = min(high, len(options))
    indices = draw(
        st.lists(ints(0, len(options) - 1), min_size=min(low, top), max_size=top, unique=True)
    )
    return [options[i] for i in indices]


def draw_entry(draw: st.DrawFn, features: set[str]) -> str:
    kind = choose(draw, ("en",) * 12 + ("intl",) * 4 + ("statuslike",))
    if kind == "intl":
        features.add("non_ascii")
        return choose(draw, ENTRIES_INTL)
    if kind == "statuslike":
        features.add("statuslike")
        return choose(draw, ENTRIES_STATUSLIKE)
    if chance(draw, 30):  # a long entry: several approaches in one sentence
        features.add("long_entry")
        return "; ".join(distinct(draw, ENTRIES_EN, 3, 6))
    return choose(draw, ENTRIES_EN)


def established_lines(draw: st.DrawFn, entries: list[str], features: set[str]) -> list[str]:
    """The frontmatter lines declaring `entries`."""
    key = "patterns_established" if chance(draw, 5) else "patterns-established"
    if key == "patterns_established":
        features.add("key_underscore")
    if not entries:
        features.add("empty_list")
        return [f"{key}: []"]
    flow = chance(draw, 3)
    features.add("flow" if flow else "block")
    styles = []
    for entry in entries:
        style = choose(draw, ("plain", "plain", "double", "single"))
        if style != "plain" or not plain_ok(entry, flow):
            features.add("single_quoted" if style == "single" else "double_quoted")
        if '"' in entry and style != "single":
            features.add("escaped_double_quote" + ("_flow" if flow else ""))
        if "'" in entry and style == "single":
            features.add("doubled_single_quote" + ("_flow" if flow else ""))
        if "," in entry and style != "plain":
            features.add("comma_in_quotes")
        styles.append(style)
    if flow:
        inner = ", ".join(scalar(e, s, True) for e, s in zip(entries, styles, strict=True))
        return [f"{key}: [{inner}]"]
    indent = choose(draw, ("  ", "  ", ""))
    lines = [f"{key}:"]
    for number, (entry, style) in enumerate(zip(entries, styles, strict=True)):
        if number and chance(draw, 10):
            lines.append(f"{indent}  # {choose(draw, ('from the review', 'see 02-01'))}")
            features.add("comment_in_list")
        words = entry.split(" ")
        if style == "plain" and plain_ok(entry, False) and len(words) > 8 and chance(draw, 8):
            cut = draw(ints(3, len(words) - 3))
            lines.append(f"{indent}- {' '.join(words[:cut])}")
            lines.append(f"{indent}  {' '.join(words[cut:])}")
            features.add("folded_entry")
            continue
        lines.append(f"{indent}- {scalar(entry, style, False)}")
    return lines


def status_value(draw: st.DrawFn, outcome: str) -> str:
    if outcome == SUCCESS:
        return choose(draw, ("Complete", "Complete", "Completed", "Done"))
    if outcome == PARTIAL:
        return choose(draw, ("Partial", "Complete with Warnings", "Partially complete"))
    return choose(draw, ("Failed", "Blocked", "Failed — verification did not pass"))


@st.composite
def plan_truths(
    draw: st.DrawFn,
    plan_id: str,
    phase_number: int,
    slug: str,
    shared_entries: tuple[str, ...],
) -> PlanTruth:
    features: set[str] = set()
    outcome = choose(draw, (SUCCESS,) * 5 + (PARTIAL,) * 2 + (FAILED,) * 2)
    features.add(outcome)
    has_frontmatter = not chance(draw, 8) or bool(shared_entries)
    status_form = choose(draw, ("bold", "bold_inside", "heading", "quote", "frontmatter", "none"))
    if status_form == "frontmatter" and not has_frontmatter:
        status_form = "bold"
    if status_form == "none" and outcome == FAILED:
        status_form = "bold"
    if status_form == "none" and outcome == PARTIAL:
        status_form = "none_self_check_failed"
    features.add(f"status_{status_form}")
    plan_number = plan_id.split("-")[1]
    name = choose(draw, NAMES)

    entries: list[str] = []
    if has_frontmatter:
        drawn = [draw_entry(draw, features) for _ in range(draw(ints(0, 4)))]
        entries = list(dict.fromkeys(drawn))
        for shared in shared_entries:
            entries.insert(draw(ints(0, len(entries))), shared)
        entries = list(dict.fromkeys(entries))
        if any("`" in e for e in entries):
            features.add("code")
        if any(":" in e for e in entries):
            features.add("colon")
        if any(any(c.isdigit() for c in e) for e in entries):
            features.add("number")
    else:
        features.add("no_frontmatter")

    decisions = distinct(draw, DECISIONS, 0, 2)
    if entries and chance(draw, 5):  # a decision restating a declared entry, as GSD often does
        decisions.append(f"{choose(draw, entries)}, as the review asked")
        features.add("decision_restates_entry")
    if chance(draw, 3):
        decisions.insert(0, choose(draw, NOT_DECISIONS))
        features.add("followed_plan")
    decision_form = choose(draw, ("frontmatter", "section", "both", "see_frontmatter"))
    if not has_frontmatter:
        decision_form = "section"
    fixes = distinct(draw, FIXES, 0, 2)
    fix_form = choose(draw, ("line", "gsd"))
    if fixes:
        features.add(f"fix_{fix_form}")

    # ---- frontmatter
    lines: list[str] = []
    if has_frontmatter:
        blocks: list[list[str]] = [
            [f"phase: {phase_number:02d}-{slug}"],
            [f"plan: {plan_number}"],
            [f"subsystem: {slug.split('-')[0]}"],
            [
                "tags: ["
                + ", ".join(
                    distinct(
                        draw, ("ledger", "billing", "postgres", "ui", "scheduler", "webhooks"), 1, 3
                    )
                )
                + "]"
            ],
            ["key-files:", "  created:"]
            + [f"    - {p}" for p in distinct(draw, PATHS, 1, 3)]
            + ["  modified:"]
            + [f"    - {p}" for p in distinct(draw, PATHS, 0, 2)],
        ]
        if decisions and decision_form in ("frontmatter", "both", "see_frontmatter"):
            blocks.append(
                ["key-decisions:"]
                + [f"  - {scalar(d, choose(draw, ('plain', 'double')), False)}" for d in decisions]
            )
            features.add("key_decisions_frontmatter")
        blocks.append(established_lines(draw, entries, features))
        if status_form == "frontmatter":
            blocks.append([f"status: {status_value(draw, outcome).lower()}"])
        blocks.append([f"duration: {draw(ints(4, 95))}min"])
        blocks.append([f"completed: 2025-{draw(ints(1, 12)):02d}-{draw(ints(1, 28)):02d}"])
        order = draw(st.permutations(range(len(blocks))))
        lines += ["---", *(line for i in order for line in blocks[i]), "---", ""]

    # ---- title and status
    title = choose(draw, ("phase_plan", "plan_summary", "bare", "none"))
    features.add(f"title_{title}")
    if title == "phase_plan":
        lines.append(f"# Phase {phase_number} Plan {int(plan_number)}: {name} Summary")
    elif title == "plan_summary":
        lines.append(f"# Plan {plan_id} Summary: {name}")
    elif title == "bare":
        lines.append(f"# {plan_id} Summary")
    lines.append("")
    if status_form not in ("frontmatter", "none", "none_self_check_failed"):
        value = status_value(draw, outcome)
        lines.append(
            {
                "bold": f"**Status**: {value}",
                "bold_inside": f"**Status:** {value}",
                "heading": f"## Status: {value}",
                "quote": f"> **Status:** {value}",
            }[status_form]
        )
        lines.append("")
    if chance(draw, 2):
        lines += [f"**{choose(draw, ACCOMPLISHMENTS)}**", ""]

    # ---- body
    filler = draw(ints(0, 10))
    if filler:
        features.add("filler")
    sections: list[list[str]] = []
    sections.append(
        ["## Accomplishments"] + [f"- {a}" for a in distinct(draw, ACCOMPLISHMENTS, 1, 4)]
    )
    if filler > 3:
        sections.append(
            ["## Task Commits"]
            + [
                f"{n}. **Task {n}: {choose(draw, ACCOMPLISHMENTS)}** - `{draw(ints(0x1000000, 0xFFFFFFF)):07x}` (feat)"
                for n in range(1, draw(ints(2, 4)) + 1)
            ]
        )
        sections.append(
            ["## Files Created/Modified"]
            + [
                f"- `{p}` - {choose(draw, ('new', 'updated', 'tests'))}"
                for p in distinct(draw, PATHS, 1, 5)
            ]
        )
    if decisions and decision_form in ("section", "both"):
        sections.append(["## Decisions Made"] + [f"- {d}" for d in decisions])
        features.add("decisions_section")
    elif decision_form == "see_frontmatter" and decisions:
        sections.append(["## Decisions Made", "- See frontmatter key-decisions"])
        features.add("decisions_see_frontmatter")
    elif chance(draw, 2):
        sections.append(["## Decisions Made", "", "None - followed plan as specified."])
    deviation = ["## Deviations from Plan", ""]
    if not fixes:
        deviation.append("None - plan executed exactly as written.")
    for n, (problem, fix) in enumerate(fixes, 1):
        if fix_form == "line":
            deviation.append(f"- {n}. [Rule 1 - Bug] {problem}; Fix: {fix}")
        else:
            deviation += [
                f"**{n}. [Rule 1 - Bug] {problem}**",
                "- **Found during:** Task 2",
                f"- **Issue:** {problem}",
                f"- **Fix:** {fix}",
                f"- **Files modified:** `{choose(draw, PATHS)}`",
                f"- **Committed in:** `{draw(ints(0x1000000, 0xFFFFFFF)):07x}`",
                "",
            ]
    sections.append(deviation)
    marked = choose(draw, ("none", "none", "none", "lessons", "conventions"))
    if marked == "lessons":
        sections.append(["## Lessons Learned"] + [f"- {x}" for x in distinct(draw, LESSONS, 1, 2)])
        features.add("lessons")
    elif marked == "conventions":
        sections.append(
            ["## Handoff Context", f"- **Conventions established**: {choose(draw, LESSONS)}"]
        )
        features.add("conventions_line")
    verification = choose(draw, ("ticks", "count", "self_check", "none"))
    features.add(f"verification_{verification}")
    if verification == "ticks":
        checks = distinct(draw, CHECKS, 1, 4)
        open_one = outcome != SUCCESS and len(checks) > 1 and chance(draw, 2)
        sections.append(
            ["## Verification"]
            + [f"- [{' ' if open_one and i == 0 else 'x'}] {c}" for i, c in enumerate(checks)]
        )
    elif verification == "count":
        total = draw(ints(1, 60))
        passed = total if outcome == SUCCESS else draw(ints(0, total))
        sections.append(
            [
                "## Verification",
                choose(
                    draw,
                    (
                        f"{passed}/{total} tests pass.",
                        f"{passed} of {total} checks passed after the change.",
                        f"`npm test`: {passed} passed",
                    ),
                ),
            ]
        )
    elif verification == "self_check" and status_form != "none_self_check_failed":
        sections.append(
            ["## Self-Check: PASSED" if outcome == SUCCESS else "## Self-Check: FAILED"]
        )
    if status_form == "none_self_check_failed":
        sections.append(["## Self-Check: FAILED", "", "- [ ] One check still open"])
    if filler:
        sections.append(
            ["## Next Phase Readiness"] + [choose(draw, PROSE) + "\n" for _ in range(filler)]
        )
    if chance(draw, 2):
        sections.append(["## Issues Encountered", "", "None"])
    order = draw(st.permutations(range(len(sections))))
    for i in order:
        lines += [*sections[i], ""]

    text = "\n".join(lines).rstrip("\n") + "\n"
    crlf, bom = chance(draw, 5), chance(draw, 6)
    if crlf:
        features.add("crlf")
    if bom:
        features.add("bom")
    if len(text) > 3000:
        features.add("over_3kb")
    if len(text) < 400:
        features.add("under_400b")
    raw = text.replace("\n", "\r\n") if crlf else text
    data = (b"\xef\xbb\xbf" if bom else b"") + raw.encode("utf-8")
    return PlanTruth(
        plan_id=plan_id,
        file_name=f"{plan_id}-SUMMARY.md",
        outcome=outcome,
        established=tuple(entries),
        decisions=tuple(decisions),
        fixes=tuple(fix for _, fix in fixes),
        features=frozenset(features),
        text=text,
        data=data,
    )


@st.composite
def summary_phases(draw: st.DrawFn) -> SummaryPhase:
    """One phase folder with 1-5 plan summaries (module docstring)."""
    number = draw(ints(1, 99))
    slug = choose(draw, SLUGS)
    count = draw(ints(1, 5))
    plan_numbers = sorted(
        draw(st.lists(ints(1, 9), min_size=count, max_size=count, unique=True))
        if chance(draw, 4)
        else range(1, count + 1)
    )
    plan_ids = [f"{number:02d}-{n:02d}" for n in plan_numbers]
    shared: dict[str, list[str]] = {p: [] for p in plan_ids}
    groups: list[tuple[str, ...]] = []
    if count >= 2 and chance(draw, 3):
        size = min(count, choose(draw, (2, 2, 3, 3, count, count)))  # or every plan of the phase
        members = sorted(distinct(draw, plan_ids, size, size))
        template, slots = choose(draw, NEAR_SAME)
        identical = size > len(slots) or chance(draw, 4)
        words = [slots[0]] * size if identical else distinct(draw, slots, size, size)
        for member, word in zip(members, words, strict=True):
            shared[member].append(template.format(word))
        groups.append(tuple(members))
    plans = tuple(draw(plan_truths(p, number, slug, tuple(shared[p]))) for p in plan_ids)
    spec = choose(draw, ("number", "padded", "folder", "path"))
    phase_spec = {
        "number": str(number),
        "padded": f"{number:02d}",
        "folder": f"{number:02d}-{slug}",
        "path": f".planning/phases/{number:02d}-{slug}",
    }[spec]
    return SummaryPhase(number, slug, phase_spec, plans, tuple(groups))
