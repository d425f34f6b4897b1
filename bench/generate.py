"""Synthetic memtool workspaces for benchmarks.

    python -m bench.generate --facts 100000 --out /tmp/ws [--seed 42] [--start 2019-01-01] [--force]

Writes a workspace in the layout of DESIGN.md §1 with approximately N facts, where a fact is
one indexable unit of a daily log: a list item (top-level or nested), a paragraph, or a
`## Retain` bullet. The daily logs hold exactly N facts; the bank pages and `memory.md` add a
few hundred more, reported separately as `bank_facts`.

- `memory.md`: a short core memory.
- `memory/YYYY-MM-DD.md`: consecutive days from `start` (~10 % skipped), 30-45 facts a day in
  2-5 `## Heading` sections of bullets and paragraphs, and on ~70 % of days a final
  `## Retain` section with 2-6 typed bullets (W 40 %, B 30 %, O 20 %, S 10 %).
- `bank/entities/<Slug>.md`: ~200 people, projects, places and organisations, some with
  `aliases:` front matter; `bank/world.md`: curated world facts.

Text is ~60 % English and ~40 % German, built from templates over Zipf-weighted word lists
(several thousand distinct words, German compounds with umlauts and ß, a long tail of versions,
hosts, tickets and hashes). ~30 % of lines mention an `@Entity`, a few use `[[Wiki Links]]`,
~5 % carry a date in one of the forms memtool understands. Output is deterministic for a seed.

Library use: `generate(out, facts, seed=42, start=date(2019, 1, 1)) -> dict` and
`append_line(workspace, text) -> Path` (one narrative bullet into the newest daily log, for
incremental re-index measurements), `append_days(workspace, facts) -> list[Path]` (new daily logs
after the newest one, for a reflect run after new days). Standard library only.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import math
import re
import shutil
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from random import Random
from string import Formatter

__all__ = ["generate", "append_line", "append_days", "main"]

# --------------------------------------------------------------------------------------------
# Shape of the workspace
# --------------------------------------------------------------------------------------------

FACTS_PER_DAY = (30, 45, 42)  # triangular(low, high, mode): mean ~39 facts per written day
SKIP_DAY = 0.10  # share of calendar days without a log
RETAIN_DAY = 0.70  # share of days with a final "## Retain" section
RETAIN_BULLETS = (2, 6)
SECTIONS = (2, 5)
PARAGRAPH_SHARE = 0.12  # share of narrative facts that are paragraphs rather than list items
LIST_RUN = (2, 8)  # list items in a row
_RUN = sum(LIST_RUN) / 2
PARAGRAPH_BLOCK = PARAGRAPH_SHARE * _RUN / (1 - PARAGRAPH_SHARE + PARAGRAPH_SHARE * _RUN)
NESTED_SHARE = 0.07  # share of list items that are nested ("  - ") under the previous item
INTRO_PARAGRAPH = 0.20  # share of days with a paragraph between the title and the first section
EN_SHARE = 0.60  # mean share of English lines (varies per day)
LINE_MIN, LINE_MAX = 40, 220  # characters per content line, bullet marker included
LINE_MEDIAN = 64.0  # median of the (log-normal) target length; the result averages ~100
MENTION = 0.21  # narrative lines with a leading @mention (Retain lines always have one)
EXTRA_AT = 0.035  # further @mentions in a line
WIKI = 0.02  # entity rendered as [[Wiki Link]]
DATED = 0.045  # lines that get an explicit date phrase
ZIPF_S = 1.05

N_PEOPLE, N_PROJECTS, N_PLACES, N_ORGS = 112, 50, 26, 12
KIND_WEIGHTS = (("person", 0.55), ("project", 0.25), ("place", 0.12), ("org", 0.08))
RETAIN_TYPES = (("W", 0.40), ("B", 0.30), ("O", 0.20), ("S", 0.10))


def _words(text: str) -> list[str]:
    """Whitespace-separated entries; `_` inside an entry stands for a space."""
    return list(dict.fromkeys(w.replace("_", " ") for w in text.split()))


# --------------------------------------------------------------------------------------------
# Vocabulary (most frequent first: list order is Zipf rank)
# --------------------------------------------------------------------------------------------

EN_NOUNS = _words("""
issue meeting server release build test document plan call email report deadline budget feature
bug ticket review design draft invoice contract backup database branch deployment config script
notes query index cache migration schema endpoint dashboard roadmap proposal estimate workshop
presentation slide demo prototype spec requirement checklist summary agenda decision
question answer problem solution idea task project client customer user team manager
colleague partner friend doctor appointment train flight hotel apartment kitchen garden
car bike laptop phone keyboard monitor printer router charger battery cable update
upgrade patch fix workaround regression crash timeout error warning log trace metric alert
incident outage postmortem retro standup sprint backlog milestone epic story estimate
interview candidate offer salary tax receipt bill payment transfer account password key
certificate domain repository commit pull_request merge conflict pipeline job worker queue
scheduler cron_job webhook integration plugin extension library package dependency version
changelog readme tutorial article book podcast video course lecture talk conference meetup
trip vacation weekend birthday dinner lunch breakfast coffee walk run swim ride hike
concert movie game party wedding visit move lease landlord neighbour package delivery
parcel store market pharmacy bakery library gym pool school kindergarten office desk
chair shelf lamp window door roof heating boiler radiator plumber electrician
contractor architect permit form application letter reminder note list calendar schedule
reservation ticket_booking refund warranty repair insurance claim policy pension mortgage
loan savings expense subscription plan_change cleanup refactoring rewrite benchmark profile
flamegraph bottleneck latency throughput memory_leak deadlock race_condition segfault
permission token session cookie header payload response request handler middleware
parser tokenizer stemmer ranking embedding vector model prompt dataset evaluation
baseline threshold parameter setting option flag default fallback provider adapter
client_library wrapper interface protocol format encoding charset newline whitespace
timezone timestamp date_range snapshot manifest tombstone revision lock mutex thread
process daemon service container image volume cluster node replica shard partition
bucket object upload download mirror sync conflict_marker diff hunk patch_file
storage disk partition_table filesystem inode symlink backup_drive archive tarball
spreadsheet chart table column row cell formula pivot export import template
newsletter blog_post comment thread channel message reply notification inbox
""")

EN_ADJ = _words("""
new old slow fast broken stable flaky urgent important small large final quick simple
complex expensive cheap clean messy quiet loud late early open closed shared private
public local remote manual automatic weekly daily monthly nightly missing duplicate
outdated current previous initial temporary permanent critical minor major obvious
subtle strange weird annoying helpful useful reliable unreliable robust fragile noisy
verbose concise detailed rough solid shaky tricky easy hard heavy light warm cold rainy
sunny busy calm tired happy productive relaxed stressful long short huge tiny clever
elegant ugly legacy modern fresh stale pending blocked ready done consistent flawless
promising disappointing surprising boring exciting risky safe secure insecure portable
lightweight bloated cozy crowded empty spacious affordable overpriced bilingual offline
""")

EN_VERBS = _words("""
fix review update merge deploy test write read send check move clean plan schedule
cancel sign pay order buy book prepare finish start refactor debug migrate document
rewrite configure install upgrade restore archive rename split benchmark profile measure
estimate approve reject discuss reproduce investigate replace remove add extend simplify
optimize publish release share print scan submit draft translate summarize label tag
rebase revert patch monitor rotate renew repair paint wash pack unpack sort tidy sketch
outline prototype validate verify sync index parse compile bundle ship announce postpone
reschedule confirm organize collect return borrow lend build run find bring take make
drop stop swap map chat jog
""")
EN_PAST = {
    "write": "wrote", "read": "read", "send": "sent", "buy": "bought", "pay": "paid",
    "split": "split", "rewrite": "rewrote", "lend": "lent", "build": "built", "run": "ran",
    "find": "found", "bring": "brought", "take": "took", "make": "made",
}
EN_DOUBLE = {"plan", "drop", "stop", "swap", "map", "chat", "jog", "ship", "scan", "tag", "run"}

EN_ITEMS = _words("""
milk bread apples coffee batteries light_bulbs stamps eggs cheese tomatoes pasta rice
potatoes carrots onions garlic butter yoghurt oranges bananas cereal tea flour sugar
shampoo toothpaste detergent sponges screws dowels paint gift_wrap flowers candles
""")

EN_SUBJ = ["I", "I", "I", "We", "We", "The team"]
EN_WHEN = _words("""
This_morning After_lunch Yesterday Tonight Before_the_standup Late_in_the_evening
Over_the_weekend On_the_train Right_after_breakfast During_the_call In_the_afternoon
""")
EN_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
EN_DUR = _words("""
2h 1h 30_min 45_min half_an_hour all_afternoon 3_hours 20_minutes two_days 90_minutes
the_whole_morning 4h an_hour 10_minutes
""")
EN_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December"]

# German nouns with gender (m/f/n); umlauts and ß on purpose.
DE_NOUNS = _words("""
Server:m Termin:m Fehler:m Bericht:m Plan:m Vertrag:m Entwurf:m Zugang:m Schlüssel:m
Ordner:m Kundin:f Kollegin:f Nachbar:m Vermieter:m Zug:m Flug:m Urlaub:m Geburtstag:m
Einkauf:m Umzug:m Garten:m Keller:m Dachboden:m Schreibtisch:m Drucker:m Router:m
Bildschirm:m Akku:m Antrag:m Brief:m Kalender:m Zettel:m Beleg:m Auftrag:m Vorschlag:m
Workshop:m Vortrag:m Kurs:m Arzttermin:m Führerschein:m Reisepass:m Ausweis:m
Stromzähler:m Heizkörper:m Kühlschrank:m Backofen:m Wasserhahn:m Fußboden:m Rasen:m
Übergabe:f Besprechung:f Rechnung:f Änderung:f Prüfung:f Lösung:f Störung:f Frage:f
Aufgabe:f Liste:f Datenbank:f Schnittstelle:f Abfrage:f Sicherung:f Version:f Anfrage:f
Rückmeldung:f Bestätigung:f Kündigung:f Überweisung:f Steuererklärung:f Wohnung:f
Straße:f Küche:f Tür:f Heizung:f Waschmaschine:f Reparatur:f Versicherung:f Miete:f
Nebenkostenabrechnung:f Gebühr:f Frist:f Einladung:f Reise:f Wanderung:f Fahrt:f
Präsentation:f Übersicht:f Auswertung:f Dokumentation:f Konfiguration:f Migration:f
Suche:f Abstimmung:f Verzögerung:f Förderung:f Erhöhung:f Größe:f Idee:f Notiz:f
Anleitung:f Vorlage:f Tabelle:f Zusammenfassung:f Entscheidung:f Verbindung:f
Gespräch:n Problem:n Projekt:n Konto:n Paket:n Angebot:n Update:n Backup:n Release:n
Meeting:n Protokoll:n Modul:n System:n Ticket:n Formular:n Zeugnis:n Fahrrad:n Auto:n
Büro:n Zimmer:n Bad:n Dach:n Fenster:n Licht:n Schloss:n Rezept:n Essen:n Frühstück:n
Konzert:n Buch:n Kapitel:n Handy:n Ladekabel:n Netzteil:n Dashboard:n Skript:n
Budget:n Jahresgespräch:n Vorstellungsgespräch:n Schreiben:n Schriftstück:n Ergebnis:n
Verzeichnis:n Werkzeug:n Training:n Interview:n Treffen:n Wochenende:n Fest:n
""")

DE_COMPOUND_HEAD = _words("""
Daten Server Haus Kunden Projekt Termin Steuer Miet Strom Wasser Garten Schul Kinder
Bahn Auto Reise Urlaubs Arbeits Team Test Fehler Sicherheits Wochen Monats Jahres
Familien Geburtstags Küchen Bücher Straßen Haupt Neben Rück Über Zugangs Such Index
Sync Speicher Netzwerk Lösch Prüf Änderungs Bürger Häuser Größen Fuß Grün Schnee
""")
DE_COMPOUND_TAIL = _words("""
plan:m liste:f bericht:m termin:m vertrag:m rechnung:f gespräch:n system:n problem:n
fehler:m konto:n übergabe:f zeit:f frage:f raum:m stelle:f schlüssel:m ordner:m
nummer:f karte:f buch:n tür:f straße:f änderung:f prüfung:f leitung:f gebühr:f
wechsel:m zettel:m entwurf:m zugang:m kasten:m modul:n protokoll:n paket:n
übersicht:f regel:f größe:f lauf:m stand:m weg:m
""")

DE_ADJ = _words("""
neu alt langsam schnell kaputt stabil dringend wichtig klein groß einfach kompliziert
günstig sauber ruhig laut spät früh offen geschlossen gemeinsam privat öffentlich lokal
manuell automatisch wöchentlich täglich monatlich jährlich veraltet aktuell vorläufig
dauerhaft kritisch klar seltsam komisch nervig hilfreich nützlich nutzlos zuverlässig
robust ausführlich knapp grob solide wacklig schwierig schwer leicht warm kalt sonnig
stressig lang kurz riesig winzig schlau elegant hässlich modern frisch blockiert fertig
müde glücklich entspannt spannend ärgerlich übersichtlich gründlich nötig möglich
zusätzlich ursprünglich vollständig unvollständig schön gemütlich voll leer teuer
""")
DE_ADJ_STEM = {"teuer": "teur"}

DE_VERBS = _words("""
prüfen/geprüft reparieren/repariert schreiben/geschrieben lesen/gelesen schicken/geschickt
bestellen/bestellt kaufen/gekauft buchen/gebucht verschieben/verschoben absagen/abgesagt
unterschreiben/unterschrieben bezahlen/bezahlt vorbereiten/vorbereitet testen/getestet
aktualisieren/aktualisiert migrieren/migriert dokumentieren/dokumentiert
umschreiben/umgeschrieben konfigurieren/konfiguriert installieren/installiert
wiederherstellen/wiederhergestellt archivieren/archiviert umbenennen/umbenannt
aufteilen/aufgeteilt messen/gemessen schätzen/geschätzt freigeben/freigegeben
ablehnen/abgelehnt besprechen/besprochen reproduzieren/reproduziert untersuchen/untersucht
ersetzen/ersetzt entfernen/entfernt erweitern/erweitert vereinfachen/vereinfacht
optimieren/optimiert veröffentlichen/veröffentlicht teilen/geteilt drucken/gedruckt
einreichen/eingereicht entwerfen/entworfen übersetzen/übersetzt
zusammenfassen/zusammengefasst markieren/markiert zurücksetzen/zurückgesetzt
überwachen/überwacht erneuern/erneuert streichen/gestrichen putzen/geputzt
packen/gepackt sortieren/sortiert aufräumen/aufgeräumt skizzieren/skizziert
planen/geplant abholen/abgeholt zurückgeben/zurückgegeben bestätigen/bestätigt
organisieren/organisiert sammeln/gesammelt kündigen/gekündigt überweisen/überwiesen
beantragen/beantragt verlängern/verlängert erledigen/erledigt abschließen/abgeschlossen
finden/gefunden einrichten/eingerichtet überprüfen/überprüft ausfüllen/ausgefüllt
abgeben/abgegeben melden/gemeldet weiterleiten/weitergeleitet beantworten/beantwortet
löschen/gelöscht speichern/gespeichert hochladen/hochgeladen vergleichen/verglichen
aufbauen/aufgebaut kochen/gekocht backen/gebacken mergen/gemergt deployen/deployt
""")

DE_PLURAL = _words("""
Brötchen Äpfel Käse Milch Bücher Batterien Glühbirnen Briefmarken Tomaten Nudeln
Kartoffeln Möhren Gurken Eier Süßigkeiten Blumen Schrauben Dübel Unterlagen Belege
Rechnungen Fotos Briefe Häuser Wohnungen Schlüssel Kartons Gewürze Zwiebeln Erdbeeren
""")

DE_WHEN = _words("""
Heute Gestern Morgens Vormittags Am_Nachmittag Abends Am_Wochenende Nach_dem_Mittagessen
Vor_dem_Standup Im_Zug Spätabends Zwischendurch
""")
DE_WEEKDAYS = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]
DE_DUR = _words("""
2h 1h 30_Minuten 45_Minuten eine_halbe_Stunde den_ganzen_Nachmittag drei_Stunden
20_Minuten zwei_Tage 90_Minuten den_ganzen_Vormittag 4h eine_Stunde
""")
DE_MONTHS = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August",
             "September", "Oktober", "November", "Dezember"]
EN_MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

TECH = _words("""
SQLite Python Docker Postgres Redis FTS5 BM25 nginx TLS DNS CI GitHub_Actions Rust TypeScript
React WebSocket OAuth JWT cron systemd S3 MinIO R2 Ollama Kubernetes Terraform Ansible
Grafana Prometheus Sentry ZFS rsync SSH WireGuard Tailscale Nextcloud Obsidian Markdown
YAML TOML JSON CSV pytest mypy ruff uv pip npm Node Deno Go Kotlin Swift Xcode Android iOS
macOS Linux Debian Ubuntu NixOS Hetzner Cloudflare Vercel Stripe Twilio WhatsApp Baileys
Signal Matrix Slack Jira Linear Notion Figma Zoom Claude Llama Mistral LoRA CUDA ONNX
llama.cpp FAISS sqlite-vec HNSW Lucene Meilisearch Tantivy Kafka RabbitMQ NATS gRPC
GraphQL protobuf msgpack zstd inotify FSEvents mmap WAL fsync tmux Neovim VS_Code Firefox
Home_Assistant Zigbee MQTT Raspberry_Pi Proxmox TrueNAS restic Borg Syncthing Hugo Jekyll
""")

CODE = [
    "`mem recall`", "`mem index --rebuild`", "`git rebase -i`", "`pytest -k sync`",
    "`make bench`", "`uv sync`", "`docker compose up`", "`systemctl restart`",
    "`PRAGMA journal_mode=WAL`", "`VACUUM`", "`fsync()`", "`rsync -a`", "`kubectl get pods`",
    "`npm ci`", "`cargo build`", "`ALTER TABLE`", "`EXPLAIN QUERY PLAN`",
]

FILES = str.split("""
sync_manifest.json config.toml index.sqlite fts.py recall.py settings.yaml Makefile
docker-compose.yml README.md CHANGELOG.md schema.sql main.rs app.ts retain.py watch.py
""")

FIRST_NAMES = _words("""
Peter Anna Andy Maria Thomas Julia Michael Sarah Stefan Laura Jürgen Katrin Lukas Sophie
Jonas Lena Felix Hannah Max Lea Tobias Miriam Sebastian Nina Florian Eva Matthias Clara
Daniel Jana Markus Sabine Andreas Claudia Christian Birgit Martin Ute Frank Heike Björn
Jörg Gökhan Ayşe Mehmet Zoë Chloé René Søren José Luis Carlos Elena Olga Ivan Dmitri
Priya Arjun Wei Mei Yuki Hiroshi Kenji Aiko Omar Fatima Leila Youssef Amara Kwame Noah
Emma Liam Olivia Ethan Ava Mason Isabella Mia Lucas Charlotte Jack Amelia Oliver Harper
Henry Ella Leo Grace Oskar Ida Emil Frieda Anton Greta Paul Marlene Karl Helga Dieter
Renate Wolfgang Gisela Horst Ingrid Uwe Petra Ralf Susanne Jens Anja Sven Silke Kai
Tanja Nils Maren Till Merle Jan Ina Ole Wiebke Malte Imke Henrik Astrid Erik Britta Lars
Bernd Gabi Tom Kim Alex Sam Robin Jule Finn Ben
""")
LAST_NAMES = _words("""
Müller Schmidt Schneider Fischer Weber Meyer Wagner Becker Schulz Hoffmann Schäfer Koch
Bauer Richter Klein Wolf Schröder Neumann Schwarz Zimmermann Braun Krüger Hofmann
Hartmann Lange Werner Schmitz Krause Lehmann Köhler Herrmann König Walter Huber Kaiser
Fuchs Peters Scholz Möller Weiß Jung Hahn Schubert Vogel Friedrich Keller Günther
Berger Winkler Roth Lorenz Baumann Franke Albrecht Schuster Ludwig Böhm Winter Kraus
Schumacher Krämer Vogt Stein Jäger Sommer Groß Seidel Brandt Haas Ziegler Kühn Engel
Voigt Sauer Arnold Pfeiffer Smith Garcia Rossi Dubois Novak Kowalski Yılmaz Nakamura
Chen Patel Silva Andersson Jensen Özdemir Nguyen
""")

# (slug, aliases) — aliases are used for front matter; the first multi-word one is the display.
PLACES = [
    ("Berlin", []), ("München", ["Munich", "Muenchen"]), ("Hamburg", []),
    ("Köln", ["Cologne", "Koeln"]), ("Lisbon", ["Lissabon", "Lisboa"]), ("Leipzig", []),
    ("Marrakech", ["Marrakesch"]), ("Wien", ["Vienna"]), ("Zürich", ["Zurich"]),
    ("Frankfurt", ["Frankfurt am Main", "FFM"]), ("Dresden", []), ("Düsseldorf", []),
    ("Nürnberg", ["Nuremberg"]), ("Freiburg", []), ("Tokyo", ["Tokio"]),
    ("New-York", ["New York", "NYC"]), ("San-Francisco", ["San Francisco", "SF"]),
    ("Kopenhagen", ["Copenhagen"]), ("Prag", ["Prague", "Praha"]), ("Amsterdam", []),
    ("Sylt", []), ("Rügen", []), ("Schwarzwald", ["Black Forest"]),
    ("Gardasee", ["Lake Garda", "Lago di Garda"]), ("Falkenstein", []), ("Barcelona", []),
    ("Paris", []), ("London", []), ("Basel", []), ("Graz", []),
]
ORGS = [
    ("ACME-GmbH", ["ACME", "Acme GmbH"]), ("Hetzner", []), ("Finanzamt", ["FA Mitte"]),
    ("Sparkasse", []), ("TÜV", ["TUEV"]), ("Kita-Sonnenschein", ["Kita Sonnenschein", "Kita"]),
    ("Stadtwerke", []), ("Deutsche-Bahn", ["Deutsche Bahn", "DB"]), ("Bürgeramt", []),
    ("Dr.Özdemir", ["Dr. Özdemir", "Praxis Özdemir"]), ("Hoshi-Labs", ["Hoshi Labs"]),
    ("Krause-Partner", ["Krause & Partner", "Hausverwaltung"]), ("Stadtbibliothek", []),
    ("Fahrradladen", []),
]
PROJECT_NAMES = _words("""
warelay memtool atlas nordlicht kestrel hausbau heron falcon orca lynx aurora polaris zephyr
ember quartz basalt granite cobalt helix prism vega nova orbit pulse tundra fjord kompass
leuchtturm brücke steuererklärung garten umzug hochzeit küche-neu dachboden homelab nas-backup
smart-home mealplanner budget-app chess-bot thesis marathon spanischkurs ukulele fotobuch
website-relaunch podcast newsletter sync-proto recall-eval baileys
""")

EN_HEADINGS = _words("""
Morning Work Meetings Notes Ideas Reading Family Errands Standup Deploy Evening Health
Travel Finances Learning Open_questions Inbox Review Journal Weekend Household Sport
Garden Kids Admin Research Writing Calls Follow-ups Todo Done Retro On-call Music
""")
DE_HEADINGS = _words("""
Morgens Arbeit Termine Notizen Ideen Lesen Familie Erledigungen Abends Gesundheit Reise
Finanzen Lernen Offene_Fragen Haushalt Garten Auto Kinder Verwaltung Besprechungen Einkauf
Sport Wochenende Rückblick Übergabe Behördengänge Steuern Gespräche Später Erledigt
""")

# --------------------------------------------------------------------------------------------
# Sentence templates. Slots: P person, J project, L place, O org, E any entity, T tech term,
# X long-tail token, C inline code, D duration, N number, TIME clock time, MD month-day.
# English: n noun, ns plural, an noun phrase, a adjective, v verb, vd past, vg gerund,
# subj subject, when time phrase, wd weekday, item shopping item.
# German: dn noun, dnom/dacc noun phrase, ddat:PREP prepositional dative, da adjective,
# dinf infinitive, dpart participle, dsubj "Ich habe"/"Anna hat", dtsubj "Heute habe ich",
# dwd weekday, dpl plural noun.
# --------------------------------------------------------------------------------------------

EN_TEMPLATES = [
    "{subj} {vd} {an} for {J}.",
    "Talked with {P} about {an}.",
    "Need to {v} {an} before {wd}.",
    "{an} is {a} again; {P} thinks {an} is the cause.",
    "Fixed {an} in {J} by {vg} {an}.",
    "Meeting with {P} and {P}: agreed to {v} {an} by {wd}.",
    "Spent {D} on {an}, still {a}.",
    "Read an article about {T} and {ns}, {a} but {a}.",
    "Went to {L} with {P}; {an} was {a}.",
    "Reminder: {P} needs {an} by {wd}.",
    "Open question for {J}: should we {v} {an} or {an}?",
    "Call with {P} ({D}), mostly about {an}.",
    "{P} said {an} in {L} is {a}.",
    "Deployed {J} {VER} with {T}; {an} looks {a}.",
    "Bug in {J}: {T} fails when {an} is {a} ({X}).",
    "{when} I {vd} {an} and {vd} {an}.",
    "Idea: use {T} to {v} {an} for {J}.",
    "Not sure whether {an} is {a} enough for {J}.",
    "{P} wants to {v} {an} next week.",
    "Quick sync with {P} on {J}; next step is to {v} {an}.",
    "Finally {vd} {an}, took {D}.",
    "Noted: {an} at {O} is {a}.",
    "Lunch with {P} in {L}, talked about {ns} and {T}.",
    "Benchmark of {T} vs {T} on {an}: {a} results, see {X}.",
    "Still waiting for {P} to {v} {an}.",
    "Moved {an} from {T} to {T}.",
    "{P} recommended {an}; sounds {a}.",
    "Tried {vg} {an} with {C}, did not work ({X}).",
    "The {a} {n} from {O} arrived, {a} as expected.",
    "Weekend in {L}: {a} weather, {a} {n}.",
    "Wrote down {N} ideas for {J}, the {a} one is about {T}.",
    "Paid {M} for {an} at {O}.",
    "At {TIME} {P} called about {an}.",
    "Decided to {v} {an} instead of {vg} {an}.",
    "Groceries: {item}, {item} and {item}.",
    "{P} and I {vd} {an} for {E}; {a} but {a}.",
    "The {T} {n} for {J} is {a} now, {P} is happy.",
    "Asked {O} about {an}, answer expected by {wd}.",
]

DE_TEMPLATES = [
    "{dsubj} {dacc} für {J} {dpart}.",
    "Mit {P} über {dacc} gesprochen.",
    "{dnom} ist wieder {da}, {P} meint, {dnom} ist schuld.",
    "Bis {dwd} muss {dnom} fertig sein.",
    "{dtsubj} {dacc} {dpart}, hat {D} gedauert.",
    "Termin mit {P} in {L} um {TIME}.",
    "Kurzes Gespräch mit {P} {ddat:zu}, nächster Schritt: {dacc} {dinf}.",
    "Noch offen für {J}: {dnom} und {dnom}.",
    "{P} findet {dacc} zu {da}.",
    "Einkauf bei {O}: {dpl}, {dpl} und {dpl}.",
    "{dtsubj} {dacc} {dpart}, weil {dnom} {da} war.",
    "Idee für {J}: {dacc} mit {T} {dinf}.",
    "Wochenende in {L}, {dnom} war {da}.",
    "Fehler in {J}: {T} bricht ab, wenn {dnom} {da} ist ({X}).",
    "{P} hat {ddat:von} erzählt.",
    "Morgen {dacc} {dinf} und {dacc} {dinf}.",
    "Nicht sicher, ob {dnom} für {J} {da} genug ist.",
    "{D} in {dacc} gesteckt, immer noch {da}.",
    "Notiz: {dnom} bei {O} ist {da}.",
    "Mittagessen mit {P} in {L}, Thema war {T}.",
    "Endlich {dacc} {dpart}!",
    "Habe {dacc} von {T} auf {T} umgestellt.",
    "{P} empfiehlt {dacc}, klingt {da}.",
    "Warte noch auf Rückmeldung von {P} {ddat:zu}.",
    "{N} Ideen für {J} notiert, die beste betrifft {T}.",
    "Habe {M} für {dacc} bei {O} bezahlt.",
    "Um {TIME} Anruf von {P} {ddat:wegen}.",
    "Entschieden: {dacc} {dinf} statt {dacc} {dinf}.",
    "Besprechung mit {P} und {P}: {dnom} wird bis {dwd} {dpart}.",
    "{P} ist nach {L} gefahren, zurück am {dwd}.",
    "Gespräch mit {P} über {J} war {da}, aber {da}.",
    "In {L} {N} {dpl} angeschaut, {dnom} war {da}.",
    "{dsubj} {dacc} mit {C} {dpart}, Ergebnis {da}.",
    "Für {E} {dacc} {dpart}, {P} hilft {ddat:bei}.",
    "Die {T}-Konfiguration für {J} ist jetzt {da}.",
]

EN_RETAIN = {
    ("W", "person"): [
        "Currently in {L} ({RANGE}) for {P}'s birthday.",
        "Works at {O} on {J}.",
        "Moved to {L}; the {a} {n} stays with {P}.",
        "Birthday is on {MD}.",
        "Uses {T} for {ns} and {T} for everything else.",
        "Is the contact for {an} at {O}.",
        "Lives in {L} now, was in {L} before.",
    ],
    ("W", "project"): [
        "Runs on {T} with {T} as the {n}.",
        "Repository moved; new {n} is {X}.",
        "Release {VER} is planned for {DATE}.",
        "Owner is {P}; {P} reviews {ns}.",
        "Prod is a {T} box in {L}, timers in UTC.",
    ],
    ("W", "place"): [
        "Train from {L} takes {D}, {a} connection.",
        "The {n} at {O} opens at {TIME}.",
        "{P} recommended the {a} {n} near the station.",
    ],
    ("W", None): [
        "The {a} {n} at {O} is open until {TIME}.",
        "{T} {VER} drops support for {ns}.",
    ],
    ("B", None): [
        "I fixed {an} by {vg} {an} (see memory/{PREV}.md).",
        "I migrated {an} from {T} to {T}.",
        "I wrote {an} for {P}, took longer than planned.",
        "Tried to {v} {an} with {T}, gave up after {D}.",
        "I {vd} {an} and {vd} {an} for {E}.",
        "I set up {T} for {an}; {a} so far.",
    ],
    ("O", "person"): [
        "Prefers {a} replies (<{N}00 chars) on {T}; long content goes into files.",
        "Thinks {an} is {a}.",
        "Likes {ns} more than {ns}.",
        "Prefers calls after {TIME}, never before.",
        "Dislikes {T}; wants {an} instead.",
    ],
    ("O", None): [
        "{T} is the {a} choice for {an}.",
        "Probably needs {a} {ns} before the next release.",
        "{an} feels {a}; not worth more time.",
    ],
    ("S", None): [
        "{N} sessions this week were about {J}.",
        "Most of the week went into {an} for {J}.",
        "Recurring theme: {T} and {ns}.",
        "This month {J} was mostly about {ns}, less about {T}.",
    ],
}
DE_RETAIN = {
    ("W", "person"): [
        "Ist in {L} ({RANGE}), zum Geburtstag von {P}.",
        "Arbeitet bei {O} an {J}.",
        "Wohnt jetzt in {L}, vorher in {L}.",
        "Hat am {DM} Geburtstag.",
        "Ist Ansprechpartner für {dacc} bei {O}.",
        "Nutzt {T} für {dacc}.",
    ],
    ("W", "project"): [
        "Läuft auf {T} mit {T} als {dn}.",
        "Release {VER} ist für den {DE_DATE} geplant.",
        "Zuständig ist {P}; {P} prüft {dacc}.",
        "Prod läuft bei {O} in {L}.",
    ],
    ("W", "place"): [
        "Der Zug aus {L} braucht {D}, die Verbindung ist {da}.",
        "{dnom} bei {O} öffnet um {TIME}.",
    ],
    ("W", None): [
        "{dnom} bei {O} ist bis {TIME} offen.",
        "{T} {VER} unterstützt {dacc} nicht mehr.",
    ],
    ("B", None): [
        "Ich habe {dacc} mit {T} {dpart} (siehe memory/{PREV}.md).",
        "Ich habe {dacc} von {T} auf {T} migriert.",
        "Habe {dacc} für {P} {dpart}, hat länger gedauert.",
        "Wollte {dacc} {dinf}, nach {D} aufgegeben.",
        "Ich habe {dacc} {dpart} und {dacc} {dpart}.",
    ],
    ("O", "person"): [
        "Bevorzugt {dacc} und kurze Antworten.",
        "Findet {T} {da}.",
        "Mag keine {dpl}.",
        "Telefoniert lieber nach {TIME}.",
        "Hält {dacc} für {da}.",
    ],
    ("O", None): [
        "{T} ist für {dacc} {da} genug.",
        "{dnom} wirkt {da}; lohnt keine weitere Zeit.",
        "Braucht vor dem nächsten Release {dacc}.",
    ],
    ("S", None): [
        "Diese Woche ging es {N} Mal um {J}.",
        "Der Großteil der Woche ging in {dacc} für {J}.",
        "Wiederkehrendes Thema: {T} und {dnom}.",
        "{N} Sitzungen drehten sich um {T}.",
    ],
}
RETAIN_TAIL = {
    "en": ["Confirmed by {P}.", "Follow up on {wd}.", "Worth remembering.", "See {J} notes.",
           "Double-check with {P}."],
    "de": ["Von {P} bestätigt.", "Am {dwd} nachhaken.", "Merken.", "Siehe Notizen zu {J}.",
           "Mit {P} abklären."],
}
ENTITY_INTRO = {
    "person": ("{d} is a contact I work with regularly.",
               "{d} ist ein Kontakt, mit dem ich regelmäßig zu tun habe."),
    "project": ("{d} is one of my projects.", "{d} ist eines meiner Projekte."),
    "place": ("{d} is a place I go to now and then.", "{d} ist ein Ort, an dem ich ab und zu bin."),
    "org": ("{d} is an organisation I deal with.",
            "{d} ist eine Organisation, mit der ich zu tun habe."),
}
OUTCOMES = ["fixed", "fixed", "fixed", "shipped", "works", "partial", "failed", "workaround",
            "blocked", "abandoned", "done"]
CONFIDENCES = (0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
COSTS = ["15m", "30m", "45m", "1h", "1h", "2h", "2h", "3h", "3.5h", "4h", "1d", "2d", "1 Tag"]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------

class _Zipf:
    """Draw items with weight 1/rank**s (list order is the rank)."""

    __slots__ = ("items", "cum", "total", "last", "_r")

    def __init__(self, items: list, rnd, s: float = ZIPF_S) -> None:
        self.items = list(items)
        self.cum = list(itertools.accumulate(1.0 / (i + 1) ** s for i in range(len(items))))
        self.total = self.cum[-1]
        self.last = len(items) - 1
        self._r = rnd

    def __call__(self):
        i = bisect.bisect_right(self.cum, self._r() * self.total)
        return self.items[i if i <= self.last else self.last]


def _compile(template: str) -> list:
    parts: list = []
    for literal, field, spec, _ in Formatter().parse(template):
        if literal:
            parts.append(literal)
        if field is not None:
            parts.append((field, spec or ""))
    return parts


def _cap(s: str) -> str:
    return s[0].upper() + s[1:] if s and s[0].islower() else s


def _en_past(v: str) -> str:
    if v in EN_PAST:
        return EN_PAST[v]
    if v in EN_DOUBLE:
        return v + v[-1] + "ed"
    if v.endswith("e"):
        return v + "d"
    if v.endswith("y") and v[-2] not in "aeiou":
        return v[:-1] + "ied"
    return v + "ed"


def _en_ing(v: str) -> str:
    if v in EN_DOUBLE:
        return v + v[-1] + "ing"
    if v.endswith("e") and not v.endswith("ee"):
        return v[:-1] + "ing"
    return v + "ing"


def _en_plural(n: str) -> str:
    if n.endswith(("s", "x", "ch", "sh")):
        return n + "es"
    if n.endswith("y") and n[-2] not in "aeiou":
        return n[:-1] + "ies"
    return n + "s"


def _insert_before_end(text: str, phrase: str) -> str:
    """Put `phrase` (with its leading space) before the line's final punctuation."""
    if text and text[-1] in ".!?":
        return text[:-1] + phrase + text[-1]
    return text + phrase


