"""A failed step's signature: the few lines of its output that identify the failure.

Matching is on the normalized signature, not on raw log text. Two machines that fail the
same way print different bytes: their work folders, caches, interpreters and source copies
live elsewhere, temporary folders get random names, a parallel build interleaves its
errors in another order, a terminal adds colour, and times, process ids and addresses
change from run to run. So a signature holds only lines that identify a failure, and each
line is written as it is compared (``normalize``):

1. ANSI colour and other escape sequences are removed (``gcc -fdiagnostics-color``, uv and
   pip on a terminal); of a line that rewrites itself with ``\\r`` (a progress bar), what
   the terminal shows last is kept;
2. credentials in URLs are masked (``toolkit.core.urls.mask``);
3. paths under the folder the build compiled in (``source``) are written relative to it
   (``/w/build/<id>/src/csrc/bad.cpp:3:5`` -> ``csrc/bad.cpp:3:5``), as are those under
   pip's and pypa/build's source copies (``/tmp/pip-req-build-*/``, ``/tmp/pip-install-*/
   <name>_<hash>/``, ``build-via-sdist-*/<name>-<version>/``);
4. the host's paths (``paths``: role -> path, as ``toolkit.run.identity.host_paths`` gives
   them) become their role's token (``<workdir>``, ``<cache>``, ``<source>``, ``<python>``,
   ``<uv>``, ``<rocm_root>``) and a home folder becomes ``~``;
5. volatile parts are made stable: the random part of a temporary name (``/tmp/ccAb12Cd.o``
   -> ``/tmp/cc*.o``, ``pip-build-env-*``, ``tmp*``, ``pytest-of-*/pytest-*``), hex
   addresses (``0x<addr>``), a linker's section offsets (``(.text+0x1c)`` -> ``(.text)``),
   measured durations (``in 0.53s``, ``1.2 s`` -> ``<time>``; a limit, ``timed out after 600
   s``, is kept), process ids (``pid <pid>``) and timestamps (``<timestamp>``);
6. typographic quotes become plain ones (gcc writes ``‘x’`` in a UTF-8 locale, ``'x'`` in
   C), whitespace runs become one space, the line is stripped, control bytes are escaped
   (``toolkit.core.text.escape``: no raw control byte survives) and a line longer than
   ``MAX_CHARS`` is cut with ``…``.

``normalize`` is idempotent, and so is ``signature``: a recorded signature read again gives
itself, so an older manifest's lines compare with new ones.

What ``signature`` keeps, in output order, each line once, at most ``limit`` lines:

- the errors, when the output holds any: compiler ``error:`` and ``fatal error:`` lines
  (gcc, g++, clang, hipcc, nvcc's ``file(line): error:``, a compiler driver's own ``g++:
  error:``, ``nvcc fatal :``) without their notes, caret and code lines or warnings; linker
  errors (``undefined reference to``, ``cannot find -lfoo``, ``collect2: error: ld returned
  1 exit status``); CMake errors (``CMake Error at CMakeLists.txt:12 (message): <message>``:
  the indented message joined to its head); pip's resolution errors (``ERROR: Could not find
  a version ...``, ``ERROR: No matching distribution found for ...``, ``ResolutionImpossible``,
  a conflict and its causes) and uv's (``No solution found when resolving dependencies``
  joined with its ``Because ...`` explanation, which a terminal wraps at its width); failing
  pytest tests (``FAILED tests/test_x.py::test_y``, ``ERROR tests/test_x.py``: the test id
  only, not its message) and a time limit that ran out (``... timed out after N s``). When
  there are more than ``limit``, the errors themselves go before summaries (``collect2:
  error: ld returned 1 exit status``, ``clang: error: linker command failed``);
- otherwise the last exception line of a Python traceback, or the last error statement
  (``error: ...``, ``ERROR: ...``, ``SomethingError: ...``) that is not a wrapper of a
  subprocess's failure (pip's ``subprocess-exited-with-error``, setuptools' ``command ...
  failed with exit code 1``): one line, the one that ended the step;
- otherwise, as a fallback, the last ``FALLBACK_LINES`` distinct non-empty lines (but never
  a traceback's header, nor a subprocess wrapper or a front end's advice such as
  pypa/build's ``TIP pass --env-dir ...`` while other lines are left).

A ``CalledProcessError`` or ``RuntimeError: Error compiling objects for extension`` behind a
compiler error is noise that names the host's command line: the compiler's lines win.

``compare`` says whether two signatures (CI's, recorded in the manifest, and this run's)
show the same failure: both are non-empty and hold the same lines as sets, each line
normalized again. Order and repeats are not compared: parallel compiles report the same
errors in another order, and as many times as files include a broken header.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from toolkit.core.text import escape
from toolkit.core.urls import mask
from toolkit.run.identity import tokenize

MAX_LINES = 20  # lines of a signature
MAX_CHARS = 400  # characters of one signature line (a joined CMake or uv message can be long)
FALLBACK_LINES = 3  # the last non-empty lines kept when no error is recognised
# characters of a raw line read at all: the rest of a longer one (minified text, a megabyte
# of base64) cannot reach the MAX_CHARS shown, and would cost quadratic regex time
RAW_CHARS = 8 * MAX_CHARS

# --- normalization ------------------------------------------------------------------------

# CSI (colour, erase line), OSC (hyperlinks, titles: ends with BEL or ST), other 2-byte ESCs
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_PATH_END = r"(?![\w.+-])"
# the random part of a name right under a temporary folder: ccAb12Cd.o, link-a48e6e.o,
# pip-req-build-k2j3h4g5, tmpab12cd34, build-env-x1y2z3; pytest's numbered folders
_TEMP = re.compile(r"(?P<root>(?<![\w.-])/(?:tmp|var/tmp|dev/shm)/)"
                   r"(?P<prefix>(?:\.?tmp|cc|[\w.]*?-))(?P<random>[A-Za-z0-9_]{6,})"
                   r"(?P<ext>\.\w{1,3})?(?=$|[/\s'\":),])")
# anywhere: Python's tempfile names (tmp, pip-*-, pypa/build's build-env-: 8 characters)
# and uv's (.tmp: 6), whole components only
_ANY_TEMP = re.compile(r"(?<=/)(?:(?P<prefix>tmp|pip-[a-z-]+-|build-env-|build-via-sdist-)"
                       r"[a-z0-9_]{8}|(?P<uv>\.tmp)[A-Za-z0-9]{6})(?=$|[/\s'\":),])")
_PYTEST_TMP = re.compile(r"pytest-of-[^/\s]+/pytest-\d+")
# source copies made by pip and pypa/build: file paths under them are relative to them
_COPY_ROOTS = re.compile(r"(?<![^\s'\"(=\[])(?:/[^\s/'\"():]+)*/(?:pip-req-build-\*"
                         r"|pip-install-\*/[\w.-]+_[0-9a-f]{32}|build-via-sdist-\*/[\w.-]+)/")
_HOME = re.compile(r"(?<![\w./-])/(?:home/[^/\s'\":]+|root)(?=/|$|[\s'\":])")
_SECTION = re.compile(r"\((\.[\w.$]+)\+0x[0-9a-fA-F]+\)")
_HEX = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
_TIME_UNITS = r"(?:ms|us|µs|s|sec|secs|seconds?|min|minutes?)"
_DURATION = re.compile(rf"(?<!timed out after )(?<![\w.])\d+\.\d+ ?{_TIME_UNITS}(?!\w)"
                       rf"|(?<=\bin )\d+ ?{_TIME_UNITS}(?!\w)|\b\d+:\d\d:\d\d(?:\.\d+)?\b")
_TIMESTAMP = re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?")
_PID = re.compile(r"\b(?P<word>pid|PID|process)(?P<sep>[ :=]+)\d+\b")
_SPACE = re.compile(r"\s+")
# gcc quotes with ‘’ in a UTF-8 locale and with '' in C: one machine's locale is not a failure
_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


def _visible(line: str) -> str:
    """``line`` as a terminal shows it: no escape sequences; after a ``\\r``, the last
    non-blank part. At most ``RAW_CHARS`` of it: a longer line loses its last, cut word (a
    URL cut before its ``@`` could not be masked), and ends in ``…``."""
    line = _ANSI.sub("", line)
    if "\r" in line:
        parts = [p for p in line.split("\r") if p.strip()]
        line = parts[-1] if parts else ""
    if len(line) > RAW_CHARS:
        cut = line[:RAW_CHARS]
        line = cut[:max(cut.rfind(" "), cut.rfind("\t"), 0)].rstrip() + "…"
    return line


def _relative(text: str, source: str | None) -> str:
    """Paths under ``source`` relative to it; ``source`` itself as ``<source>``."""
    root = (source or "").rstrip("/")
    if not root:
        return text
    text = re.sub(re.escape(root) + r"/+(?=[^\s/])", "", text)
    return re.sub(re.escape(root) + _PATH_END, "<source>", text)


def _temporary(text: str) -> str:
    text = _TEMP.sub(lambda m: f"{m['root']}{m['prefix']}*{m['ext'] or ''}", text)
    text = _ANY_TEMP.sub(lambda m: f"{m['prefix'] or m['uv']}*", text)
    text = _PYTEST_TMP.sub("pytest-of-*/pytest-*", text)
    return _COPY_ROOTS.sub("", text)


def _volatile(text: str) -> str:
    text = _SECTION.sub(r"(\1)", text)
    text = _HEX.sub("0x<addr>", text)
    text = _TIMESTAMP.sub("<timestamp>", text)
    text = _DURATION.sub("<time>", text)
    return _PID.sub(lambda m: f"{m['word']}{m['sep']}<pid>", text)


def _finish(text: str) -> str:
    text = escape(_SPACE.sub(" ", text.translate(_QUOTES)).strip(), limit=len(text) + 1)
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1] + "…"


def normalize(line: str, *, paths: Mapping[str, str] = {}, source: str | None = None) -> str:
    """One line as it is compared: host paths as tokens, credentials masked, control bytes
    escaped, ANSI colour removed, volatile parts (temp dir names, hex addresses, durations,
    pids) made stable. See the module's docstring for each rule."""
    text = mask(_visible(line))
    text = _relative(text, source)
    text = tokenize(text, paths) if paths else text
    text = _HOME.sub("~", _temporary(text))
    return _finish(_volatile(text))


