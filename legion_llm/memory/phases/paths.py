"""File paths in summary text: what counts as a path, and whether a document names one.

Paths are found anywhere in the text (Files sections, tables, fenced blocks, prose, backticks,
frontmatter). Decorations such as `(~370 lines)` are separate words and never part of a path;
globs, brace expansions and absolute paths are kept as written. Slash commands (`/beacon`),
scoped npm packages (`@node-rs/argon2`), dotted identifiers (`harbor.search.bulk`), fractions
(`3/2`), bare extensions (`.mjs`) and technology names (`Node.js`) are not paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


KNOWN_EXTENSIONS = _words(
    """
    py pyi ipynb ts tsx js jsx mjs cjs json jsonl json5 md mdx markdown rst adoc txt csv tsv
    yml yaml toml ini cfg conf env lock sql sh bash zsh fish ps1 bat cmd rs go java kt kts
    swift dart rb php c h cc cpp hpp cs fs scala clj ex exs erl lua r jl pl vue svelte astro
    css scss sass less html htm xml xsl svg png jpg jpeg gif ico webp avif bmp pdf mjml hbs
    ejs njk j2 jinja tmpl tpl graphql gql proto tf tfvars hcl nix gradle plist xcconfig sfc
    rom bin key pem crt csr p12 db sqlite sqlite3 log zip gz tgz tar wasm ttf otf woff woff2
    mp3 mp4 wav mov webm docx xlsx pptx odt tex bib dockerfile gitignore gitkeep properties
    patch diff snap http cjson mts cts
    """
)
BARE_NAMES = _words(
    """
    Dockerfile Makefile Procfile Gemfile Rakefile Justfile Vagrantfile Brewfile Pipfile
    LICENSE LICENCE CODEOWNERS Caddyfile Jenkinsfile
    """
)
KNOWN_DOTFILES = _words(
    """
    .gitignore .gitattributes .gitmodules .gitkeep .editorconfig .env .npmrc .nvmrc
    .prettierrc .eslintrc .dockerignore .babelrc .bashrc .zshrc .python-version .tool-versions
    .envrc .pre-commit-config.yaml .markdownlint.json
    """
)
TECH_NAMES = _words(
    """
    node.js next.js vue.js nuxt.js express.js three.js d3.js chart.js react.js ember.js
    backbone.js alpine.js solid.js deno.js socket.io moment.js day.js angular.js
    """
)
_TOKEN_SPLIT = re.compile(r"[\s`\"|<>=]+|\]\(|\)\[")
_SEGMENT = r"[\w@.{},*+\-\[\]()~$%]+"
_PATH_SHAPE = re.compile(rf"^(?:~/|\.{{1,2}}/|/)?(?:{_SEGMENT}/)*{_SEGMENT}$")
_LEAD = "([{<'\"*_"
_TRAIL = ")]}>.,;:!?'\"*_"
_LINE_SUFFIX = re.compile(r"(?::\d+(?::\d+)?|::[\w\[\]-]+|#L\d+(?:-L?\d+)?)$")


def _protect_braces(text: str) -> str:
    return re.sub(r"\{[^{}\s]*\}", lambda m: m.group(0).replace(",", "\x00"), text)


def _candidates(line: str) -> Iterable[str]:
    diff_header = line.startswith(("--- a/", "+++ b/", "diff --git"))
    for word in _TOKEN_SPLIT.split(_protect_braces(line)):
        for piece in re.split(r"(?<!\x00),|'", word):
            token = piece.replace("\x00", ",").lstrip(_LEAD).rstrip(_TRAIL)
            token = _LINE_SUFFIX.sub("", token).rstrip(_TRAIL)
            if diff_header and token[:2] in ("a/", "b/"):
                token = token[2:]
            if token:
                yield token


def is_path(token: str) -> bool:
    """Whether a cleaned word names a file (see the module docstring)."""
    if not _PATH_SHAPE.match(token) or "://" in token or token.startswith("@"):
        return False
    if token.count("{") != token.count("}") or token.count("(") != token.count(")"):
        return False
    last = token.rsplit("/", 1)[-1]
    nested = "/" in token
    if not nested and last.lower() in TECH_NAMES:
        return False
    if last in BARE_NAMES or last in KNOWN_DOTFILES or (nested and "*" in last):
        return True
    return _has_extension(last, strict=not nested)


def _has_extension(name: str, *, strict: bool) -> bool:
    """A known extension; after a slash, any short lower-case one (`deploy/nginx/orrery.conf`)."""
    stem, dot, ext = name.rpartition(".")
    if not dot or not re.fullmatch(r"[A-Za-z][A-Za-z0-9]{0,9}", ext):
        return False
    known = ext.lower() in KNOWN_EXTENSIONS
    if not stem:
        return False  # ".mjs" alone names a kind of file, not a file
    if strict or not stem.strip(".*"):
        return known
    return known or (ext.islower() and len(ext) <= 6)


def find_paths(text: str) -> list[str]:
    """Every file path the text mentions, in order of first mention, as written."""
    found: list[str] = []
    for line in normalise(text).split("\n"):
        if "/" not in line and "." not in line:
            continue
        found += [t for t in _candidates(line) if is_path(t)]
    return unique(found)


def expand_braces(path: str) -> list[str]:
    """`packages/{core,web}/package.json` -> both paths (one level of braces)."""
    match = re.search(r"\{([^{}]*)\}", path)
    if not match:
        return [path]
    head, tail = path[: match.start()], path[match.end() :]
    return [head + option + tail for option in match.group(1).split(",")]


def path_present(path: str, text: str) -> bool:
    """Whether `path` is written in `text` as a whole path (not as part of a longer one)."""
    pattern = rf"(?<![\w./\-]){re.escape(path)}(?![\w/\-]|\.[A-Za-z0-9])"
    return re.search(pattern, text) is not None
