"""File paths in summary text: what counts as a path, and whether a document names one.

Paths are found anywhere in the text (Files sections, tables, fenced blocks, prose, backticks,
frontmatter). Decorations such as `(~370 lines)` are separate words and never part of a path;
globs and absolute paths are kept as written. A brace list (`apps/web/{index.html,src/main.tsx}`)
is kept as written when every member is a path; a document keeps it by naming the literal or
every member. Under a Files or Artifacts heading, a bold or code list item that starts with a
bare `name.ext` names a file even when the extension is not a common one (`Procfile.dev`).
Slash commands (`/beacon`), scoped npm packages (`@node-rs/argon2`), dotted identifiers
(`harbor.search.bulk`), fractions (`3/2`), bare extensions (`.mjs`, `.test.ts`), glob-only
fragments (`/*.ts`, `**/*.md`), file names joined by a slash (`STATE.md/ROADMAP.md`) and
technology names (`Node.js`, libraries such as `Auth.js`) are not paths; env files
(`.env.local`) are. Neither are code expressions (`console.log`, `process.env`,
`assert+console.log`) nor URLs and module import paths that start with a host
(`github.com/x/y/pkg.v2`, `gopkg.in/yaml.v3`).

Which paths a phase must keep (`file_paths`): every file path, but not a glob (kept as written
when a text names it, never a Files row of its own) nor a bare name the phase also names with
its folder (`types.ts` beside `src/types.ts`: the full one is kept).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


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
    backbone.js alpine.js solid.js deno.js socket.io moment.js day.js angular.js auth.js
    postgres.js pdf.js p5.js hls.js video.js anime.js ethers.js web3.js tone.js matter.js
    pixi.js paper.js fabric.js howler.js popper.js swiper.js tensorflow.js ml5.js brain.js
    immutable.js knockout.js marked.js highlight.js prism.js lodash.js underscore.js
    """
)
# `console.log`, `process.env`: an object and its member, not a file (`console.svg` is one)
CODE_OBJECTS = _words(
    "console logger process res req window document self this navigator e ev evt event err"
)
CODE_MEMBERS = _words(
    """
    log env json exit error warn info debug cwd argv platform stdout stderr send status body
    query params location href title key target value code message stack name type detail
    """
)
# the host a URL or a Go-style module path starts with (`github.com/...`, `gopkg.in/...`)
_HOST = re.compile(
    r"^(?:(?:www\.)?(?:[a-z0-9-]+\.)+(?:com|org|net|dev|in|co|ai|app|cloud|edu|gov)"
    r"|(?:[a-z0-9-]+\.)*(?:k8s\.io|crates\.io|docs\.rs|pkg\.go\.dev))/",
    re.IGNORECASE,
)
# files a project keeps at its root: a bare name is that file, not a nested one of the same name
ROOT_FILES = _words(
    """
    package.json package-lock.json pnpm-lock.yaml yarn.lock tsconfig.json pyproject.toml
    setup.py setup.cfg requirements.txt Cargo.toml Cargo.lock go.mod go.sum README.md
    CHANGELOG.md CLAUDE.md AGENTS.md composer.json build.gradle settings.gradle pom.xml
    docker-compose.yml docker-compose.yaml vite.config.ts vitest.config.ts jest.config.js
    eslint.config.js biome.json deno.json bun.lockb uv.lock poetry.lock Pipfile.lock
    CMakeLists.txt Package.swift build.gradle.kts settings.gradle.kts gradle.properties
    """
)
_TOKEN_SPLIT = re.compile(r"[\s`\"|<>=]+|\]\(|\)\[")
_SEGMENT = r"[\w@.{},*+\-\[\]()~$%]+"
_PATH_SHAPE = re.compile(rf"^(?:~/|\.{{1,2}}/|/)?(?:{_SEGMENT}/)*{_SEGMENT}$")
_LEAD = "([{<'\"*_"
_TRAIL = ")]}>.,;:!?'\"*_"
_LINE_SUFFIX = re.compile(r"(?::\d+(?::\d+)?|::[\w\[\]-]+|#L\d+(?:-L?\d+)?)$")


_BRACES = re.compile(r"\{[^{}\s]*\}")
_ONE_WORD_IN_BRACES = re.compile(r"\{[^{},]*\}")
_PIECES = re.compile(r"(?<!\x00),|'")
_LEAD_KEEP_BRACE = _LEAD.replace("{", "")
_TRAIL_KEEP_BRACE = _TRAIL.replace("}", "")
_TRAIL_NO_UNDERSCORE = _TRAIL_KEEP_BRACE.replace("_", "")


