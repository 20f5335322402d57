"""The ``text`` dialect: the string transforms of ``mindspore.dataset.text``.

``text.WhitespaceTokenizer`` splits a string into its words; ``text.Lookup``
maps tokens to their ids in a vocabulary.  The vocabulary
(a ``Vocab``, often hundreds of thousands of words) is a Python object the
module keeps in ``module.objects``: the IR holds its key, as
``dataset.PyFunc`` holds its function's.  A row is a ragged array of
strings, so these ops run one row at a time (``host_sample``).
"""
from __future__ import annotations

import numpy as np

from ..ir.registry import MAP, REQUIRED, Dialect
from ..ir.traits import HoldsObjects, Pure
from ..ir.types import UNKNOWN, to_numpy_dtype

FAMILY = "transforms"
DIALECT = Dialect("text")
define = DIALECT.define


def _infer_lookup(attrs, ins):
    if ins[0].dtype != "bytes":
        raise TypeError(f"Lookup: expected a column of strings, got {ins[0]}")
    if not attrs["dtype"].startswith(("i", "u")):
        raise TypeError(f"Lookup: the ids' data_type must be an integer type, got {attrs['dtype']}")
    return [ins[0].with_dtype(attrs["dtype"])]


LOOKUP = define("text.Lookup", kind=MAP, family=FAMILY, operands=("tokens",),
                attrs={"vocab": REQUIRED, "unknown_token": None, "dtype": "i32"}, infer=_infer_lookup,
                traits=(Pure(), HoldsObjects(("vocab",))),
                doc="tokens -> their ids in module.objects[vocab] (a token it lacks: unknown_token's id, "
                    "or an error without one)")


def token_str(token) -> str:
    return token.decode("utf-8") if isinstance(token, bytes) else str(token)


@LOOKUP.host_sample
def _lookup_sample(inputs, attrs, draws):
    ids = attrs["vocab"].token_ids        # the vocabulary's own dict (vocab() copies it)
    unknown = attrs["unknown_token"]
    if unknown is not None and unknown not in ids:
        raise ValueError(f"Lookup: the unknown_token {unknown!r} is not in the vocabulary")
    default = ids.get(unknown, -1) if unknown is not None else None
    tokens = np.asarray(inputs[0])
    out = np.empty(tokens.shape, dtype=to_numpy_dtype(attrs["dtype"]))
    for index, token in np.ndenumerate(tokens):
        token = token_str(token)
        found = ids.get(token, default)
        if found is None:
            raise ValueError(f"Lookup: {token!r} is not in the vocabulary and no unknown_token was given")
        out[index] = found
    return [out]


def _infer_whitespace(attrs, ins):
    if ins[0].dtype != "bytes" or ins[0].rank != 0:
        raise TypeError(f"WhitespaceTokenizer: expected one string per row, got {ins[0]}")
    return [ins[0].with_shape([UNKNOWN])]


WHITESPACE_TOKENIZER = define("text.WhitespaceTokenizer", kind=MAP, family=FAMILY, operands=("text",),
                              infer=_infer_whitespace, traits=(Pure(),),
                              doc="a string -> its words, split at whitespace [?]")


@WHITESPACE_TOKENIZER.host_sample
def _whitespace_sample(inputs, attrs, draws):
    text = np.asarray(inputs[0])
    if text.ndim != 0:
        raise ValueError(f"WhitespaceTokenizer: expected one string per row, got an array of shape "
                         f"{list(text.shape)}")
    words = token_str(text[()]).split()
    return [np.array(words, dtype=np.str_) if words else np.array([], dtype="<U1")]
