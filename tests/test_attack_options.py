"""Options given wrong: an error that says so, the same as recall's, never a silently different answer."""

from conftest import run_json, run_mem


def test_opinions_checks_k_and_entity_and_says_when_there_are_none(example_ws):
    """`--k -3` listed all but the last three, `--k 0` printed nothing, `--entity ''` listed every
    opinion, and an entity without opinions printed nothing at all, all with exit 0."""
    for args, said in ((["--k", "0"], "k must be from 1 to 1000"), (["--k", "-3"], "k must be from 1 to 1000"),
                       (["--entity", ""], "--entity needs a name"), (["-e", "@"], "--entity needs a name")):
        proc = run_mem("opinions", *args, cwd=example_ws)
        assert proc.returncode == 2 and said in proc.stderr and not proc.stdout, (args, proc.stderr)
    proc = run_mem("opinions", "--entity", "Nobody", cwd=example_ws, check=0)
    assert not proc.stdout and "no opinions about Nobody" in proc.stderr
    proc, data = run_json("opinions", "--entity", "Nobody", cwd=example_ws)
    assert proc.returncode == 0 and data["opinions"] == []
    proc, data = run_json("opinions", "--k", "2", cwd=example_ws)
    assert proc.returncode == 0 and data["count"] == 2