# --- recognition --------------------------------------------------------------------------

_COMPILERS = (r"(?:[\w.+-]*-)?(?:gcc|g\+\+|cc|c\+\+|cpp|cc1|cc1plus|clang|clang\+\+|hipcc"
              r"|hipcc\.pl|nvcc|ptxas|nvlink|fatbinary|cicc|collect2|ld|ld\.lld|ld\.gold"
              r"|ld\.bfd|lld|llvm-[\w-]+)(?:-\d+(?:\.\d+)*)?")


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    joins: bool = False  # the lines indented under the head belong to it
    summary: bool = False  # sums up other errors: dropped first when over the limit
    keep: str = ""  # keep only this group of the match


_RULES = (
    # gcc/clang: file:line[:col]: [fatal ]error: ...; nvcc and MSVC style: file(line): error
    _Rule(re.compile(r"^(?:[^\s:()]+(?::\d+(?::\d+)?|\(\d+(?:,\d+)?\))|<command-line>): "
                     r"(?:fatal error|catastrophic error|error)(?: [#\w-]+)?: ")),
    _Rule(re.compile(rf"^(?:\S*/)?{_COMPILERS}: error: (?:ld returned|linker command failed)"),
          summary=True),
    # the compiler driver or linker itself: g++: error: ..., nvcc fatal   : ...
    _Rule(re.compile(rf"^(?:\S*/)?{_COMPILERS}(?:: | )(?:fatal error|error|fatal)\s*: ")),
    _Rule(re.compile(r"undefined reference to|multiple definition of|cannot find -l"
                     r"|recompile with -fPIC|final link failed|undefined symbol: ")),
    _Rule(re.compile(r"^CMake Error\b"), joins=True),
    _Rule(re.compile(r"^ERROR: (?:Could not find a version that satisfies|No matching "
                     r"distribution found|ResolutionImpossible|Cannot install .* conflicting "
                     r"dependencies|Package '[^']*' requires a different Python)")),
    _Rule(re.compile(r"^The conflict is caused by:"), joins=True),
    _Rule(re.compile(r"^(?:× |error: )?No solution found when resolving"), joins=True),
    _Rule(re.compile(r"^(?P<keep>(?:FAILED|ERROR) [^\s\[]*\.py(?:::[^\s\[]+)*(?:\[.*?\])?)"
                     r"(?: - .*)?$"), keep="keep"),
    _Rule(re.compile(r"^(?P<keep>.*?\btimed out after \d+(?:\.\d+)? ?s)(?![\w])"), keep="keep"),
)

