from hypothesis import given
from hypothesis import strategies as st

from memtool.reflect.opinions import build, update

unit = st.floats(min_value=0, max_value=1, allow_nan=False)
count = st.integers(min_value=0, max_value=50)


@given(a=unit, s=count, d=count)
def test_confidence_stays_in_unit_interval(a, s, d):
    assert 0.0 <= update(a, s, d) <= 1.0


@given(a=unit, events=st.lists(st.booleans(), max_size=30))
def test_order_of_evidence_does_not_matter(a, events):
    s, d = sum(events), len(events) - sum(events)
    shuffled = list(reversed(events))
    assert update(a, sum(shuffled), len(shuffled) - sum(shuffled)) == update(a, s, d)


@given(a=st.floats(min_value=0.9, max_value=1.0), s=count)
def test_one_contradiction_never_flips_a_strong_opinion(a, s):
    assert update(a, s, 1) >= 0.5
    assert update(0.9, 0, 1) > 0.5 and update(0.9, 0, 4) < 0.5  # it takes repeated contradiction


@given(a=unit, s=st.integers(min_value=0, max_value=20))
def test_support_has_diminishing_returns(a, s):
    step1 = update(a, s + 1, 0) - update(a, s, 0)
    step2 = update(a, s + 2, 0) - update(a, s + 1, 0)
    eps = 1e-12  # near a = 1 both steps are rounding noise of 1 - (1 - a)·0.9^s
    assert step1 >= step2 - eps and step2 >= -eps


def terms(text):
    return set(text.lower().replace(".", "").split())


def fact(content, source, entity="Peter", c=None, kind="opinion"):
    return {"content": content, "source": source, "entity": entity, "confidence": c, "kind": kind,
            "timestamp": source[7:17]}


def test_threads_anchor_and_evidence():
    ops = [fact("Peter prefers short messages", "memory/2026-10-01.md#L3", c=0.7),
           fact("Peter prefers short messages on WhatsApp", "memory/2026-10-05.md#L4", c=0.9)]
    others = [fact("Peter prefers short messages again today", "memory/2026-10-06.md#L2", kind="world"),
              fact("Peter prefers short messages, confirmed", "memory/2026-10-07.md#L2", kind="world"),
              fact("Peter does not prefer short messages anymore", "memory/2026-10-08.md#L2", kind="world"),
              fact("Peter prefers short messages (old note)", "memory/2026-09-01.md#L2", kind="world"),
              fact("Anna prefers short messages", "memory/2026-10-09.md#L2", entity="Anna", kind="world")]
    [o] = build(ops, others, terms)
    assert o.anchor == 0.9 and o.history == ["memory/2026-10-01.md#L3"]
    assert o.supporting == ["memory/2026-10-06.md#L2", "memory/2026-10-07.md#L2"]
    assert o.contradicting == ["memory/2026-10-08.md#L2"]
    assert abs(o.confidence - update(0.9, 2, 1)) < 1e-12


# --- issue 16 item 5: opinions in recall carry the numbers of `mem opinions` -------------------

def test_5_recall_shows_an_opinions_updated_confidence_trend_and_evidence(empty_ws):
    from conftest import run_json, run_mem, write

    write(empty_ws, "memory/2026-11-01.md",
          "# 2026-11-01\n\n## Retain\n- O(c=0.6) @Peter: Peter prefers short replies on WhatsApp.\n")
    write(empty_ws, "memory/2026-11-05.md",
          "# 2026-11-05\n\n## Retain\n- W @Peter: Peter asked for short replies on WhatsApp again.\n")
    write(empty_ws, "memory/2026-11-09.md",
          "# 2026-11-09\n\n## Retain\n- W @Peter: Short WhatsApp replies work best with Peter, he prefers them.\n")
    run_mem("reflect", "--force", cwd=empty_ws, check=0)
    _, ops = run_json("opinions", cwd=empty_ws)
    (op,) = [o for o in ops["opinions"] if o["entity"] == "Peter"]
    assert op["confidence"] > 0.6 and op["trend"] == "↑" and len(op["supporting"]) == 2  # reflect moved it

    for args in (["Peter short replies WhatsApp"], ["Peter short replies WhatsApp", "--kind", "opinion"]):
        _, data = run_json("recall", *args, cwd=empty_ws)
        (hit,) = [r for r in data["results"] if r["kind"] == "opinion"]
        assert hit["source"] == op["source"]
        assert (hit["confidence"], hit["trend"]) == (op["confidence"], op["trend"])
        assert hit["written_confidence"] == 0.6
        assert hit["evidence"] == {"supporting": op["supporting"], "contradicting": op["contradicting"]}
    text = run_mem("recall", "Peter short replies WhatsApp", "--kind", "opinion", cwd=empty_ws, check=0).stdout
    assert f"c=0.60→{op['confidence']:.2f} ↑" in text
    assert all(src in text for src in op["supporting"])


