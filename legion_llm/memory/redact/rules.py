"""The secret formats we recognise, as data: one `Rule` per format, most specific first.

Each rule names the marker kind (`[REDACTED:<kind>]`), its regex, the group that is the secret
(the rest of the match stays readable: `https://hooks.slack.com/services/[REDACTED:...]`), and
keywords: lower-case literals of which one must occur in the text before the regex runs (the
gitleaks way of keeping a large rule set cheap). Formats follow the providers' published token
layouts; every prefix-style rule is fenced by "not a token character" on both sides, so a token
is never cut out of the middle of a longer word, a hash or a path.

Assignments (`DB_PASSWORD=...`, `"api_key": "..."`) and passwords in URLs need more than a regex
(placeholders, entropy, name parts): they are in assignments.py.

detect-secrets (Yelp) was evaluated as the source of these rules; see README "What legion-llm
never stores" for why it is not imported at run time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    group: int = 0
    min_entropy: float = 0.0  # Shannon bits per character of the secret, when > 0
    min_classes: int = 0  # how many of upper case, lower case and digits the secret must mix
    # (both measured on the pattern's group named `body` when it has one: the random part of a
    # format whose prefix or suffix is fixed, so `AC` + 32 zeros, a repeated word or words
    # joined by `_` after `:AA` are no key)


_L = r"(?<![A-Za-z0-9_])"  # not preceded by a token character
_R = r"(?![A-Za-z0-9_])"  # not followed by one
_LD = r"(?<![A-Za-z0-9_-])"  # the same where '-' belongs to the token
_RD = r"(?![A-Za-z0-9_-])"


def _rule(
    kind: str,
    pattern: str,
    keywords: tuple[str, ...],
    *,
    group: int = 0,
    flags: int = 0,
    min_entropy: float = 0.0,
    min_classes: int = 0,
) -> Rule:
    return Rule(kind, re.compile(pattern, flags), keywords, group, min_entropy, min_classes)


_PEM = r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
# a private key block's first and last lines (pipeline/compact/logs.py keeps such a block whole)
PEM_BEGIN = re.compile(_PEM)
PEM_END = re.compile(_PEM_END)
# a line break, or one written as an escape inside a JSON or code string ("\n", "\r\n")
_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"
_PEM_BODY = rf"(?:{_BREAK}(?:[A-Za-z][\w-]*: (?:(?!\\n)[^\r\n])*|[ \t]*))*(?:{_BREAK}[ \t]*[A-Za-z0-9+/=]{{16,}}[ \t]*)+"
PEM_MAX_CHARS = 200_000  # a whole block with its END line (a large PGP key is tens of kB)
# one character of a block's body: never the start of another BEGIN line, so a BEGIN line with
# no END line is given up at the next BEGIN line, and every character is scanned for at most one
# BEGIN line (linear in unmatched BEGIN lines, not 200,000 characters each)
_NOT_BEGIN = r"(?:[^-]|-(?!----BEGIN))"

_AWS_ID = r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"
_AWS_ID_KEYWORDS = ("akia", "asia", "abia", "acca", "a3t")

# fmt: off
RULES: tuple[Rule, ...] = (
    # A whole PEM / OpenSSH / PGP private key block, also with literal "\n" escapes (JSON), or
    # cut off before its END line (then the base64 lines that follow the BEGIN line, with real
    # or escaped line breaks).
    _rule("private-key", rf"{_PEM}(?:{_NOT_BEGIN}{{16,{PEM_MAX_CHARS}}}?{_PEM_END}|{_PEM_BODY})", ("private key",)),
    _rule("github-token", rf"{_L}(?:gh[pousr]_[A-Za-z0-9]{{36,251}}|github_pat_[A-Za-z0-9_]{{60,251}}){_R}",
          ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _rule("gitlab-token",
          rf"{_LD}(?:(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas|glffct)-"
          rf"[A-Za-z0-9_-](?:[A-Za-z0-9_.-]{{18,1022}}[A-Za-z0-9_-])|GR1348941[A-Za-z0-9_-]{{20,50}}){_RD}",
          ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-",
           "gloas-", "glffct-", "gr1348941")),
    _rule("slack-bot-token", rf"{_LD}xoxb-[0-9]{{6,16}}-[A-Za-z0-9-]{{10,}}", ("xoxb-",)),
    _rule("slack-user-token", rf"{_LD}xoxp-[0-9]{{6,16}}-[A-Za-z0-9-]{{10,}}", ("xoxp-",)),
    _rule("slack-app-token", rf"{_LD}xapp-[0-9]-[A-Z0-9]{{6,}}-[0-9]{{6,}}-[A-Za-z0-9]{{16,}}", ("xapp-",)),
    _rule("slack-token", rf"{_LD}(?:xox[aorse]|xoxe\.xox[bp])-[A-Za-z0-9-]{{16,}}", ("xoxa-", "xoxo-", "xoxr-", "xoxs-", "xoxe")),
    _rule("slack-webhook",
          r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_-]{6,}/[A-Za-z0-9_-]{6,}(?:/[A-Za-z0-9_-]{6,})?)",
          ("hooks.slack.com",), group=1),
    _rule("stripe-key", rf"{_L}(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{{10,247}}{_R}", ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_")),
    _rule("stripe-webhook-secret", rf"{_L}whsec_[A-Za-z0-9+/=]{{24,}}", ("whsec_",)),
    _rule("aws-access-key-id", _AWS_ID, _AWS_ID_KEYWORDS),
    _rule("aws-secret-key",
          r"(?i:aws)[\w. -]{0,20}?(?i:secret|key)[\w.\s\"'-]{0,20}?(?:[:=]|=>|\s)\s*[\"']?(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
          ("aws",), group=1, min_entropy=3.5, min_classes=3),
    # An AWS secret key written next to its key id ("AKIA... wJalr...", a table row of both).
    _rule("aws-secret-key",
          rf"{_AWS_ID}[\s\S]{{0,80}}?(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{{40}})(?![A-Za-z0-9/+=])",
          _AWS_ID_KEYWORDS, group=1, min_entropy=3.5, min_classes=3),
    _rule("google-api-key", rf"{_LD}AIza[0-9A-Za-z_-]{{35}}{_RD}", ("aiza",)),
    _rule("google-oauth-secret", rf"{_LD}GOCSPX-[A-Za-z0-9_-]{{24,}}{_RD}", ("gocspx-",)),
    _rule("google-oauth-token", rf"{_L}ya29\.[0-9A-Za-z_-]{{30,}}{_RD}", ("ya29.",)),
    _rule("anthropic-key",
          rf"{_LD}sk-ant-(?:(?:api|admin|oat|ort|sid)[0-9]{{2}}-[A-Za-z0-9_-]{{16,}}|[a-z]{{2,12}}[0-9]{{0,3}}-[A-Za-z0-9_-]{{32,}}){_RD}",
          ("sk-ant-",)),
    _rule("openai-key",
          rf"{_LD}sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{{20,}}|[A-Za-z0-9]{{20}}T3BlbkFJ[A-Za-z0-9]{{20}}){_RD}",
          ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-none-", "t3blbkfj")),
    _rule("api-key", rf"{_LD}sk-[A-Za-z0-9]{{32,}}{_RD}", ("sk-",), min_entropy=3.5, min_classes=3),
    _rule("npm-token", rf"{_L}npm_[A-Za-z0-9]{{36}}{_R}", ("npm_",)),
    _rule("pypi-token", rf"{_L}pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{{50,}}", ("pypi-",)),
    _rule("huggingface-token", rf"{_L}hf_[A-Za-z]{{34}}{_R}", ("hf_",)),
    _rule("sendgrid-key", rf"{_L}SG\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}}{_RD}", ("sg.",)),
    _rule("twilio-key", r"(?<![A-Za-z0-9])(?:AC|SK)(?P<body>[a-f0-9]{32})(?![A-Za-z0-9])", ("ac", "sk"),
          min_entropy=3.0, min_classes=2),
    _rule("mailchimp-key", r"(?<![A-Za-z0-9])(?P<body>[0-9a-f]{32})-us[0-9]{1,2}(?![A-Za-z0-9])", ("-us",),
          min_entropy=3.0, min_classes=2),
    _rule("square-token", rf"{_LD}(?:sq0csp-[0-9A-Za-z_-]{{43}}|sq0atp-[0-9A-Za-z_-]{{22}}|EAAA[0-9A-Za-z_-]{{60}}){_RD}",
          ("sq0csp-", "sq0atp-", "eaaa")),
    _rule("telegram-bot-token", r"(?<![0-9A-Za-z])[0-9]{8,10}:AA(?P<body>[0-9A-Za-z_-]{33})(?![0-9A-Za-z_-])", (":aa",),
          min_entropy=3.8, min_classes=2),
    _rule("discord-bot-token", rf"{_LD}[MNO][A-Za-z0-9_-]{{23,25}}\.[A-Za-z0-9_-]{{6}}\.[A-Za-z0-9_-]{{27,38}}{_RD}", (".",),
          min_entropy=4.0),
    _rule("azure-storage-key", r"AccountKey=([A-Za-z0-9+/]{86}==)", ("accountkey=",), group=1),
    _rule("artifactory-token", r"(?<![A-Za-z0-9])AKC[a-zA-Z0-9]{60,}(?![A-Za-z0-9])", ("akc",)),
    _rule("jwt", rf"{_LD}ey[A-Za-z0-9_-]{{10,}}\.ey[A-Za-z0-9_-]{{10,}}\.(?:[A-Za-z0-9_-]{{8,}}={{0,2}})?", ("ey",)),
    _rule("bearer-token", r"(?i:\bbearer)[ \t]+([A-Za-z0-9._~+/-]{20,}=*)(?![A-Za-z0-9._~+/=-])", ("bearer",),
          group=1, min_entropy=3.0, min_classes=2),
    _rule("basic-auth", r"(?i:\bauthorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
          ("basic",), group=1),
)
# fmt: on