_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure"
                        r"|Fault)(?:: .*)?$")
_RAISED = re.compile(r"^[A-Za-z_][\w.]*(?::|$)")  # what ends a traceback: a (dotted) name
_STATEMENT = re.compile(r"^(?:error|ERROR|Error|fatal|FATAL)(?::| ) ?\S")
# messages that only say a subprocess failed (its own output says why)
_WRAPPERS = re.compile(r"subprocess-exited-with-error|metadata-generation-failed|Failed building "
                       r"wheel|Failed to build|Could not build wheels|failed-wheel-build"
                       r"|failed with exit (?:code|status)|Backend subprocess exited")
# continuation lines at the head's own indent: uv's tree of causes
_TREE = ("│", "├", "╰")
# advice under an error (uv's hint:, miette's help:): about the host, not the failure
_HINTS = ("hint:", "help:")
# advice a front end prints after a failure (pypa/build's TIP): never a fallback line
_ADVICE = ("TIP ", *_HINTS)


# a line no rule can match holds none of these words (normalizing writes none of them; only
# contrived text joins one across a path it removes), so only lines that hold one are
# normalized before they are needed: 100,000 lines of a build log take well under a second
_KEYWORDS = re.compile(r"rror|RROR|fatal|FATAL|undefined|multiple|cannot|fPIC|final|CMake"
                       r"|conflict|solution|FAILED|timed|Traceback|xception|Exit|Interrupt"
                       r"|Failure|Fault")


