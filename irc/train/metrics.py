"""``mindspore.train.metrics``: the metrics live in :mod:`irc.nn.metrics`
(``mindspore.nn`` exports them too, and nn sits below train)."""
from ..nn.metrics import *  # noqa: F401,F403
from ..nn.metrics import get_metrics  # noqa: F401
