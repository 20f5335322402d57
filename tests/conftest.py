import os
import sys

# Let tests import the harness modules next to them.
sys.path.insert(0, os.path.dirname(__file__))

from irc.dialects import load_all  # noqa: E402

load_all()   # tests use the registry directly, below any loading layer
