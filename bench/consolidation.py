"""A small workspace history with ground truth, for testing memory consolidation.

    python -m bench.consolidation OUT [--seed 7] [--days 60] [--start 2026-09-01]

`generate(out, seed=7, days=60, start=date(2026, 9, 1)) -> dict` writes memory.md, one daily log
per day (a short English or German narrative, about 2:1, and a `## Retain` section of 2-6
bullets), nine entity pages with `aliases:` and bank/private/health.md. Known relations are
planted among ordinary noise; the ground truth is returned and written to OUT/.truth.json:

- `duplicates` (15), `paraphrases` (10): {"sources": [a, b], "text", "texts": [a_text, b_text]},
  the same fact retained again on a later day, reworded trivially or substantially;
- `contradictions` (10): {"entity", "attribute", "old", "new", "question_before",
  "question_after"}; old/new are {"source", "value", "day", "text"}, a question is
  {"query", "as_of", "expected"} (as_of: the day before the change, or the last day);
- `usage` (10): {"query", "used", "unused", "used_text", "unused_text"}: two bullets of one day
  that differ in one word and match `query` alike; the unused one is written first;
- `trusted` (2): {"path", "trust", "marker"}, the marker appearing in no other file;
- `counts`.

A source is `memory/YYYY-MM-DD.md#L<n>` (1-based); `text` is the bullet after its `TYPE @X: `.
Output is deterministic for a seed. Standard library only; run as a module to self-check.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from random import Random

__all__ = ["generate", "verify"]

TRUTH = ".truth.json"
MIN_DAYS = 30  # room for the 90 planted bullets
PLANTED_PER_DAY, MAX_BULLETS = 4, 6  # Retain bullets a day: planted (preferably), in all
EN_SHARE = 2 / 3

ENTITIES = {  # slug: (aliases, description)
    "Peter": (["Pete", "Peter Schulz"], "Friend from university; we meet most Thursdays."),
    "Anna": (["Anna Becker"], "Former colleague, now a close friend. Reliable, funny, direct."),
    "Jonas": (["Jonas Wolf"], "Mein Bruder. Ruft selten an, schreibt dafür lange Nachrichten."),
    "Mia": (["Mia Hoffmann"], "Neighbour from the old building; we still swap plants."),
    "Lukas": (["Lukas Krüger", "Luki"], "Kumpel aus dem Sportverein, sehr geschickt."),
    "Sophie": (["Sophie Martin"], "Met her at a conference; we review each other's talks."),
    "Kenji": (["Kenji Sato"], "Client from Tokyo who visits Europe twice a year."),
    "Elena": (["Elena Rossi", "Leni"], "Kennen uns aus dem Italienischkurs."),
}

# (first bullet, the same fact on a later day with a trivial change)
DUPLICATES = [
    ("W @Peter: Peter's dentist is Dr. Weber in Altona.",
     "W @Peter: Peter's dentist is Dr. Weber in Altona"),
    ("W @Anna: Anna's daughter is called Ida.", "W @Anna: anna's daughter is called Ida."),
    ("O(c=0.8) @Jonas: Jonas prefers voice messages over long emails.",
     "O(c=0.8) @Jonas: Jonas still prefers voice messages over long emails."),
    ("W @Mia: Mia is allergic to hazelnuts.", "W @Mia: Mia is allergic to hazelnuts."),
    ("B @Lukas: I lent Lukas my cordless drill.",
     "B @Lukas: I lent Lukas my cordless drill again."),
    ("W @Sophie: Sophie plays the cello in an amateur orchestra.",
     "W @Sophie: Sophie plays the Cello in an amateur orchestra."),
    ("W @Kenji: Kenji's son goes to the international school.",
     "W @Kenji: Kenji's son goes to the international school."),
    ("O(c=0.7) @Elena: Elena gives the most honest feedback on drafts.",
     "O(c=0.7) @Elena: Elena still gives the most honest feedback on drafts."),
    ("W @Peter: Peter's cat is named Mochi.", "W @Peter: Peter's cat is named Mochi!"),
    ("W @Anna: Anna takes the S1 to the office.", "W @Anna: Anna takes the s1 to the office."),
    ("W @Jonas: Jonas ist Vegetarier.", "W @Jonas: Jonas ist immer noch Vegetarier."),
    ("W @Lukas: Lukas hat einen Schlüssel für meine Wohnung.",
     "W @Lukas: Lukas hat einen Schlüssel für meine Wohnung"),
    ("O(c=0.9) @Mia: Mia mag keine Anrufe vor neun Uhr.",
     "O(c=0.9) @Mia: Mia mag keine Anrufe vor neun Uhr."),
    ("W @Elena: Elena spielt mittwochs Volleyball.",
     "W @Elena: Elena spielt Mittwochs Volleyball."),
    ("W @Sophie: Sophie hat zwei Kinder, Paul und Greta.",
     "W @Sophie: Sophie hat zwei Kinder: Paul und Greta."),
]

# (first bullet, the same fact reworded on a later day)
PARAPHRASES = [
    ("W @Peter: Peter grew up in a small village near Kiel.",
     "W @Peter: Peter spent his childhood in a little village close to Kiel."),
    ("O(c=0.8) @Anna: Anna prefers to have meetings in the morning.",
     "O(c=0.8) @Anna: Mornings are when Anna likes meetings best."),
    ("W @Kenji: Kenji speaks fluent German and Japanese.",
     "W @Kenji: Japanese and German are both languages Kenji speaks fluently."),
    ("W @Sophie: Sophie runs a small pottery studio on weekends.",
     "W @Sophie: On weekends Sophie operates a little ceramics workshop."),
    ("W @Mia: Mia is training for the Hamburg half marathon.",
     "W @Mia: Mia is preparing to run the half marathon in Hamburg."),
    ("O(c=0.6) @Elena: Elena believes working remotely slows projects down.",
     "O(c=0.6) @Elena: In Elena's view, remote work makes projects slower."),
    ("W @Lukas: Lukas is afraid of flying and takes the train everywhere.",
     "W @Lukas: Because he fears planes, Lukas travels by rail wherever he goes."),
    ("W @Jonas: Jonas hat im Sommer seinen Segelschein gemacht.",
     "W @Jonas: Den Segelschein hat Jonas diesen Sommer bestanden."),
    ("W @Mia: Mia sammelt alte Schallplatten.",
     "W @Mia: Alte Vinylplatten sind Mias Sammelleidenschaft."),
    ("O(c=0.7) @Lukas: Lukas findet Meetings ohne Agenda Zeitverschwendung.",
     "O(c=0.7) @Lukas: Besprechungen ohne Tagesordnung hält Lukas für verschwendete Zeit."),
]

# (entity, attribute, query), (old bullet, old value), (new bullet, new value): every query
# word is in both bullets
CONTRADICTIONS = [
    ("Anna", "lives in", "Anna lives",
     "W @Anna: Anna lives in Hamburg.", "Hamburg",
     "W @Anna: Anna moved to Lisbon and now lives there.", "Lisbon"),
    ("Peter", "works at", "Peter works at",
     "W @Peter: Peter works at Siemens.", "Siemens",
     "W @Peter: Peter no longer works at Siemens; he now works at SAP.", "SAP"),
    ("Jonas", "wohnt in", "Jonas wohnt",
     "W @Jonas: Jonas wohnt in Köln.", "Köln",
     "W @Jonas: Jonas ist nach Bonn gezogen und wohnt jetzt dort.", "Bonn"),
    ("Mia", "favourite tea", "Mia favourite tea",
     "O(c=0.9) @Mia: Mia's favourite tea is green tea.", "green tea",
     "O(c=0.9) @Mia: Mia's favourite tea is now rooibos.", "rooibos"),
    ("Lukas", "fährt", "Lukas fährt",
     "W @Lukas: Lukas fährt einen alten Golf.", "alten Golf",
     "W @Lukas: Lukas fährt jetzt einen Tesla.", "Tesla"),
    ("Sophie", "is on the team", "Sophie team",
     "W @Sophie: Sophie is on the payments team.", "payments",
     "W @Sophie: Sophie is now on the search team.", "search"),
    ("Kenji", "phone", "Kenji phone",
     "W @Kenji: Kenji uses a Pixel phone.", "Pixel",
     "W @Kenji: Kenji switched and now uses an iPhone as his phone.", "iPhone"),
    ("Elena", "arbeitet bei", "Elena arbeitet",
     "W @Elena: Elena arbeitet bei der Sparkasse.", "Sparkasse",
     "W @Elena: Elena arbeitet nicht mehr bei der Sparkasse, sondern jetzt bei Otto.", "Otto"),
    ("Peter", "favourite café", "Peter favourite café",
     "O(c=0.8) @Peter: Peter's favourite café is Elbgold.", "Elbgold",
     "O(c=0.8) @Peter: Peter's favourite café is now Nord Coast.", "Nord Coast"),
    ("Mia", "lernt", "Mia lernt",
     "W @Mia: Mia lernt Spanisch.", "Spanisch",
     "W @Mia: Mia lernt jetzt Portugiesisch statt Spanisch.", "Portugiesisch"),
]

# (query, bullet template, two fillers); one bullet each, the seed decides which one is "used"
USAGE = [
    ("Peter sailing", "B @Peter: Went sailing with Peter on the {}.", "Alster", "Elbe"),
    ("Anna croissants", "W @Anna: Anna buys croissants at the {} bakery.", "Lindner", "Schneider"),
    ("Jonas Laufstrecke", "W @Jonas: Jonas' Laufstrecke führt am {} entlang.", "Kanal", "Deich"),
    ("Mia pizza", "O(c=0.7) @Mia: Mia recommends the pizza at Da {}.", "Enzo", "Luigi"),
    ("Lukas Rad Werkstatt", "W @Lukas: Lukas bringt sein Rad in die Werkstatt {}.", "Ost", "West"),
    ("Sophie book club", "W @Sophie: Sophie's book club meets at the {} café.", "Elm", "Oak"),
    ("Elena yoga", "W @Elena: Elena goes to a yoga studio in {}.", "Ottensen", "Eppendorf"),
    ("Kenji ramen", "O(c=0.7) @Kenji: Kenji says the ramen at {} is the best.", "Momo", "Takumi"),
    ("Peter Kletterhalle", "B @Peter: Mit Peter in der Kletterhalle {}.", "Bahrenfeld", "Wandsbek"),
    ("Anna tax folder", "W @Anna: Anna keeps the tax folder in the {} cabinet.", "blue", "grey"),
]

# Noise: no planted relation. A W/O template is used at most once per entity, so noise never
# states two values of one attribute; B/S bullets only need to be distinct.
NOISE = {
    "en": [
        "W @{e}: {e} is reading up on {topic}.",
        "W @{e}: {e} recommended a podcast about {topic}.",
        "W @{e}: {e} wants to try {topic} next year.",
        "O(c={c}) @{e}: {e} explains {topic} better than anyone I know.",
        "O(c={c}) @{e}: {e} gets a bit too excited about {topic}.",
        "B @{e}: Had a long chat with {e} about {topic}.",
        "B @{e}: I sent {e} a link about {topic}. [outcome:: sent]",
        "B: I spent {h} hours on {topic} today. [cost:: {h}h]",
        "S: This week kept coming back to {topic}.",
    ],
    "de": [
        "W @{e}: {e} plant einen Ausflug nach {town}.",
        "W @{e}: {e} hat mir ein Buch über {topic} geliehen.",
        "O(c={c}) @{e}: {e} weiß erstaunlich viel über {topic}.",
        "B @{e}: Mit {e} über {topic} gesprochen.",
        "B @{e}: {e} beim Thema {topic} geholfen.",
        "B: {h} Stunden zum Thema {topic} recherchiert. [cost:: {h}h]",
        "S: Diese Woche ging es oft um {topic}.",
    ],
}
TOPICS = {
    "en": ["sourdough baking", "home automation", "urban gardening", "film photography",
           "chess openings", "bird watching", "woodworking", "jazz piano", "solar panels",
           "mechanical keyboards", "fermentation", "astronomy", "knitting", "3D printing",
           "board games", "typography", "beekeeping", "vintage synthesizers", "Roman history",
           "origami"],
    "de": ["Sauerteig", "Brettspiele", "Balkonpflanzen", "Fotografie", "Imkerei", "Pilze",
           "Modelleisenbahnen", "Wanderrouten", "Heimwerken", "Astronomie", "Schach",
           "Kalligrafie", "Vogelbeobachtung", "Jazzplatten", "Ahnenforschung", "Fermentieren"],
}
TOWNS = ["Lübeck", "Lüneburg", "Stade", "Schwerin", "Husum", "Celle", "Bremen", "Flensburg"]

NARRATIVE = {
    "en": ["Slow start, {weather}.", "Spent the morning on the quarterly report and answered mail.",
           "Lunch with {p} at the Thai place near the station.",
           "{p} called in the afternoon; we talked for almost an hour.",
           "Groceries after dinner, then an early night.",
           "The heating made strange noises again, need to call someone about it.",
           "Long walk along the harbour in the evening.", "Finally cleared the inbox.",
           "Read two chapters of the novel {p} gave me.", "The train was twenty minutes late.",
           "Cooked a big pot of soup for the rest of the week.",
           "Short call with the lawyer's office about the old landlord; nothing new."],
    "de": ["Ruhiger Tag, {weather}.", "Vormittags Rechnungen sortiert und Mails beantwortet.",
           "Mittags mit {p} beim Vietnamesen um die Ecke.",
           "Abends mit {p} telefoniert, fast eine Stunde.",
           "Nach dem Abendessen noch eingekauft, dann früh ins Bett.",
           "Die Waschmaschine spinnt schon wieder.", "Langer Spaziergang am Kanal.",
           "Endlich den Keller aufgeräumt.",
           "Zwei Kapitel im Krimi gelesen, den {p} mir geliehen hat.",
           "Die S-Bahn fiel aus, also zu Fuß gegangen.", "Suppe für die ganze Woche gekocht."],
}
WEATHER = {"en": ["grey and windy", "sunny for once", "rain all day", "foggy"],
           "de": ["grau und windig", "endlich mal Sonne", "Regen den ganzen Tag", "neblig"]}
WEEKDAYS = {"en": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
            "de": ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]}

LEGAL_PATH, LEGAL_MARKER = "bank/entities/Brandt.md", "3 O 418/26"
LEGAL_PAGE = f"""---
aliases: [Lawyer, Anwältin, Dr. Brandt]
trust: legal
---
# Brandt