def _protect_braces(text: str) -> str:
    if "{" not in text:
        return text
    return _BRACES.sub(lambda m: m.group(0).replace(",", "\x00"), text)


def _trim(piece: str) -> str:
    """Strip surrounding punctuation, but keep the braces of a brace list (`{a,b}.ts`)."""
    token = _strip_emphasis(piece)
    if "{" not in token and "}" not in token:
        return token
    if _ONE_WORD_IN_BRACES.fullmatch(token):
        token = token[1:-1]  # `{a.py}`: braces around one word are punctuation
    while token.startswith("{") and token.count("{") > token.count("}"):
        token = token[1:].lstrip(_LEAD)
    while token.endswith("}") and token.count("}") > token.count("{"):
        token = token[:-1].rstrip(_TRAIL)
    return token


def _strip_emphasis(piece: str) -> str:
    """Strip punctuation and markdown emphasis around a word; a leading underscore stays when
    it is part of the name (`__init__.py`, `_app.tsx`), not one of a pair around it (`_a.py_`)."""
    token = piece.lstrip(_LEAD_KEEP_BRACE.replace("_", ""))
    paired = token.startswith("_") and token.rstrip(_TRAIL_NO_UNDERSCORE).endswith("_")
    token = token.rstrip(_TRAIL_KEEP_BRACE)
    return token.lstrip(_LEAD_KEEP_BRACE) if paired else token


def _candidates(line: str) -> Iterable[str]:
    diff_header = line.startswith(("--- a/", "+++ b/", "diff --git"))
    for word in _TOKEN_SPLIT.split(_protect_braces(line)):
        if "." not in word and "/" not in word and word.strip(_LEAD + _TRAIL) not in BARE_NAMES:
            continue  # no path can come out of it: the common case, kept cheap
        for piece in _PIECES.split(word):
            token = _trim(piece.replace("\x00", ","))
            if ":" in token or "#" in token:
                token = _trim(_LINE_SUFFIX.sub("", token))
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
    if "{" in token:
        members = expand_braces(token)
        return len(members) > 1 and all("{" not in m and is_path(m) for m in members)
    if "*" in token and _glob_only(token):
        return False
    last = token.rsplit("/", 1)[-1]
    nested = "/" in token
    if not nested and ("+" in token or _member(token)):
        return False  # a code expression, not a file
    if nested and _HOST.match(token):
        return False  # a URL or a module import path
    if not nested and last.lower() in TECH_NAMES:
        return False
    if nested and _file_named_folder(token):
        return False
    if not nested and _ENV_FILE.fullmatch(last):
        return True
    if not nested and _SUFFIX_ONLY.fullmatch(last):
        return False
    if last in BARE_NAMES or last in KNOWN_DOTFILES or (nested and "*" in last):
        return True
    return _has_extension(last, strict=not nested)


_EXTENSION = re.compile(r"[A-Za-z][A-Za-z0-9]{0,9}")
# `.env.local`, `.env.production`: env files, though `local` is no extension
_ENV_FILE = re.compile(r"\.env\.[a-z][a-z0-9_-]*")
# `.test.ts`, `.d.ts`, `.module.css`: a kind of file, not a file
_SUFFIX_ONLY = re.compile(r"\.(?:test|spec|d|stories|module|config|min|e2e|story)\.[a-z0-9]+", re.I)
# a folder segment named like a document or source file: `STATE.md/ROADMAP.md` is two files
_FILE_LIKE_SEGMENT = re.compile(
    r"[^/]+\.(?:md|mdx|ts|tsx|jsx|py|rs|go|rb|php|java|kt|yml|yaml|toml|sh|txt|csv)/"
)


def _file_named_folder(token: str) -> bool:
    return _FILE_LIKE_SEGMENT.search(token.lstrip("./")) is not None


_BRACES = re.compile(r"\{([^{}]*)\}")


def _has_extension(name: str, *, strict: bool) -> bool:
    """A known extension; after a slash, any short lower-case one (`deploy/nginx/orrery.conf`)."""
    stem, dot, ext = name.rpartition(".")
    if not dot or not _EXTENSION.fullmatch(ext):
        return False
    known = ext.lower() in KNOWN_EXTENSIONS
    if not stem:
        return False  # ".mjs" alone names a kind of file, not a file
    if strict or not stem.strip(".*"):
        return known
    return known or (ext.islower() and len(ext) <= 6)


