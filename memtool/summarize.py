"""`mem summarize`: a 3-5 sentence recap of a day, or of a query's episodes, by a local model.

What it sends passes the trust gate: each source's tier is checked against where the model runs,
and what may not go is left out and named (prompts and material: memtool.summary)."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from datetime import date
from typing import Callable

from memtool import summary, trust
from memtool.analyzer import detect_language
from memtool.config import Config
from memtool.dates import parse_day, refuse_non_day
from memtool.errors import UsageError
from memtool.llm import OllamaChat
from memtool.workspace import Workspace


def recap(ws: Workspace, config: Config, target: str, episodes: Callable[[str], dict],
              tier_of: Callable[[str], str], lang: str = "auto", model: str | None = None,
              waiting: Callable[[], AbstractContextManager] = nullcontext) -> dict:
    """Recap `target` (a day, else a query whose `episodes` are read); `tier_of` gives a file's trust tier;
    `waiting` is entered while the model answers (everything is read before: nothing is read or written after)."""
    if lang not in ("auto", "de", "en"):
        raise UsageError(f"unknown language {lang!r}", "use de, en or auto")
    refuse_non_day(target, "DAY")
    try:
        day = parse_day(target, date.today())
    except UsageError:
        day = None
    llm = OllamaChat(model or config.llm_model, timeout=config.llm_timeout, work_providers=config.work_providers,
                     waiting=waiting)
    sources, subject = _day(ws, day) if day is not None else _episodes(episodes(target), target)
    tiers = [trust.text_tier(tier_of(path), text, tier_of) for path, _, text in sources]
    withheld = [label for (_, label, _), tier in zip(sources, tiers) if not llm.destination.allows(tier)]
    kept = [(label, text, tier) for (_, label, text), tier in zip(sources, tiers) if llm.destination.allows(tier)]
    if not kept:
        raise UsageError(f"nothing to summarize for {target!r}" + (" that may be sent to the model" if withheld else ""),
                         "try another day or query" + ("; legal text never goes to a model, private and work "
                                                      "text only to one on this machine" if withheld else ""))
    text, used = summary.material([(label, text) for label, text, _ in kept])
    language = detect_language(target if day is None else text) if lang == "auto" else lang
    tier = trust.strictest(t for _, _, t in kept)
    recap = llm.chat(summary.system_prompt(language), summary.user_prompt(subject, text), tier=tier)
    return {"target": target, "summary": recap, "lang": language, "model": llm.model, "sources": used,
            "withheld": withheld}


def _day(ws: Workspace, day: date) -> tuple[list[tuple[str, str, str]], str]:
    """(path, label, text) of the day's log, and how the prompt names it."""
    rel = ws.daily_path(day)
    if not (ws.root / rel).is_file():
        raise UsageError(f"there is no daily log for {day.isoformat()}", f"expected {rel}")
    return [(rel, day.isoformat(), ws.read_text(rel))], f"the day {day.isoformat()}"


def _episodes(found: dict, target: str) -> tuple[list[tuple[str, str, str]], str]:
    """(path, label, text) of each day's quoted sections, and how the prompt names them."""
    sources = [(g["path"], g["date"] or g["path"], "\n".join(l["text"] for s in g["sections"] for l in s["lines"]))
               for g in found["days"]]
    return sources, f"what the notes say about: {target}"
