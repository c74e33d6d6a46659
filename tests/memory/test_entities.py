"""Entities of a sentence and whether a source states them: the rule the compaction checker
uses to refuse a name or a number a model brought in (invented text throughout)."""

from __future__ import annotations

from legion_llm.memory.entities import cut_new_entities, entities, new_entities, stated

SOURCE = (
    "The importer now retries 3 times with `backoffMs` doubling; Redis keeps the queue and "
    "MAX_RETRIES lives in config/retry.ts. About 2,000 rows per batch. Anforderungen erfüllt."
)


def test_code_spans_identifiers_numbers_and_inner_names_are_entities() -> None:
    found = entities("We moved `src/a.ts` to v2 with MAX_RETRIES at 12 and asked Redis twice.")
    assert found == ["src/a.ts", "v2", "MAX_RETRIES", "12", "Redis"]


def test_a_capitalised_word_opening_a_sentence_is_no_name() -> None:
    assert entities("Retries stop early. Workers share one queue.") == []


def test_the_vocabulary_of_a_compacted_file_is_no_entity() -> None:
    assert entities("Plan 1 Check: PASS — NOT VERIFIED") == ["1"]


def test_stated_reads_identifiers_by_case_and_numbers_as_numbers() -> None:
    assert stated("backoffMs", SOURCE) and stated("max_retries", SOURCE)
    assert stated("2,000", SOURCE) and stated("3", SOURCE)
    assert not stated("2", SOURCE)  # a digit of `2,000` is not the number 2
    assert stated("Anforderung", SOURCE)  # its first six letters: a word's other form


def test_new_entities_lists_only_what_the_source_lacks() -> None:
    text = "Redis keeps the queue, Kafka keeps the log, and retries stop after 5 tries."
    assert new_entities(text, SOURCE) == ["Kafka", "5"]
    assert new_entities(text, SOURCE, known=["Kafka", "5"]) == []


def test_a_clause_with_a_new_entity_is_cut_and_the_rest_kept() -> None:
    text = "Redis keeps the queue for the importer; the log sits in Kafka now"
    kept, new = cut_new_entities(text, SOURCE)
    assert (kept, new) == ("Redis keeps the queue for the importer", ["Kafka"])


def test_nothing_is_kept_when_what_is_left_says_nothing() -> None:
    assert cut_new_entities("It went to Kafka, done", SOURCE) == ("", ["Kafka"])


def test_a_redaction_marker_is_the_originals_secret_never_a_new_name() -> None:
    held = "hunter2" + "secret"  # built here: the repository itself holds no secret
    source = f"The job connects with postgres://app:{held}@db:5432/ledger today."
    written = "The job connects with `postgres://app:[REDACTED:password]@db:5432/ledger`."
    assert new_entities(written, source) == []
    assert new_entities("The token [REDACTED:github-token] was rotated.", "token rotated") == []


def test_each_number_of_a_ratio_is_an_entity_the_source_must_state() -> None:
    assert entities("7/7 checks passed, 2.5/3 on average") == ["7", "2.5", "3"]
    assert new_entities("3/3 retries", SOURCE) == []
    assert new_entities("3/4 retries", SOURCE) == ["4"]
