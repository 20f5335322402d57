"""``mindspore.train.train_thor``: importable, so scripts that offer THOR as
one choice among optimizers load; converting a model or a network to THOR
(second-order training) is not supported."""
from __future__ import annotations

from ..diagnostics import UnsupportedError, missing_names, user_frame

_HINT = "train with a first-order optimizer (nn.Momentum, nn.Adam ...) instead"


def _thor_unsupported(what: str) -> UnsupportedError:
    return UnsupportedError(f"not supported by irc yet: mindspore.train.train_thor.{what} "
                            f"(THOR second-order training)", where=user_frame(), hint=_HINT)


class ConvertNetUtils:
    """Converts a network's layers to their THOR forms (not supported)."""

    def convert_to_thor_net(self, net):
        raise _thor_unsupported("ConvertNetUtils.convert_to_thor_net")


class ConvertModelUtils:
    """Converts a Model to train with THOR (not supported)."""

    @staticmethod
    def convert_to_thor_model(model, network, loss_fn=None, optimizer=None, metrics=None,
                              amp_level="O0", loss_scale_manager=None,
                              keep_batchnorm_fp32=False):
        raise _thor_unsupported("ConvertModelUtils.convert_to_thor_model")


__getattr__ = missing_names(__name__)