# --- issue 20: an entity page reads evidence only for the opinions it shows ----------------------

def test_20_the_newest_threads_are_weighed_alone_and_equal_the_full_computation(empty_ws):
    from conftest import write

    from memtool.memory import Memory

    write(empty_ws, "memory/2026-11-01.md", "# 2026-11-01\n\n## Retain\n- O(c=0.6) @Anna: Anna likes long walks by the river.\n"
                                            "- W @Anna: Anna took a long walk by the river.\n")
    write(empty_ws, "memory/2026-11-02.md", "# 2026-11-02\n\n## Retain\n- O(c=0.7) @Peter: Peter prefers short replies.\n")
    write(empty_ws, "memory/2026-11-03.md", "# 2026-11-03\n\n## Retain\n- W @Peter: Peter asked for short replies again.\n"
                                            "- W @Anna: Anna did not like the long walk by the river.\n")
    mem = Memory.open(empty_ws, embedder="none")
    try:
        everything = {o.source: o.to_dict() for o in mem.opinion_threads()}
        statements: list[str] = []
        mem.store.conn.set_trace_callback(statements.append)
        [newest] = mem.opinion_threads(newest=1)
        mem.store.conn.set_trace_callback(None)
    finally:
        mem.close()
    assert newest.to_dict() == everything[newest.source] and newest.entity == "Peter" and newest.supporting
    assert everything["memory/2026-11-01.md#L4"]["contradicting"]  # Anna's thread has evidence of its own...
    evidence = [s for s in statements if "ROW_NUMBER" in s]
    assert len(evidence) == 1 and "'Peter'" in evidence[0] and "'Anna'" not in evidence[0]  # ...not read here



# --- issue 19 (recall at 10^6): a hit's opinion thread is read from the opinions filed under it ---

def test_h1_recall_reads_only_the_opinions_filed_under_the_hits_entity_and_matches_mem_opinions(empty_ws):
    from conftest import write

    from memtool.memory import Memory

    write(empty_ws, "bank/entities/Peter.md", "# Peter\n\nCollaborator.\n")
    write(empty_ws, "memory/2026-11-01.md", "# 2026-11-01\n\n## Retain\n"
                                            "- O(c=0.6) @Peter: Peter prefers short replies on WhatsApp.\n"
                                            "- O(c=0.8) @Anna: Anna thinks Peter writes too briefly.\n")
    write(empty_ws, "memory/2026-11-05.md", "# 2026-11-05\n\n## Retain\n"
                                            "- W @Peter: Peter asked for short replies on WhatsApp again.\n"
                                            "- O @Peter: Peter prefers short WhatsApp replies, still.\n")
    mem = Memory.open(empty_ws, embedder="none")
    try:
        listing = {o["source"]: o for o in mem.opinions()["opinions"]}
        statements: list[str] = []
        mem.store.conn.set_trace_callback(statements.append)
        hits = mem.recall("short replies WhatsApp", kinds=["opinion"]).hits
        mem.store.conn.set_trace_callback(None)
    finally:
        mem.close()
    (hit,) = [h for h in hits if h.source in listing and listing[h.source]["entity"] == "Peter"]
    mine = listing[hit.source]
    assert mine["history"] == ["memory/2026-11-01.md#L4"] and mine["supporting"] == ["memory/2026-11-05.md#L4"]
    assert (hit.opinion["confidence"], hit.opinion["trend"], hit.opinion["supporting"], hit.opinion["latest"]) == \
        (mine["confidence"], mine["trend"], mine["supporting"], mine["source"])
    reads = [s for s in statements if "kind = 'opinion'" in s]
    assert len(reads) == 1 and "MATCH" not in reads[0]  # Anna's opinion naming Peter is not read (nor grouped)
