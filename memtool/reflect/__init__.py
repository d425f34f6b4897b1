"""`mem reflect` and `mem opinions`: consolidation, entity pages, opinions and the journal."""
