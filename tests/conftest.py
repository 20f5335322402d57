import os
import sys

# Let tests import the harness modules next to them.
sys.path.insert(0, os.path.dirname(__file__))