class _Entity:
    __slots__ = ("slug", "kind", "display", "aliases", "at", "wiki", "plain")

    def __init__(self, slug: str, kind: str, display: str, aliases: list[str],
                 plain: list[str]) -> None:
        self.slug, self.kind, self.display, self.aliases = slug, kind, display, aliases
        single = [a for a in aliases if " " not in a and re.fullmatch(r"[^\W_][\w.\-]*", a)]
        # Mostly the slug itself, sometimes a single-word alias or the lowercase slug.
        self.at = [slug] * 8 + single * 2 + [slug.lower()]
        self.wiki = [slug] + [a for a in aliases if " " in a] * 2
        self.plain = plain


# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------

class _Generator:
    def __init__(self, seed: int) -> None:
        self.rng = rng = Random(seed)
        r = rng.random
        self.r = r
        self._build_vocab()
        self._build_entities()
        self._new_focus()
        self.slots = {
            "P": lambda a: self._ent("person"), "J": lambda a: self._ent("project"),
            "L": lambda a: self._ent("place"), "O": lambda a: self._ent("org"),
            "E": lambda a: self._ent(None), "T": lambda a: self.tech(), "X": lambda a: self._x(),
            "VER": lambda a: self._version(), "M": lambda a: self._money(),
            "C": lambda a: rng.choice(CODE), "N": lambda a: str(rng.randint(2, 9)),
            "TIME": lambda a: f"{rng.randint(7, 21):02d}:{rng.choice(('00', '15', '30', '45'))}",
            "MD": lambda a: f"{EN_MONTHS[rng.randrange(12)]} {rng.randint(1, 28)}",
            "DM": lambda a: f"{rng.randint(1, 28):02d}.{rng.randint(1, 12):02d}.",
            "RANGE": lambda a: self._date_range_en(), "DATE": lambda a: self._date_iso(),
            "DE_DATE": lambda a: self._date_de_num(),
            "PREV": lambda a: self._prev_day()[0],
            # English
            "n": lambda a: self.en_noun(), "ns": lambda a: _en_plural(self.en_noun()),
            "an": lambda a: self._en_np(), "a": lambda a: self.en_adj(),
            "v": lambda a: self.en_verb()[0], "vd": lambda a: self.en_verb()[1],
            "vg": lambda a: self.en_verb()[2], "subj": lambda a: self._en_subj(),
            "when": lambda a: rng.choice(EN_WHEN), "wd": lambda a: self._en_wd(),
            "D": lambda a: rng.choice(EN_DUR if self.lang == "en" else DE_DUR),
            "item": lambda a: self.en_item(),
            # German
            "dn": lambda a: self.de_noun()[0], "dnom": lambda a: self._de_np("nom"),
            "dacc": lambda a: self._de_np("acc"), "ddat": lambda a: self._de_np("dat", a),
            "da": lambda a: self.de_adj(), "dinf": lambda a: self.de_verb()[0],
            "dpart": lambda a: self.de_verb()[1], "dsubj": lambda a: self._de_subj(),
            "dtsubj": lambda a: self._de_tsubj(), "dwd": lambda a: self._de_wd(),
            "dpl": lambda a: self.de_plural(),
        }
        self.tpl = {"en": [_compile(t) for t in EN_TEMPLATES],
                    "de": [_compile(t) for t in DE_TEMPLATES]}
        self.retain_tpl = {
            lang: {k: [_compile(t) for t in v] for k, v in table.items()}
            for lang, table in (("en", EN_RETAIN), ("de", DE_RETAIN))
        }
        self.retain_tail = {k: [_compile(t) for t in v] for k, v in RETAIN_TAIL.items()}
        self.lang = "en"
        self.day = date(2019, 1, 1)
        self.history: list[tuple[str, int]] = []  # (date, line count) of written days
        self.mention = False
        self.mentioned = False
        self.line_ents: set[_Entity] = set()

    # ---- vocabulary -----------------------------------------------------------------------

    def _build_vocab(self) -> None:
        rng, r = self.rng, self.r
        self.en_noun = _Zipf(EN_NOUNS, r)
        self.en_adj = _Zipf(EN_ADJ, r)
        self.en_verb = _Zipf([(v, _en_past(v), _en_ing(v)) for v in EN_VERBS], r)
        self.en_item = _Zipf(EN_ITEMS, r)
        self.tech = _Zipf(TECH, r)
        base = [(w.split(":")[0], w.split(":")[1]) for w in DE_NOUNS]
        combos = [(h + t.split(":")[0], t.split(":")[1])
                  for h in DE_COMPOUND_HEAD for t in DE_COMPOUND_TAIL
                  if h.lower().rstrip("s") != t.split(":")[0]]
        rng.shuffle(combos)
        # Base nouns form the head of the distribution, compounds its long tail.
        self.de_noun = _Zipf(base + combos[:1400], r)
        self.de_adj = _Zipf(DE_ADJ, r)
        self.de_verb = _Zipf([tuple(v.split("/")) for v in DE_VERBS], r)
        self.de_plural = _Zipf(DE_PLURAL, r)

    # ---- entities -------------------------------------------------------------------------

    def _build_entities(self) -> None:
        rng = self.rng
        firsts = rng.sample(FIRST_NAMES, N_PEOPLE)
        # Place and organisation names are reserved so that no alias means two entities.
        used_alias = {a.lower() for slug, al in PLACES + ORGS for a in [slug, *al]}
        people = []
        for first in firsts:
            last = rng.choice(LAST_NAMES)
            full = f"{first} {last}"
            roll = rng.random()
            if roll < 0.30:  # slug is the full name
                slug, aliases = f"{first}-{last}", [full, first]
            elif roll < 0.55:  # slug is the first name, aliases give the full name
                slug, aliases = first, [full]
                initials = (first[0] + last[0]).upper()
                if initials not in used_alias and rng.random() < 0.5:
                    aliases.append(initials)
            else:
                slug, aliases = first, []
            aliases = [a for a in aliases if a.lower() not in used_alias]
            used_alias.update(a.lower() for a in aliases)
            used_alias.add(slug.lower())
            plain = [first, first, first, full]
            people.append(_Entity(slug, "person", full, aliases, plain))
        projects = []
        for name in rng.sample(PROJECT_NAMES, N_PROJECTS):
            roll = rng.random()
            if roll < 0.30:
                slug = "proj-" + name
            elif roll < 0.80:
                slug = name
            else:
                slug = name[0].upper() + name[1:]
            display = name[0].upper() + name[1:]
            aliases = []
            if rng.random() < 0.45:
                aliases = [a for a in (display, f"Projekt {display}") if a != slug]
            plain = [name, display, slug]
            projects.append(_Entity(slug, "project", display, aliases, plain))
        places = []
        for slug, aliases in rng.sample(PLACES, N_PLACES):
            display = slug.replace("-", " ")
            plain = [display, display, display] + [a for a in aliases if len(a) > 3][:1]
            places.append(_Entity(slug, "place", display, list(aliases), plain))
        orgs = []
        for slug, aliases in rng.sample(ORGS, N_ORGS):
            display = next((a for a in aliases if " " in a), slug.replace("-", " "))
            orgs.append(_Entity(slug, "org", display, list(aliases), [display, display]))
        self.entities = people + projects + places + orgs
        r = self.r
        self.by_kind = {"person": _Zipf(people, r, 0.9), "project": _Zipf(projects, r, 0.9),
                        "place": _Zipf(places, r, 0.9), "org": _Zipf(orgs, r, 0.9)}
        self.kind_pick = _Zipf([k for k, _ in KIND_WEIGHTS], r, 1.4)
        self.focus: dict[str, list[_Entity]] = {}

    def _new_focus(self) -> None:
        """Each day has a few entities it is mostly about."""
        rng = self.rng
        self.focus = {k: [z() for _ in range(rng.randint(1, 3))] for k, z in self.by_kind.items()}

    def _pick_entity(self, kind: str | None) -> _Entity:
        """An entity not yet named in the current line (a day's focus entities first)."""
        if kind is None:
            kind = self.kind_pick()
        for _ in range(4):
            e = self.rng.choice(self.focus[kind]) if self.r() < 0.55 else self.by_kind[kind]()
            if e not in self.line_ents:
                break
        self.line_ents.add(e)
        return e

    def _ent(self, kind: str | None) -> str:
        e = self._pick_entity(kind)
        rng = self.rng
        if self.mention and not self.mentioned:
            self.mentioned = True
            return "@" + rng.choice(e.at)
        x = self.r()
        if x < WIKI:
            return "[[" + rng.choice(e.wiki) + "]]"
        if x < WIKI + EXTRA_AT:
            return "@" + rng.choice(e.at)
        return rng.choice(e.plain)

    # ---- small slots ----------------------------------------------------------------------

    def _version(self) -> str:
        rng = self.rng
        return f"v{rng.randint(0, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 30)}"

    def _money(self) -> str:
        rng = self.rng
        if rng.random() < 0.6:
            return f"{rng.randint(5, 900)},{rng.randint(0, 99):02d} €"
        return f"${rng.randint(5, 2000)}"

    def _x(self) -> str:
        rng = self.rng
        k = rng.randrange(9)
        if k == 0:
            return self._version()
        if k == 1:
            return f"#{rng.randint(10, 9999)}"
        if k == 2:
            return f"PR #{rng.randint(10, 2500)}"
        if k == 3:
            host = rng.choice(("db", "web", "api", "cache", "worker", "nas", "pi", "edge"))
            dom = rng.choice(("internal", "lan", "home.arpa", "prod"))
            return f"{host}-{rng.randint(1, 24):02d}.{dom}"
        if k == 4:
            return rng.choice(FILES)
        if k == 5:
            return rng.choice(("ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOSPC", "SIGSEGV",
                               "HTTP 503", "HTTP 429", "OOMKilled", "exit code 137",
                               f"E{rng.randint(1000, 9999)}"))
        if k == 6:
            return f"{rng.choice(('OPS', 'MEM', 'SYNC', 'WEB', 'INFRA'))}-{rng.randint(1, 999)}"
        if k == 7:
            return f"commit {rng.getrandbits(28):07x}"
        return f"src/{self.en_noun().replace(' ', '_')}/{self.en_verb()[0]}.py"

    def _en_np(self) -> str:
        r = self.r
        x = r()
        det = "the" if x < 0.70 else "our" if x < 0.78 else "this" if x < 0.86 else None
        words = []
        if r() < 0.30:
            words.append(self.en_adj())
        if r() < 0.15:
            words.append(self.tech())
        words.append(self.en_noun())
        phrase = " ".join(words)
        if det is None:
            det = "an" if phrase[0] in "aeiouAEIOU" else "a"
        return det + " " + phrase

    def _en_subj(self) -> str:
        if self.r() < 0.2:
            return self._ent("person")
        return self.rng.choice(EN_SUBJ)

    def _en_wd(self) -> str:
        wd = self.rng.choice(EN_WEEKDAYS)
        return "next " + wd if self.r() < 0.25 else wd

    def _de_wd(self) -> str:
        wd = self.rng.choice(DE_WEEKDAYS)
        return "nächsten " + wd if self.r() < 0.25 else wd

    _DE_ART = {
        ("nom", "m"): "der", ("nom", "f"): "die", ("nom", "n"): "das",
        ("acc", "m"): "den", ("acc", "f"): "die", ("acc", "n"): "das",
        ("dat", "m"): "dem", ("dat", "f"): "der", ("dat", "n"): "dem",
    }
    _DE_DEM = {"der": "dieser", "die": "diese", "das": "dieses", "den": "diesen", "dem": "diesem"}
    _DE_CONTRACT = {("zu", "dem"): "zum", ("zu", "der"): "zur", ("in", "dem"): "im",
                    ("bei", "dem"): "beim", ("von", "dem"): "vom", ("an", "dem"): "am"}

    def _de_np(self, case: str, prep: str = "") -> str:
        r = self.r
        noun, g = self.de_noun()
        art = self._DE_ART[case, g]
        demonstrative = r() < 0.08
        if demonstrative:
            art = self._DE_DEM[art]
        words = []
        if r() < 0.30:
            adj = self.de_adj()
            adj = DE_ADJ_STEM.get(adj, adj)
            weak = "en" if case == "dat" or (case == "acc" and g == "m") else "e"
            words.append(adj + (weak[1:] if adj.endswith("e") else weak))
        words.append(noun)
        np = " ".join(words)
        if prep == "wegen":  # colloquial dative after "wegen"
            return f"wegen {art} {np}"
        if prep:
            c = None if demonstrative else self._DE_CONTRACT.get((prep, art))
            return f"{c} {np}" if c else f"{prep} {art} {np}"
        return f"{art} {np}"

    def _de_subj(self) -> str:
        x = self.r()
        if x < 0.40:
            return "Ich habe"
        if x < 0.65:
            return "Wir haben"
        if x < 0.90:
            return self._ent("person") + " hat"
        return "Das Team hat"

    def _de_tsubj(self) -> str:
        when = self.rng.choice(DE_WHEN)
        x = self.r()
        if x < 0.45:
            return when + " habe ich"
        if x < 0.70:
            return when + " haben wir"
        return when + " hat " + self._ent("person")

    # ---- dates ----------------------------------------------------------------------------

    def _around(self) -> date:
        return self.day + timedelta(days=self.rng.randint(-60, 120))

    def _date_iso(self) -> str:
        return self._around().isoformat()

    def _date_de_num(self) -> str:
        d = self._around()
        return f"{d.day:02d}.{d.month:02d}.{d.year}"

    def _date_range_en(self) -> str:
        a = self._around()
        b = a + timedelta(days=self.rng.randint(1, 9))
        if a.month == b.month:
            return f"{EN_MON[a.month - 1]} {a.day}–{b.day}, {b.year}"
        return f"{EN_MON[a.month - 1]} {a.day}–{EN_MON[b.month - 1]} {b.day}, {b.year}"

    def _date_phrase(self, lang: str) -> str:
        """A phrase with an explicit date, in a form memtool's date extraction understands."""
        rng = self.rng
        k = rng.randrange(6)
        if lang == "en":
            if k == 0:
                return " on " + self._date_iso()
            if k == 1:
                return " (" + self._date_range_en() + ")"
            if k == 2:
                d = self._around()
                return f" until {EN_MONTHS[d.month - 1]} {d.day}, {d.year}"
            if k == 3:
                return " (due " + self._date_iso() + ")"
            if k == 4:
                a = self._around()
                b = a + timedelta(days=rng.randint(2, 6))
                return f" from {a.isoformat()} to {b.isoformat()}"
            return " (" + self._date_iso() + ")"
        if k <= 1:
            return " am " + self._date_de_num()
        if k == 2:
            a = self._around()
            b = a + timedelta(days=rng.randint(1, 9))
            return f" ({a.day:02d}.{a.month:02d}.–{b.day:02d}.{b.month:02d}.{b.year})"
        if k == 3:
            d = self._around()
            return f" am {d.day}. {DE_MONTHS[d.month - 1]} {d.year}"
        if k == 4:
            a = self._around()
            b = a + timedelta(days=rng.randint(1, 5))
            if a.month == b.month:
                return f" vom {a.day}.–{b.day}. {DE_MONTHS[a.month - 1]} {a.year}"
            return f" bis {self._date_iso()}"
        return " (bis " + self._date_iso() + ")"

    def _prev_day(self) -> tuple[str, int]:
        if not self.history:  # the first day can only point at itself
            return self.day.isoformat(), 5
        return self.rng.choice(self.history[-40:])

    # ---- sentences and lines --------------------------------------------------------------

    def _render(self, parts: list) -> str:
        slots = self.slots
        out = [p if p.__class__ is str else slots[p[0]](p[1]) for p in parts]
        return _cap("".join(out))

    def _target(self) -> int:
        return int(math.exp(self.rng.gauss(math.log(LINE_MEDIAN), 0.45)))

    def _compose(self, first: list, more: list, lo: int, hi: int,
                 target: int | None = None) -> str:
        """One or more sentences with a total length in [lo, hi], near a random target."""
        rng = self.rng
        if target is None:
            target = self._target()
        s = ""
        for _ in range(20):
            s = self._render(rng.choice(first))
            if len(s) > hi:
                continue
            tries = 0
            while (len(s) < target or len(s) < lo) and tries < 12:
                nxt = self._render(rng.choice(more))
                tries += 1
                if len(s) + 1 + len(nxt) <= hi:
                    s = s + " " + nxt
                elif len(s) >= lo:
                    break
            if lo <= len(s) <= hi:
                return s
        return s[:hi].rsplit(" ", 1)[0] if len(s) > hi else s  # practically unreachable

    def narrative(self, lang: str, prefix: str) -> str:
        """A narrative line (list item or paragraph line) including `prefix`."""
        self.lang = lang
        self.mention = self.r() < MENTION
        self.mentioned = False
        self.line_ents = set()
        lo, hi = LINE_MIN - len(prefix), LINE_MAX - len(prefix)
        pool = self.tpl[lang]
        s = self._compose(pool, pool, lo, hi)
        if self.mention and not self.mentioned:
            e = self._pick_entity(None)
            tail = (" (@" if lang == "de" or self.r() < 0.5 else " cc @") + e.slug
            tail += ")" if tail.startswith(" (") else ""
            if len(s) + len(tail) <= hi:
                s = _insert_before_end(s, tail)
        if self.r() < DATED:
            phrase = self._date_phrase(lang)
            if len(s) + len(phrase) <= hi:
                s = _insert_before_end(s, phrase)
        return prefix + s

    def retain(self, lang: str) -> str:
        rng, r = self.rng, self.r
        self.line_ents = set()
        t = rng.choices([k for k, _ in RETAIN_TYPES], [w for _, w in RETAIN_TYPES])[0]
        head: _Entity | None = None
        if t == "W":
            y = r()
            kind = "person" if y < 0.55 else "project" if y < 0.75 else \
                "place" if y < 0.87 else "org" if y < 0.95 else None
            head = self._pick_entity(kind) if kind else None
        elif t == "B":
            y = r()
            head = self._pick_entity("project" if y < 0.6 else "person" if y < 0.85 else "org")
        elif t == "O":
            y = r()
            head = self._pick_entity("person" if y < 0.7 else "project" if y < 0.9 else "place")
        elif r() < 0.10:
            head = self._pick_entity("project")
        label = t
        if t == "O" and r() < 0.8:
            label = f"O(c={rng.choice(CONFIDENCES):.2f})"
        prefix = "- " + label + (" @" + rng.choice(head.at) if head else "") + ": "
        fields = ""
        if t == "B":
            if r() < 0.7:
                fields += f" [outcome:: {rng.choice(OUTCOMES)}]"
            if r() < 0.6:
                fields += f" [cost:: {rng.choice(COSTS)}]"
        if t in "BO" and self.history and r() < 0.08:
            day, n = self._prev_day()
            fields += f" [because:: memory/{day}.md#L{rng.randint(3, max(3, n))}]"
        table = self.retain_tpl[lang]
        hkind = head.kind if head else None
        key = (t, hkind) if (t, hkind) in table else (t, None)
        if key not in table:
            key = (t, "person")
        self.lang = lang
        self.mention = False
        self.mentioned = True
        lo = LINE_MIN - len(prefix) - len(fields)
        hi = LINE_MAX - len(prefix) - len(fields)
        s = self._compose(table[key], self.tpl[lang], lo, hi)
        if r() < 0.2:
            tail = self._render(rng.choice(self.retain_tail[lang]))
            if len(s) + 1 + len(tail) <= hi:
                s += " " + tail
        if r() < DATED * 0.6 and "(" not in s:
            phrase = self._date_phrase(lang)
            if len(s) + len(phrase) <= hi:
                s = _insert_before_end(s, phrase)
        return prefix + s + fields

    def heading(self, lang: str, used: set[str]) -> str:
        rng = self.rng
        for _ in range(10):
            x = self.r()
            if x < 0.12:
                p = self._pick_entity("person").plain[0]
                h = f"Call with {p}" if lang == "en" else f"Gespräch mit {p}"
            elif x < 0.22:
                j = self._pick_entity("project").display
                h = f"{j} planning" if lang == "en" else f"{j}: Planung"
            elif x < 0.27:
                h = f"{rng.randint(7, 20):02d}:{rng.choice(('00', '30'))} " + \
                    (rng.choice(EN_HEADINGS) if lang == "en" else rng.choice(DE_HEADINGS))
            else:
                h = rng.choice(EN_HEADINGS if lang == "en" else DE_HEADINGS)
            if h not in used:
                used.add(h)
                return h
        return h + f" {len(used)}"

    # ---- files ----------------------------------------------------------------------------

    def daily(self, day: date, nfacts: int) -> str:
        """The text of one daily log with exactly `nfacts` facts."""
        rng, r = self.rng, self.r
        self.day = day
        self._new_focus()
        p_en = min(0.95, max(0.2, EN_SHARE + rng.uniform(-0.3, 0.3)))
        lang = lambda: "en" if r() < p_en else "de"  # noqa: E731
        day_lang = "en" if p_en >= 0.5 else "de"
        nretain = 0
        if r() < RETAIN_DAY and nfacts >= 6:
            nretain = min(rng.randint(*RETAIN_BULLETS), nfacts - 4)
        narrative = nfacts - nretain
        lines = [f"# {day.isoformat()}", ""]
        if r() < INTRO_PARAGRAPH and narrative > 3:
            lines += [self.narrative(lang(), ""), ""]
            narrative -= 1
        nsec = max(1, min(rng.randint(*SECTIONS), narrative // 3 or 1))
        cuts = sorted(rng.sample(range(1, narrative), nsec - 1)) if nsec > 1 else []
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [narrative])]
        used: set[str] = set()
        for size in sizes:
            lines += ["## " + self.heading(day_lang, used), ""]
            remaining = size
            in_list = False
            while remaining:
                if r() < PARAGRAPH_BLOCK:
                    if in_list:
                        lines.append("")
                    nl = 1 if r() < 0.7 else 2 if r() < 0.8 else 3
                    lg = lang()
                    lines += [self.narrative(lg, "") for _ in range(nl)]
                    lines.append("")
                    in_list = False
                    remaining -= 1
                    continue
                run = min(remaining, rng.randint(*LIST_RUN))
                for i in range(run):
                    nested = i > 0 and r() < NESTED_SHARE
                    lines.append(self.narrative(lang(), "  - " if nested else "- "))
                in_list = True
                remaining -= run
            if in_list:
                lines.append("")
        if nretain:
            lines += ["## Retain"] + [self.retain(lang()) for _ in range(nretain)] + [""]
        while lines and lines[-1] == "":
            lines.pop()
        self.history.append((day.isoformat(), len(lines)))
        return "\n".join(lines) + "\n"

    def entity_page(self, e: _Entity) -> tuple[str, int]:
        rng = self.rng
        self.day = date(2019, 1, 1)
        self.mention, self.mentioned = False, True
        out = []
        if e.aliases:
            out += ["---", "aliases: [" + ", ".join(e.aliases) + "]", "---"]
        out += [f"# {e.display}", ""]
        lang = self.lang = "en" if self.r() < EN_SHARE else "de"
        facts = 0
        intro = ENTITY_INTRO[e.kind][lang == "de"].format(d=e.display)
        pool = self.tpl[lang]
        self.line_ents = {e}
        out += [intro + " " + self._compose(pool, pool, 20, 160, 0), ""]
        facts += 1
        table = self.retain_tpl[lang]
        about = table.get(("W", e.kind), table[("W", None)]) + table.get(("O", e.kind), [])
        for tpl in rng.sample(about, min(len(about), rng.randint(2, 5))):
            self.line_ents = {e}
            out.append("- " + self._compose([tpl], pool, LINE_MIN - 2, LINE_MAX - 2, 0))
            facts += 1
        if rng.random() < 0.3:
            out.append(self.narrative(lang, "- "))
            facts += 1
        return "\n".join(out) + "\n", facts

    def world(self) -> tuple[str, int]:
        self.mention, self.mentioned = False, True
        out = ["# World", ""]
        facts = 0
        for kind, title in (("person", "People"), ("project", "Projects"),
                            ("place", "Places"), ("org", "Organisations")):
            out += [f"## {title}", ""]
            ents = [e for e in self.entities if e.kind == kind][:12]
            for e in ents:
                self.line_ents = {e}
                lang = self.lang = "en" if self.r() < EN_SHARE else "de"
                key = ("W", kind) if ("W", kind) in EN_RETAIN else ("W", None)
                s = self._compose(self.retain_tpl[lang][key], self.tpl[lang], 30, 200, 0)
                out.append(f"- @{e.slug}: {s}")
                facts += 1
            out.append("")
        return "\n".join(out).rstrip("\n") + "\n", facts

    def core(self) -> tuple[str, int]:
        people = [e for e in self.entities if e.kind == "person"]
        projects = [e for e in self.entities if e.kind == "project"]
        places = [e for e in self.entities if e.kind == "place"]
        me, home = people[0], places[0].display
        p1, p2, p3, p4 = (p.slug for p in people[1:5])
        lines = [
            "# Core memory", "",
            "## Me",
            f"- {me.display}, software developer in {home} (Python, TypeScript, a bit of Go).",
            f"- Main projects: [[{projects[0].slug}]] (with @{p1}) and [[{projects[1].slug}]].",
            f"- Wohne in {home}; Arbeitszimmer im Dachgeschoss, Büro bei @{p2}.",
            "- Steuerrücklage: 35 % jeder Rechnung auf das Extra-Konto.",
            "",
            "## People",
            f"- @{p1}: WhatsApp only, keep it short. No calls before 10.",
            f"- @{p3}: macht meine Steuererklärung, sehr gründlich, Termine nur dienstags.",
            f"- @{p4}: oldest friend, birthday in November.",
            "",
            "## How I want the assistant to work",
            "- Antworte auf Deutsch, wenn ich Deutsch schreibe; otherwise English.",
            "- Short answer first, details only when I ask.",
            "- Dates as YYYY-MM-DD.",
            "- Never send anything to a client without asking me first.",
        ]
        return "\n".join(lines) + "\n", sum(1 for x in lines if x.startswith("- "))


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

