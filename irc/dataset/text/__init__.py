"""``mindspore.dataset.text``: vocabularies, the whitespace tokenizer and the token lookup.

``Vocab`` is a plain Python object (words and their ids, numbered as
MindSpore 2.10 numbers them); ``Lookup`` describes the ``text.Lookup`` op
(``irc/dialects/text.py``), which holds the vocabulary as a module object.
"""
from __future__ import annotations

import math
import os

import numpy as np

from ...diagnostics import UnsupportedError, user_frame
from .._ops import TensorOperation, arg_error, check_int
from ..transforms.transforms import _ir_dtype

__all__ = ["Lookup", "Vocab", "WhitespaceTokenizer"]


def _freq_range(freq_range) -> tuple[float, float]:
    if freq_range is None:
        return 0, math.inf
    if not isinstance(freq_range, (list, tuple)) or len(freq_range) != 2:
        raise arg_error(TypeError, f"Vocab.from_dataset: freq_range must be (min, max), got {freq_range!r}")
    low, high = freq_range
    return (0 if low is None else check_int("Vocab.from_dataset", "freq_range min", low, 0),
            math.inf if high is None else check_int("Vocab.from_dataset", "freq_range max", high, 0))


def _words(name: str, values) -> list[str]:
    if values is None:
        return []
    if not isinstance(values, (list, tuple)) or not all(isinstance(w, str) for w in values):
        raise arg_error(TypeError, f"Vocab: {name} must be a list of str, got {values!r}")
    return list(values)


class Vocab:
    """Words and their ids: ``vocab()`` ({word: id}), ``tokens_to_ids``
    (-1 for a word it lacks), ``ids_to_tokens`` ('' for an id it lacks)."""

    def __init__(self, token_ids: dict[str, int]):
        self.token_ids = token_ids              # the dict text.Lookup reads
        self._tokens = {i: w for w, i in token_ids.items()}

    @classmethod
    def from_list(cls, word_list, special_tokens=None, special_first=True) -> "Vocab":
        words, specials = _words("word_list", word_list), _words("special_tokens", special_tokens)
        return cls._numbered(words, specials, special_first)

    @classmethod
    def from_dict(cls, word_dict) -> "Vocab":
        if not isinstance(word_dict, dict) or not all(isinstance(w, str) for w in word_dict):
            raise arg_error(TypeError, f"Vocab.from_dict: word_dict must be a dict of str to int, got "
                                       f"{type(word_dict).__name__}")
        return cls({w: check_int("Vocab.from_dict", f"the id of {w!r}", i, 0) for w, i in word_dict.items()})

    @classmethod
    def from_file(cls, file_path, delimiter="", vocab_size=None, special_tokens=None,
                  special_first=True) -> "Vocab":
        if not isinstance(file_path, (str, os.PathLike)) or not os.path.isfile(file_path):
            raise arg_error(ValueError, f"Vocab.from_file: no such file: {file_path!r}")
        limit = None if vocab_size is None else check_int("Vocab.from_file", "vocab_size", vocab_size, 1)
        words, lines = [], {}
        with open(file_path, "rb") as f:
            for number, raw in enumerate(f, 1):
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as e:
                    raise arg_error(ValueError, f"Vocab.from_file: {file_path}:{number} is not UTF-8 text "
                                                f"(byte {raw[e.start]:#04x} at column {e.start + 1})") from None
                word = line.split(delimiter)[0] if delimiter else line
                if word in lines:
                    raise arg_error(ValueError, f"Vocab.from_file: {file_path}:{number} repeats the word "
                                                f"{word!r} of line {lines[word]}")
                if word:
                    words.append(word)
                    lines[word] = number
                if limit is not None and len(words) == limit:
                    break
        return cls._numbered(words, _words("special_tokens", special_tokens), special_first)

    @classmethod
    def from_dataset(cls, dataset, columns=None, freq_range=None, top_k=None, special_tokens=None,
                     special_first=True) -> "Vocab":
        """The words of ``columns`` (default: every column) over one pass of
        ``dataset``, most frequent first and alphabetical among equals (as
        MindSpore's BuildVocab orders them), those whose count lies in
        ``freq_range`` (min, max; None: unbounded), the first ``top_k``."""
        from ..engine_api import Dataset
        if not isinstance(dataset, Dataset):
            raise arg_error(TypeError, f"Vocab.from_dataset: dataset must be a Dataset, got "
                                       f"{type(dataset).__name__}")
        low, high = _freq_range(freq_range)
        limit = None if top_k is None else check_int("Vocab.from_dataset", "top_k", top_k, 1)
        names = [columns] if isinstance(columns, str) else columns
        counts: dict[str, int] = {}
        for row in dataset.create_tuple_iterator(columns=names, num_epochs=1, output_numpy=True):
            for value in row:
                value = np.asarray(value)
                if value.dtype.kind not in "OSU":
                    raise arg_error(TypeError, f"Vocab.from_dataset: a column of {value.dtype} values, "
                                               f"not words", where=dataset.source)
                for word in value.ravel():
                    word = word.decode("utf-8") if isinstance(word, bytes) else str(word)
                    counts[word] = counts.get(word, 0) + 1
        ranked = sorted((w for w, n in counts.items() if low <= n <= high), key=lambda w: (-counts[w], w))
        return cls._numbered(ranked[:limit], _words("special_tokens", special_tokens), special_first)

    @classmethod
    def _numbered(cls, words: list[str], specials: list[str], special_first: bool) -> "Vocab":
        ordered = specials + words if special_first else words + specials
        seen: set[str] = set()
        for w in ordered:
            if w in seen:
                what = "special_tokens" if w in specials else "word_list"
                raise arg_error(ValueError, f"{what} contains duplicate word: {w}.")
            seen.add(w)
        return cls({w: i for i, w in enumerate(ordered)})

    def vocab(self) -> dict[str, int]:
        return dict(self.token_ids)

    def tokens_to_ids(self, tokens):
        if isinstance(tokens, (list, tuple)):
            return [self.token_ids.get(str(t), -1) for t in tokens]
        return self.token_ids.get(str(tokens), -1)

    def ids_to_tokens(self, ids):
        if isinstance(ids, (list, tuple)):
            return [self._tokens.get(int(i), "") for i in ids]
        return self._tokens.get(int(ids), "")

    def __repr__(self) -> str:
        return f"Vocab({len(self.token_ids)} words)"


class Lookup(TensorOperation):
    """Tokens -> their ids in ``vocab`` (``unknown_token``'s id for a word it lacks)."""
    op_name = "text.Lookup"

    def __init__(self, vocab, unknown_token=None, data_type=None):
        if not isinstance(vocab, Vocab):
            raise arg_error(TypeError, f"Lookup: vocab must be a text.Vocab, got {type(vocab).__name__}")
        if unknown_token is not None and not isinstance(unknown_token, str):
            raise arg_error(TypeError, f"Lookup: unknown_token must be a str, got {unknown_token!r}")
        dtype = "i32" if data_type is None else _ir_dtype("Lookup", data_type)
        super().__init__(vocab=vocab, unknown_token=unknown_token, dtype=dtype)


class WhitespaceTokenizer(TensorOperation):
    """A string -> its words, split at whitespace."""
    op_name = "text.WhitespaceTokenizer"

    def __init__(self, with_offsets=False):
        if with_offsets:
            raise UnsupportedError("WhitespaceTokenizer: with_offsets=True is not supported by irc",
                                   where=user_frame(), hint="leave with_offsets at False")
        super().__init__()