class _Line:
    """One line of output: its indentation, whether a rule may match it, and its normalized
    text, computed when first read."""

    __slots__ = ("_norm", "_text", "blank", "candidate", "indent", "visible")

    def __init__(self, raw: str, norm: Callable[[str], str]) -> None:
        self.visible = _visible(raw).expandtabs(8)
        stripped = self.visible.lstrip()
        self.indent = len(self.visible) - len(stripped)
        self.blank = not stripped
        self.candidate = bool(_KEYWORDS.search(stripped))
        self._norm = norm
        self._text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self._norm(self.visible)
        return self._text


def _lines(lines: Iterable[str], paths: Mapping[str, str], source: str | None) -> list[_Line]:
    norm = partial(normalize, paths=paths, source=source)
    return [_Line(str(raw), norm) for raw in lines]


def _rule(text: str) -> _Rule | None:
    return next((r for r in _RULES if r.pattern.search(text)), None)


def _block(lines: list[_Line], i: int) -> tuple[str, int]:
    """The head at ``i`` joined with the lines indented under it (paragraphs apart by one
    blank line included); the index after them."""
    head, parts, j = lines[i], [lines[i].text], i + 1
    while j < len(lines):
        line = lines[j + 1] if lines[j].blank and j + 1 < len(lines) else lines[j]
        if line.blank or line.text.startswith(_HINTS) or not (line.indent > head.indent or (
                line.indent == head.indent and line.text.startswith(_TREE))):
            break
        if line is not lines[j]:  # one blank line between paragraphs of one message
            j += 1
        parts.append(line.text)
        j += 1
    return normalize(" ".join(parts)), j