_GENERATED = ("memory.md", "memory", "bank", ".memory")


def generate(out: Path, facts: int, seed: int = 42, start: date = date(2019, 1, 1), *,
             overwrite: bool = False) -> dict:
    """Write a synthetic workspace with `facts` daily-log facts to `out` and return stats.

    Refuses a non-empty `out` unless `overwrite`, which first removes the workspace paths this
    generator writes (memory.md, memory/, bank/) and the derived .memory/ folder.
    """
    t0 = time.perf_counter()
    out = Path(out)
    if facts < 1:
        raise ValueError("facts must be at least 1")
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise FileExistsError(f"{out} is not empty (use --force / overwrite=True)")
        for name in _GENERATED:
            p = out / name
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    (out / "memory").mkdir(parents=True, exist_ok=True)
    (out / "bank" / "entities").mkdir(parents=True, exist_ok=True)

    g = _Generator(seed)
    rng = g.rng
    nbytes = nfiles = 0

    def write(path: Path, text: str) -> None:
        nonlocal nbytes, nfiles
        data = text.encode("utf-8")
        path.write_bytes(data)
        nbytes += len(data)
        nfiles += 1

    text, core_facts = g.core()
    write(out / "memory.md", text)
    bank_facts = core_facts
    for e in g.entities:
        text, n = g.entity_page(e)
        write(out / "bank" / "entities" / f"{e.slug}.md", text)
        bank_facts += n
    text, n = g.world()
    write(out / "bank" / "world.md", text)
    bank_facts += n

    remaining = facts
    day = start
    days = 0
    memdir = out / "memory"
    while remaining > 0:
        if rng.random() >= SKIP_DAY:
            low, high, mode = FACTS_PER_DAY
            n = round(rng.triangular(low, high, mode))
            if remaining <= high:  # the last day takes the rest
                n = remaining
            elif remaining - n < low:  # keep the last day full-sized
                n = remaining - low
            write(memdir / f"{day.isoformat()}.md", g.daily(day, n))
            remaining -= n
            days += 1
        day += timedelta(days=1)

    return {
        "files": nfiles,
        "facts": facts,
        "days": days,
        "bytes": nbytes,
        "bank_facts": bank_facts,
        "entities": len(g.entities),
        "first_day": start.isoformat(),
        "last_day": (day - timedelta(days=1)).isoformat(),
        "seed": seed,
        "seconds": round(time.perf_counter() - t0, 3),
    }


