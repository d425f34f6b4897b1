"""`mem reflect` and `mem opinions`: consolidation, entity pages, opinions and the journal.

    runner.py         one run: lock, gates, phases, page plans, writes, journal, last-run state
    consolidation.py  the consolidation phases: orient, dedup, contradictions, stability, connections
    rules.py          the pure rules behind them: duplicate candidates, folds, contradictions, connections
    review.py         the optional model review of what the rules left open (behind the trust gate)
    pages.py          entity pages, bank/opinions.md and memory.md suggestions, planned (pure)
    journal.py        one journal entry per run (pure)
    opinions.py       opinion threads, evidence and the confidence rule (pure)
    sources.py        `Sources`: the collaborators the facade passes in (never the facade itself)
    deadline.py       the run's time limit
    decisions.py      review decisions as lines of bank/decisions.md (pure)
    queue.py          the review queue: open items with evidence, a person's decisions, honouring them
    proposals.py      the optional model proposals of typed facts and a week's observation (trust-gated)

Trust tiers (`memtool.trust`) and the stability rule (`memtool.stability`) stay top-level: embedders,
summarize and recall use them too.
"""

from memtool.reflect import consolidation, decisions, queue
from memtool.reflect.runner import opinion_threads, run
from memtool.reflect.sources import Sources

__all__ = ["Sources", "consolidation", "decisions", "queue", "opinion_threads", "run"]
