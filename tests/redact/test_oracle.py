"""detect-secrets (Yelp) as an oracle, not a dependency of the package: every value its regex
plugins flag in our samples, we redact too (it is not imported at run time: see rules.py)."""

from __future__ import annotations

from legion_llm.memory.redact import Redactor
from tests.redact.samples import SAMPLES


def regex_plugins() -> list[object]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    classes = get_mapping_from_secret_type_to_class().values()
    return [
        c()
        for c in classes
        if issubclass(c, RegexBasedDetector) and c.__name__ != "IPPublicDetector"
    ]


def test_what_detect_secrets_flags_in_the_samples_we_redact() -> None:
    redactor, flagged = Redactor(), 0
    for item in SAMPLES:
        redacted = redactor.text(item.text)
        for line in item.text.split("\n"):
            for plugin in regex_plugins():
                for value in plugin.analyze_string(line):  # type: ignore[attr-defined]
                    flagged += 1
                    assert value not in redacted, (type(plugin).__name__, item.kind)
    assert flagged >= 12  # it knows GitHub, GitLab, Slack, Stripe, AWS, keys, URL passwords


def test_no_layer_but_memory_redact_is_reached_from_llm() -> None:
    """The LLM layer uses memory/ only for redaction and for the one bounded reader of JSON
    that someone else wrote (memory/untrusted.py: the CLI's envelopes, a model's text)."""
    from tests.test_layering import PACKAGE, imports

    for path in (PACKAGE / "llm").rglob("*.py"):
        for module in imports(path):
            if module.startswith("legion_llm.memory"):
                assert module in ("legion_llm.memory.redact", "legion_llm.memory.untrusted"), (
                    path,
                    module,
                )
