"""Op dialects: importing this package registers every op."""
from . import core  # noqa: F401
