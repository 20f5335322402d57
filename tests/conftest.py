import os
import sys

import pytest
from hypothesis import settings

# Let tests import the harness modules next to them.
sys.path.insert(0, os.path.dirname(__file__))

# Cache bytecode even where PYTHONDONTWRITEBYTECODE is set (as in some CI
# sandboxes): otherwise every run, and every irc subprocess a test starts,
# compiles irc and the rewritten tests from source again (2-3 s of a run on
# two cores).  The __pycache__ folders are git-ignored.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# The suite's two workers share two cores with the MPI jobs the rank tests
# start: the machine is oversubscribed, so ranks waiting in a collective
# yield the core (irc's own rule, collectives._yield_when_oversubscribed,
# counts ranks only).  A setting made outside the suite wins.
os.environ.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")

# Property tests draw the same examples on every run, so a red suite is
# reproducible and no run leaves state (the .hypothesis database) for the
# next.  `pytest --hypothesis-profile=explore` draws fresh examples;
# `--hypothesis-profile=fuzz` runs the fuzzers (IR text, ONNX, bundles) at
# 10x the cases the everyday suite gives them (see fuzz_cases).
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.register_profile("fuzz", derandomize=True, database=None)
settings.load_profile("deterministic")

from irc.dialects import load_all  # noqa: E402

load_all()   # tests use the registry directly, below any loading layer


@pytest.fixture
def offload_on_onnxruntime():
    """An offloaded tail through onnxruntime even where there is no
    accelerator (by default it then stays on the host's kernels): the tests
    of its lowering and of its draws.  Reset with the process state."""
    from irc.backends.settings import settings
    settings.offload_tail_on_cpu = True


@pytest.fixture(autouse=True)
def _fresh_process_state():
    """Each test starts with irc's process-wide settings as a new process has
    them (context, dataset config, parallel context), as each script run under
    irc does: a test that sets a dataset_strategy must not leak it."""
    from irc.capture import fresh_process_state
    fresh_process_state()
    yield
    fresh_process_state()
