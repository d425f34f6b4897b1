"""Recall: one pipeline from a query to ranked, cited facts.

- `query`: options validated into a `Query`
- `candidates`: what the lexical (BM25) and the semantic (vectors) side find, fused
- `ranking`: fusion and the priors (dialogue turns, entities named, opinions asked for)
- `history`: what `mem reflect` decided (folds, supersessions, as of a day) and the stability prior
- `relevance`: what a score means (calibrated per embedder) and the floor for "nothing relevant"
- `pack`: the best hits that fit a token budget
- `results`: the typed `Hit`, rendered into the documented JSON shape at the end
- `pipeline`: the stages in order, with the index, local state and embedder passed in
- `worker`: the thread a hybrid query's lexical side runs in, beside the semantic side
"""

from memtool.recall.pipeline import listed, record_access, run
from memtool.recall.query import MAX_K, Query, build_query, parse_field_filter, resolve_mode
from memtool.recall.ranking import fuse, rerank
from memtool.recall.results import Hit, RecallResult, source, timestamp
from memtool.recall.worker import LexicalWorker

__all__ = ["MAX_K", "Hit", "LexicalWorker", "Query", "RecallResult", "build_query", "fuse", "listed",
           "parse_field_filter", "record_access", "rerank", "resolve_mode", "run", "source", "timestamp"]