Dr. Henrike Brandt, Fachanwältin für Mietrecht, handles the deposit dispute with the old landlord.

- Aktenzeichen {LEGAL_MARKER} am Amtsgericht Altona.
- The landlord's side offered to settle for 1.850 €; she advises holding out for the full deposit.
- Privileged advice: nothing from this page goes to third parties.
"""
HEALTH_PATH, HEALTH_MARKER = "bank/private/health.md", "ferritin 11 ng/ml"
HEALTH_PAGE = """---
trust: private
---
# Health log

## {0}
Blood test at the GP: {marker}, far too low. Iron tablets every other day for three months.

## {1}
Knee still sore after running; physio twice a week, no jumping.
"""


@dataclass
class Fact:
    """One Retain bullet; `source` and `day` are set when its daily log is written."""

    bullet: str
    source: str = ""
    day: str = ""

    @property
    def text(self) -> str:
        return self.bullet.split(": ", 1)[1]


def generate(out: Path, seed: int = 7, days: int = 60, start: date = date(2026, 9, 1)) -> dict:
    """Write the workspace to `out` and return its ground truth (see the module docstring).

    `out` must be empty, missing, or an earlier output of this generator (then replaced).
    """
    if days < MIN_DAYS:
        raise ValueError(f"days must be at least {MIN_DAYS}")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not (out / TRUTH).is_file():
            raise FileExistsError(f"{out} is not empty and holds no {TRUTH} from an earlier run")
        shutil.rmtree(out)
    for sub in ("memory", "bank/entities", "bank/private"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    rng = Random(seed)
    units: list[list[list[Fact]]] = [[] for _ in range(days)]  # per day: bullets kept together

    def place(lo: int, hi: int, *facts: Fact) -> int:
        """Put `facts` on one day in [lo, hi), preferring days with room for noise."""
        load = {d: sum(map(len, units[d])) + len(facts) for d in range(lo, hi)}
        d = rng.choice([d for d, n in load.items() if n <= PLANTED_PER_DAY]
                       or [d for d, n in load.items() if n <= MAX_BULLETS])
        units[d].append(list(facts))
        return d

    changes = []
    for entity, attribute, query, old, old_value, new, new_value in CONTRADICTIONS:
        f_old, f_new = Fact(old), Fact(new)
        d_old = place(0, days // 2, f_old)
        d_new = place(d_old + days // 4, days, f_new)
        changes.append((entity, attribute, f_old, old_value, f_new, new_value, query, d_new))
    gap = max(2, days // 10)
    pairs: dict[str, list[tuple[Fact, Fact]]] = {"duplicates": [], "paraphrases": []}
    for kind, table in (("duplicates", DUPLICATES), ("paraphrases", PARAPHRASES)):
        for first, again in table:
            pair = Fact(first), Fact(again)
            place(place(0, days - gap, pair[0]) + gap, days, pair[1])
            pairs[kind].append(pair)
    usage = []
    for query, template, a, b in USAGE:
        used, unused = (a, b) if rng.random() < 0.5 else (b, a)
        pair = Fact(template.format(unused)), Fact(template.format(used))
        place(0, days, *pair)
        usage.append((query, *pair))

    planted = sum(len(unit) for day in units for unit in day)
    seen = {f.text for day in units for unit in day for f in unit}
    people = sorted(ENTITIES)
    for i, day_units in enumerate(units):
        day = start + timedelta(days=i)
        lang = "en" if rng.random() < EN_SHARE else "de"
        for _ in range(rng.randint(2, MAX_BULLETS) - sum(map(len, day_units))):
            day_units.append([Fact(_noise(rng, lang, people, seen))])
        rng.shuffle(day_units)
        lines = [f"# {day.isoformat()} {WEEKDAYS[lang][day.weekday()]}", ""]
        for _ in range(rng.randint(1, 2)):
            text = " ".join(rng.sample(NARRATIVE[lang], rng.randint(2, 3)))
            lines += [text.format(p=rng.choice(people), weather=rng.choice(WEATHER[lang])), ""]
        lines.append("## Retain")
        for fact in (f for unit in day_units for f in unit):
            lines.append(f"- {fact.bullet}")
            fact.source, fact.day = f"memory/{day.isoformat()}.md#L{len(lines)}", day.isoformat()
        (out / "memory" / f"{day.isoformat()}.md").write_text("\n".join(lines) + "\n", "utf-8")

    for slug, (aliases, description) in ENTITIES.items():
        page = f"---\naliases: [{', '.join(aliases)}]\n---\n# {slug}\n\n{description}\n"
        (out / "bank" / "entities" / f"{slug}.md").write_text(page, "utf-8")
    (out / LEGAL_PATH).write_text(LEGAL_PAGE, "utf-8")
    checkups = [(start + timedelta(days=days * k // 4)).isoformat() for k in (0, 2)]
    (out / HEALTH_PATH).write_text(HEALTH_PAGE.format(*checkups, marker=HEALTH_MARKER), "utf-8")
    (out / "memory.md").write_text(
        "# Core memory\n\n## Me\n- Freelance developer, based in the north; notes in English and"
        " German.\n- Short answers first; answer in German when I write German.\n\n## People\n"
        "- Friends and family have pages in bank/entities/.\n- Legal matters: Dr. Brandt."
        " Health notes stay in bank/private/.\n", "utf-8")

    last = (start + timedelta(days=days - 1)).isoformat()
    truth = {
        "seed": seed, "start": start.isoformat(), "days": days,
        **{kind: [{"sources": [a.source, b.source], "text": a.text, "texts": [a.text, b.text]}
                  for a, b in found] for kind, found in pairs.items()},
        "contradictions": [{
            "entity": entity, "attribute": attribute,
            "old": {"source": old.source, "value": old_value, "day": old.day, "text": old.text},
            "new": {"source": new.source, "value": new_value, "day": new.day, "text": new.text},
            "question_before": {"query": query, "as_of": (start + timedelta(days=d_new - 1))
                                .isoformat(), "expected": old.source},
            "question_after": {"query": query, "as_of": last, "expected": new.source},
        } for entity, attribute, old, old_value, new, new_value, query, d_new in changes],
        "usage": [{"query": query, "used": used.source, "unused": unused.source,
                   "used_text": used.text, "unused_text": unused.text}
                  for query, unused, used in usage],
        "trusted": [{"path": LEGAL_PATH, "trust": "legal", "marker": LEGAL_MARKER},
                    {"path": HEALTH_PATH, "trust": "private", "marker": HEALTH_MARKER}],
    }
    bullets = sum(len(unit) for day in units for unit in day)
    truth["counts"] = {
        "days": days, "bullets": bullets, "planted": planted, "noise": bullets - planted,
        "entities": len(ENTITIES) + 1, **{k: len(truth[k]) for k in (
            "duplicates", "paraphrases", "contradictions", "usage", "trusted")},
    }
    (out / TRUTH).write_text(json.dumps(truth, ensure_ascii=False, indent=1) + "\n", "utf-8")
    return truth


def _noise(rng: Random, lang: str, people: list[str], seen: set[str]) -> str:
    """A fresh noise bullet in `lang`; W/O templates repeat for no entity (keyed in `seen`)."""
    for _ in range(10_000):
        template, e = rng.choice(NOISE[lang]), rng.choice(people)
        key = f"{template}|{e}" if template[0] in "WO" else ""
        bullet = template.format(e=e, topic=rng.choice(TOPICS[lang]), town=rng.choice(TOWNS),
                                 h=rng.randint(1, 4), c=rng.choice(("0.6", "0.7", "0.8")))
        text = bullet.split(": ", 1)[1]
        if text not in seen and key not in seen:
            seen.update((text, key) if key else (text,))
            return bullet
    raise RuntimeError("noise exhausted; use fewer days")


def verify(out: Path, truth: dict) -> list[str]:
    """Problems in `out` against `truth`: a source line missing or lacking its text, a query
    word missing from a bullet it should match, a marker outside its page, a day's Retain size."""
    expect = [(s, t) for kind in ("duplicates", "paraphrases") for item in truth[kind]
              for s, t in zip(item["sources"], item["texts"])]
    queries = []
    for c in truth["contradictions"]:
        expect += [(c["old"]["source"], c["old"]["text"]), (c["new"]["source"], c["new"]["text"])]
        queries += [(c["question_before"]["query"], c["old"]["text"]),
                    (c["question_after"]["query"], c["new"]["text"])]
    for u in truth["usage"]:
        expect += [(u["used"], u["used_text"]), (u["unused"], u["unused_text"])]
        queries += [(u["query"], u["used_text"]), (u["query"], u["unused_text"])]
    problems = []
    for source, text in expect:
        path, n = source.rsplit("#L", 1)
        lines = (out / path).read_text("utf-8").splitlines()
        if not (1 <= int(n) <= len(lines) and text in lines[int(n) - 1]):
            problems.append(f"{source}: does not contain {text!r}")
    for query, text in queries:
        if not set(re.findall(r"\w+", query.lower())) <= set(re.findall(r"\w+", text.lower())):
            problems.append(f"query {query!r}: a word is missing in {text!r}")
    pages = {p.relative_to(out).as_posix(): p.read_text("utf-8") for p in out.rglob("*.md")}
    for t in truth["trusted"]:
        holders = sorted(p for p, text in pages.items() if t["marker"] in text)
        if holders != [t["path"]]:
            problems.append(f"marker {t['marker']!r} found in {holders}")
    for path, text in pages.items():
        if path.startswith("memory/"):
            n = text.split("## Retain\n", 1)[1].count("\n- ") + 1
            if not 2 <= n <= 6:
                problems.append(f"{path}: {n} Retain bullets")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.consolidation",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="workspace folder to write")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--days", type=int, default=60)
    ap.add_argument("--start", type=date.fromisoformat, default=date(2026, 9, 1))
    args = ap.parse_args(argv)
    truth = generate(args.out, args.seed, args.days, args.start)
    problems = verify(args.out, truth)
    print(json.dumps(truth["counts"]))
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    print(f"{'FAILED' if problems else 'ok'}: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
