"""Names shared by the parser, the index and recall, without the record classes: the kinds of
record and file, and the parser's version. A read whose files did not change needs these and
never builds a record (memtool.records), so it does not create those classes (~3 ms of a one-shot
`mem recall`; docs/benchmarks-history.md)."""

# Bump when the records or diagnostics `document.parse` makes of the same text change: the index is
# then rebuilt. 2: bank/journal.md is not indexed; sync conflict copies are recognised.
PARSER_VERSION = "7"  # 3: #tags and front-matter tags; text nested past the parser's limit is indexed (too-deep);
# 4: a table's header row is the context of its body rows, not a record of its own; every context starts
# with its page (title, day or file name); 5: a shorter fence inside a longer one is code, not its close
# (the last line of a never-closed fence was dropped), and a comment or fence never closed is a diagnostic;
# 6: @mentions and #tags written with combining accents (u + U+0308) keep them, composed (NFC); `trust`
# in a front matter line of another form (`{trust: legal}`) is legal; generated-block markers in a code
# fence are text (the lines between them are indexed); 7: a heading inside a list item or blockquote
# belongs to that block: a Retain list goes on after it (its typed bullets stayed untyped); a byte-order
# mark before a first heading keeps it a heading; invisible characters (U+200B…) before a type letter are no text;
# a field value holds no bracket but a whole [[link]] ([because:: [[Peter]]] was "[[Peter")

# Kinds of record. Retain bullets carry a type letter; everything else is log text or page text.
RETAIN_KINDS = {"W": "world", "B": "experience", "O": "opinion", "S": "observation"}
KINDS = ("world", "experience", "opinion", "observation", "log", "page")

# What a file is, from its path inside the workspace.
FILE_KINDS = ("daily", "core", "bank", "other")