def _errors(lines: list[_Line]) -> list[tuple[str, bool]]:
    """Each recognised error (text, is a summary), in output order."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(lines):
        rule = _rule(lines[i].text) if lines[i].candidate else None
        if rule is None:
            i += 1
            continue
        if rule.joins:
            text, i = _block(lines, i)
        else:
            m = rule.pattern.search(lines[i].text)
            text = m[rule.keep] if (m and rule.keep) else lines[i].text
            i += 1
        out.append((text, rule.summary))
    return out


def _after_traceback(lines: list[_Line], i: int) -> tuple[int, str] | None:
    """The exception line (index, text) that ends the traceback whose header is at ``i``."""
    indent = lines[i].indent
    for j in range(i + 1, len(lines)):
        line = lines[j]
        if line.blank or line.indent > indent:
            continue
        ok = line.indent == indent and _RAISED.match(line.text)
        return (j, line.text) if ok else None
    return None


def _last_exception(lines: list[_Line]) -> str | None:
    """The last exception line of a traceback, or the last error statement that is not a
    subprocess wrapper."""
    found: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        if not line.candidate:
            continue
        if line.text == _TRACEBACK:
            end = _after_traceback(lines, i)
            if end is not None:
                found.append(end)
        elif (_EXCEPTION.match(line.text) or _STATEMENT.match(line.text)) \
                and not _WRAPPERS.search(line.text):
            found.append((i, line.text))
    return max(found)[1] if found else None


def _unique(texts: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(t for t in texts if t))


def _within(errors: list[tuple[str, bool]], limit: int) -> list[str]:
    """At most ``limit`` distinct errors, the errors themselves before summaries, in
    output order."""
    texts = _unique(t for t, _ in errors)
    if len(texts) <= limit:
        return texts
    summaries = {t for t, s in errors if s}
    chosen = set(([t for t in texts if t not in summaries] + [t for t in texts if t in summaries])
                 [:limit])
    return [t for t in texts if t in chosen]


def signature(lines: Iterable[str], *, paths: Mapping[str, str] = {}, source: str | None = None,
              limit: int = MAX_LINES) -> list[str]:
    """The lines of a failed step's output that identify the failure, normalized: its
    errors; else the last exception or error statement; else the last non-empty lines."""
    if limit < 1:
        return []
    normal = _lines(lines, paths, source)
    errors = _errors(normal)
    if errors:
        return _within(errors, limit)
    last = _last_exception(normal)
    if last is not None:
        return [last]
    return _fallback(normal, limit, skip_wrappers=True) or _fallback(normal, limit)


def _fallback(normal: list[_Line], limit: int, *, skip_wrappers: bool = False) -> list[str]:
    """The last distinct non-empty lines, never a traceback's header; ``skip_wrappers``: nor
    a subprocess wrapper or a front end's advice (when other lines are left)."""
    tail: list[str] = []
    for line in reversed(normal):
        if not line.text or line.text == _TRACEBACK or line.text in tail:
            continue
        if skip_wrappers and (_WRAPPERS.search(line.text) or line.text.startswith(_ADVICE)):
            continue
        tail.insert(0, line.text)
        if len(tail) == min(limit, FALLBACK_LINES):
            break
    return tail


# --- matching -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Match:
    same: bool
    common: tuple[str, ...]  # in both, in the recorded order
    only_recorded: tuple[str, ...]  # recorded (CI) only, in its order
    only_here: tuple[str, ...]  # this run's only, in its order


def compare(recorded: Sequence[str], here: Sequence[str]) -> Match:
    """Whether two signatures show the same failure: both non-empty and the same lines as
    sets, each normalized again (order and repeats differ from machine to machine)."""
    rec = _unique(normalize(s) for s in recorded)
    now = _unique(normalize(s) for s in here)
    rec_set, now_set = set(rec), set(now)
    return Match(bool(rec) and rec_set == now_set,
                 tuple(s for s in rec if s in now_set),
                 tuple(s for s in rec if s not in now_set),
                 tuple(s for s in now if s not in rec_set))