_DAILY = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
_RETAIN_HEADING = re.compile(r"^##\s+retain\s*$", re.I)


def append_line(workspace: Path, text: str) -> Path:
    """Add the narrative bullet `- text` to the newest daily log and return its path.

    The bullet goes at the end of the narrative part: before a `## Retain` section if the log
    has one (so it is not read as a malformed Retain bullet), else at the end of the file; a
    blank line separates it from a paragraph it would otherwise continue.
    """
    text = text.strip()
    if not text or "\n" in text or "\r" in text:
        raise ValueError("text must be one non-empty line")
    memdir = Path(workspace) / "memory"
    logs = sorted(p.name for p in memdir.glob("*.md") if _DAILY.match(p.name))
    if not logs:
        raise FileNotFoundError(f"no daily logs in {memdir}")
    path = memdir / logs[-1]
    content = path.read_text(encoding="utf-8")
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    at = next((i for i, line in enumerate(lines) if _RETAIN_HEADING.match(line)), len(lines))
    end = at
    while end > 0 and lines[end - 1].strip() == "":
        end -= 1
    prev = lines[end - 1] if end else ""
    paragraph = prev.strip() != "" and not prev.lstrip().startswith(("- ", "#"))
    new = (["", f"- {text}"] if paragraph else [f"- {text}"])
    if at == len(lines) and end == len(lines):  # plain append: no rewrite of the file
        sep = "\n" if content and not content.endswith("\n") else ""
        with path.open("a", encoding="utf-8", newline="\n") as f:
            f.write(sep + "\n".join(new) + "\n")
        return path
    lines[end:end] = new
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    return path


