import os
import sys

from hypothesis import settings

# Let tests import the harness modules next to them.
sys.path.insert(0, os.path.dirname(__file__))

# Property tests draw the same examples on every run, so a red suite is
# reproducible and no run leaves state (the .hypothesis database) for the
# next.  `pytest --hypothesis-profile=explore` draws fresh examples.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("deterministic")
