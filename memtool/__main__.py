"""`python -m memtool` and the `mem` script (`run`)."""

import sys


def run() -> None:
    """Fork a hybrid recall's search child first, before typer is imported (memtool.search_aside), then run `mem`."""
    from memtool import search_aside

    search_aside.prefork(sys.argv[1:])
    from memtool.cli import main

    main(whole_process=True)


if __name__ == "__main__":
    run()