def _glob_only(token: str) -> bool:
    """`/*.ts`, `**/*.md`: nothing but wildcards and an extension names no file."""
    rest = re.sub(r"^(?:~/|\.{1,2}/|/)+", "", token)
    rest = re.sub(r"\.[A-Za-z0-9]+$", "", rest)
    return not re.search(r"[A-Za-z0-9_]", re.sub(r"[*?\[\]]", "", rest))


_FILES_HEADING = re.compile(r"^#{2,4}\s+.*\b(?:files?|artifacts?)\b", re.IGNORECASE)
_MARKED_ITEM = re.compile(
    r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s*)?(\*\*|`)\s*`?([^*`\s]+?)`?\s*\1"
)
_BARE_NAME = re.compile(r"^[A-Za-z0-9_][\w\-]*\.[a-z][a-z0-9]{0,11}$")


def _listed_name(line: str) -> str | None:
    """A bare `name.ext` at the head of a bold or code list item (in a Files section)."""
    match = _MARKED_ITEM.match(line)
    name = match.group(2).rstrip(":") if match else ""
    if not _BARE_NAME.match(name) or name.lower() in TECH_NAMES:
        return None
    return name if re.search(r"[A-Za-z]", name.rsplit(".", 1)[0]) else None


def find_paths(text: str) -> list[str]:
    """Every file path the text mentions, in order of first mention, as written."""
    return unique(path for _, paths in paths_per_line(text) for path in paths)


def line_paths(line: str) -> tuple[str, ...]:
    """The paths one line names, read alone (no Files heading or fence around it). For a caller
    that asks line by line: it leaves the few whole texts `paths_per_line` remembers alone."""
    if "/" not in line and "." not in line:
        return ()
    return _line_paths(normalise(line).replace("\n", " "))


@lru_cache(maxsize=32)
def paths_per_line(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(line, its paths) for every line of `text` that names a path, in order (remembered for
    the last few texts: extraction, grounding and the offline step all read the same ones)."""
    found: list[tuple[str, tuple[str, ...]]] = []
    in_files = in_fence = False
    for line in normalise(text).split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            in_files = bool(_FILES_HEADING.match(line))
        if "/" not in line and "." not in line:
            continue
        here = _line_paths(line)
        listed = _listed_name(line) if in_files and not in_fence else None
        if listed and listed not in here:
            here = (listed, *here)
        if here:
            found.append((line, here))
    return tuple(found)


@lru_cache(maxsize=1 << 16)
def _line_paths(line: str) -> tuple[str, ...]:
    """The paths of one line (cached: a document is checked several times as it is settled)."""
    return tuple(t for t in _candidates(line) if is_path(t))


def _member(token: str) -> bool:
    stem, _, ext = token.partition(".")
    return stem in CODE_OBJECTS and ext in CODE_MEMBERS


def is_glob(path: str) -> bool:
    return "*" in path or "?" in path


def file_paths(paths: Iterable[str]) -> list[str]:
    """The paths a phase must keep: files, not globs, and no bare name the phase also names
    with its folder (module docstring)."""
    found = unique(paths)
    names = {p.rsplit("/", 1)[-1] for p in found if "/" in p and not is_glob(p)}
    nested = names - ROOT_FILES - BARE_NAMES - KNOWN_DOTFILES
    return [p for p in found if not is_glob(p) and ("/" in p or p not in nested)]


def expand_braces(path: str) -> list[str]:
    """`packages/{core,web}/package.json` -> both paths (one level of braces; `{06..14}` too)."""
    match = _BRACES.search(path) if "{" in path else None
    if not match:
        return [path]
    head, tail = path[: match.start()], path[match.end() :]
    return [head + option + tail for option in _options(match.group(1))]


def _options(inside: str) -> list[str]:
    """`a,b` -> [a, b]; a sequence `06..14` -> its numbers (at most 50), zero-padded alike."""
    sequence = re.fullmatch(r"(\d+)\.\.(\d+)", inside)
    if not sequence:
        return inside.split(",")
    start, end = int(sequence.group(1)), int(sequence.group(2))
    if not start < end <= start + 50:
        return [inside]
    width = len(sequence.group(1))
    return [f"{n:0{width}d}" for n in range(start, end + 1)]


def path_present(path: str, text: str) -> bool:
    """Whether `path` is written in `text` as a whole path (not as part of a longer one); a
    brace list counts when it is written as such or every member is."""
    pattern = rf"(?<![\w./\-]){re.escape(path)}(?![\w/\-]|\.[A-Za-z0-9])"
    if re.search(pattern, text) is not None:
        return True
    members = expand_braces(path)
    return len(members) > 1 and all(path_present(m, text) for m in members)
