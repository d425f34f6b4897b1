"""`mem serve`: the local web view (memtool.web)."""

# Annotations are not strings here: typer evaluates each string annotation (see memory_commands.py).

import typer

from memtool.cli.call import memory


def serve(
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0: any free port).", show_default=True),
    open_: bool = typer.Option(False, "--open", help="Open the address in the default browser."),
) -> None:
    """Serve a local web view: search, timeline, entities, the review queue, journal and status.

    Binds 127.0.0.1 only and prints the address with a random token on stdout; without the token
    nothing is answered. Review decisions are written to bank/decisions.md like mem review decide.

    Example: mem serve --port 8765 --open
    """
    from memtool.web.server import serve as run

    mem = memory()
    try:
        run(mem, port, open_)
    finally:
        mem.close()
