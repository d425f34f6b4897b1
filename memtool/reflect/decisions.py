"""Review decisions as Markdown lines in `bank/decisions.md`. Pure.

What consolidation cannot settle (near-duplicates, unclear contradictions, suggested connections)
waits in the review queue; a person's decision is one appended line, so it survives
`mem index --rebuild` and travels with sync:

    - 2026-12-01 fold r-3f2a9c1b: `memory/2026-11-02.md#L4` into `memory/2026-11-01.md#L3` [kind:: near-duplicate] [a:: 1a2b…] [b:: 9c8d…]

`a` and `b` are the facts' keys (`fact_key`: a hash of file and text, stable when lines move) or,
for a connection, the two entity names. A model's proposal (a `typed-fact` for an untyped log line,
or a week's `observation`) names its source (the line's key, or the week as `2026-W48`) in `a` and
the daily log the typed line goes to in `b`; `accept` writes the line there, `dismiss` does not.
The meaning of the order: `fold` folds b into a; `supersede` ends a's validity at b (a is the
older). `keep`, `dismiss` and `link` are symmetric.
The newest line about an item wins; a line that does not parse is reported, never fatal.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from memtool.records import Diagnostic

PAGE = "bank/decisions.md"
HEADER = ("# Review decisions\n\nOne line per decision on what `mem reflect` could not settle, written by "
          "`mem review decide` or `mem serve`. `mem reflect` honours them; the newest line about an item wins. "
          "See docs/format.md.\n")
KINDS = ("near-duplicate", "contradiction", "connection", "typed-fact", "observation")
PROPOSALS = ("typed-fact", "observation")  # a model's suggestion of a line to write: accept or dismiss
ACTIONS = {"near-duplicate": ("fold", "keep", "supersede", "dismiss"),
           "contradiction": ("supersede", "keep", "fold", "dismiss"),
           "connection": ("link", "dismiss"),
           "typed-fact": ("accept", "dismiss"),
           "observation": ("accept", "dismiss")}
_LINE = re.compile(r"^- (\d{4}-\d{2}-\d{2}) (fold|keep|supersede|link|dismiss|accept) (r-[0-9a-f]{8})\b.*?"
                   r"\[kind:: ([a-z-]+)\] \[a:: ([^\]]+)\] \[b:: ([^\]]+)\](?: \[note:: ([^\]]*)\])?\s*$")


@dataclass(frozen=True)
class Decision:
    day: str
    action: str
    kind: str
    a: str
    b: str
    note: str = ""
    line: int = 0  # where it stands in the page (0: not written yet)

    @property
    def item(self) -> str:
        return item_id(self.kind, self.a, self.b)


def item_id(kind: str, a: str, b: str) -> str:
    """A review item's name: the same on every machine, whatever order its two sides come in."""
    x, y = sorted((a.casefold(), b.casefold()))
    return "r-" + hashlib.blake2b(f"{kind}\x1f{x}\x1f{y}".encode(), digest_size=4).hexdigest()


def parse(text: str, path: str = PAGE) -> tuple[list[Decision], list[Diagnostic]]:
    """Every decision line in the page, in page order, and a diagnostic for each `- ` line that looks
    like a decision but does not parse (the item stays open)."""
    out, problems = [], []
    for n, line in enumerate(text.splitlines(), start=1):
        m = _LINE.match(line.rstrip())
        if m:
            day, action, shown, kind, a, b, note = m.groups()
            d = Decision(day, action, kind, a.strip(), b.strip(), (note or "").strip(), n)
            if kind in ACTIONS and action in ACTIONS[kind] and shown == d.item:
                out.append(d)
                continue
            problems.append(Diagnostic(path, n, "warning", "bad-decision",
                                       f"'{action}' does not fit item {shown} ({kind}); the item stays open"))
        elif re.match(r"^- \d{4}-\d{2}-\d{2} (fold|keep|supersede|link|dismiss|accept) ", line):
            problems.append(Diagnostic(path, n, "warning", "bad-decision",
                                       "a decision line without [kind:: …] [a:: …] [b:: …]; the item stays open"))
    return out, problems


def latest(decisions: list[Decision]) -> dict[str, Decision]:
    """item → the decision that stands (the last line about it)."""
    return {d.item: d for d in decisions}


def render(d: Decision, shown_a: str, shown_b: str) -> str:
    """One decision line; `shown_a`/`shown_b` say what a person reads (sources, or entity names)."""
    verb = {"fold": "into", "supersede": "superseded by", "keep": "and", "dismiss": "and", "link": "↔",
            "accept": "→"}[d.action]
    first, second = (shown_b, shown_a) if d.action == "fold" else (shown_a, shown_b)
    note = f" [note:: {_clean(d.note)}]" if d.note else ""
    return (f"- {d.day} {d.action} {d.item}: `{_clean(first)}` {verb} `{_clean(second)}` "
            f"[kind:: {d.kind}] [a:: {d.a}] [b:: {d.b}]{note}\n")


def _clean(text: str) -> str:
    """One line with no characters that would end a field or a code span."""
    return " ".join(text.replace("]", ")").replace("[", "(").replace("`", "'").split())