def append_days(workspace: Path, facts: int, seed: int = 7, per_day: int = 38) -> list[Path]:
    """Write `facts` new facts as new daily logs (`per_day` each, the last one takes the rest) on the
    days after the newest log, from the same entities and vocabulary as the workspace (seed 42)
    with a fresh text stream (`seed`): new days as they arrive, for measuring a run after them."""
    memdir = Path(workspace) / "memory"
    logs = sorted(p.name for p in memdir.glob("*.md") if _DAILY.match(p.name))
    if not logs:
        raise FileNotFoundError(f"no daily logs in {memdir}")
    g = _Generator(42)
    g.rng.seed(seed)
    day, left, written = date.fromisoformat(logs[-1][:10]), facts, []
    while left > 0:
        day += timedelta(days=1)
        n = left if left < 2 * per_day else per_day
        path = memdir / f"{day.isoformat()}.md"
        path.write_text(g.daily(day, n), encoding="utf-8")
        written.append(path)
        left -= n
    return written


def _count(value: str) -> int:
    n = float(value)
    if n != int(n) or n < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {value}")
    return int(n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.generate",
        description="Write a synthetic memtool workspace for benchmarks; prints stats as JSON.",
        epilog="example: python -m bench.generate --facts 1e5 --out /tmp/bench-ws-1e5",
    )
    ap.add_argument("--facts", type=_count, required=True,
                    help="number of daily-log facts (1e5 is accepted)")
    ap.add_argument("--out", type=Path, required=True, help="workspace folder to create")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--start", type=date.fromisoformat, default=date(2019, 1, 1),
                    help="first day (YYYY-MM-DD)")
    ap.add_argument("--force", action="store_true",
                    help="replace memory.md, memory/, bank/ and .memory/ in a non-empty --out")
    args = ap.parse_args(argv)
    try:
        stats = generate(args.out, args.facts, args.seed, args.start, overwrite=args.force)
    except (FileExistsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    json.dump(stats, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
