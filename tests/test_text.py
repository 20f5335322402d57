"""``mindspore.dataset.text`` (Vocab, WhitespaceTokenizer, Lookup) and ``transforms.PadEnd``
against what MindSpore 2.10 gives for the same calls, in pipelines of
ragged token lists, and the RNN sentiment tutorial run unchanged."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

import irc.dataset as ds
from irc.capture import RUN, run_script
from irc.diagnostics import UserError
from irc.ir.text import parse_module, print_module
from printout import assert_prints_as

HERE = os.path.dirname(__file__)


def here() -> str:
    import inspect
    frame = inspect.currentframe().f_back
    return f"{os.path.relpath(frame.f_code.co_filename)}:{frame.f_lineno}"


def test_vocab_numbers_words_as_mindspore_does():
    v = ds.text.Vocab.from_list(["a", "b", "c"], special_tokens=["<unk>", "<pad>"], special_first=False)
    assert v.vocab() == {"a": 0, "b": 1, "c": 2, "<unk>": 3, "<pad>": 4}
    assert v.tokens_to_ids("a") == 0 and v.tokens_to_ids(["c", "zz"]) == [2, -1]
    assert v.ids_to_tokens([0, 4, 9]) == ["a", "<pad>", ""] and v.ids_to_tokens(1) == "b"
    assert ds.text.Vocab.from_list(["a", "b"], special_tokens=["<pad>"]).vocab() == {"<pad>": 0, "a": 1, "b": 2}
    d = ds.text.Vocab.from_dict({"x": 3, "y": 7})
    assert d.tokens_to_ids("y") == 7 and d.ids_to_tokens(5) == ""
    with pytest.raises(ValueError, match="word_list contains duplicate word: a."):
        ds.text.Vocab.from_list(["a", "a"])


def test_vocab_from_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("the 1\nfilm 2\n\nplot 3\n")
    v = ds.text.Vocab.from_file(str(path), delimiter=" ", vocab_size=2, special_tokens=["<pad>"])
    assert v.vocab() == {"<pad>": 0, "the": 1, "film": 2}
    damaged = tmp_path / "damaged.txt"
    damaged.write_bytes(b"the\nfilm\n\xff\xfebad\n")
    with pytest.raises(UserError, match=r"damaged.txt:3 is not UTF-8 text \(byte 0xff at column 1\)"):
        ds.text.Vocab.from_file(str(damaged))
    damaged.write_text("the\nfilm\nthe\n")
    with pytest.raises(UserError, match=r"damaged.txt:3 repeats the word 'the' of line 1"):
        ds.text.Vocab.from_file(str(damaged))


def test_vocab_from_dataset_ranks_words_as_mindspore_does():
    """Most frequent first, alphabetical among equals; freq_range, top_k and
    the special tokens as MindSpore 2.10 applies them."""
    rows = [(np.array(["b", "a", "c", "b"]),), (np.array(["d", "a", "b", "e"]),),
            (np.array(["c", "f", "zz", "a"]),)]
    d = ds.GeneratorDataset(rows, ["text"], shuffle=False)
    assert ds.text.Vocab.from_dataset(d, columns=["text"], special_tokens=["<pad>", "<unk>"]).vocab() == {
        "<pad>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4, "d": 5, "e": 6, "f": 7, "zz": 8}
    assert ds.text.Vocab.from_dataset(d, top_k=3, special_first=False, special_tokens=["<unk>"]).vocab() == {
        "a": 0, "b": 1, "c": 2, "<unk>": 3}
    assert ds.text.Vocab.from_dataset(d, freq_range=(2, 3)).vocab() == {"a": 0, "b": 1, "c": 2}
    assert ds.text.Vocab.from_dataset(d, freq_range=(None, 1)).vocab() == {"d": 0, "e": 1, "f": 2, "zz": 3}


def test_whitespace_tokenizer_feeds_a_vocabulary():
    t = ds.text.WhitespaceTokenizer()
    assert t("Hello  world\tof\nMindSpore ").tolist() == ["Hello", "world", "of", "MindSpore"]
    rows = [(np.array("the film is good"),), (np.array("bad film"),)]
    d = ds.GeneratorDataset(rows, ["text"], shuffle=False).map(t, input_columns="text")
    assert [r[0].tolist() for r in d.create_tuple_iterator(output_numpy=True)] == [
        ["the", "film", "is", "good"], ["bad", "film"]]
    assert ds.text.Vocab.from_dataset(d, columns="text").vocab() == {
        "film": 0, "bad": 1, "good": 2, "is": 3, "the": 4}


def test_lookup_and_pad_end_are_mindspores():
    v = ds.text.Vocab.from_list(["a", "b", "c"], special_tokens=["<unk>", "<pad>"], special_first=False)
    look = ds.text.Lookup(v, unknown_token="<unk>")
    got = look(np.array(["a", "zz", "c"]))
    assert got.dtype == np.int32 and got.tolist() == [0, 3, 2]
    assert look(np.array([["a", "b"], ["c", "zz"]])).tolist() == [[0, 1], [2, 3]]
    import irc as ms
    assert ds.text.Lookup(v, data_type=ms.int64)(np.array(["b"])).dtype == np.int64
    with pytest.raises(ValueError, match="'zz' is not in the vocabulary and no unknown_token"):
        ds.text.Lookup(v)(np.array(["zz"]))
    pad = ds.transforms.PadEnd([5], pad_value=4)
    assert pad(np.array([1, 2, 3])).tolist() == [1, 2, 3, 4, 4]
    assert pad(np.arange(8)).tolist() == [0, 1, 2, 3, 4]            # cut to the shape
    assert ds.transforms.PadEnd([3])(np.array([1.5])).tolist() == [1.5, 0.0, 0.0]
    assert ds.transforms.PadEnd([2, 3], pad_value=9)(np.ones((1, 2), np.int32)).tolist() == [[1, 1, 9],
                                                                                              [9, 9, 9]]
    assert ds.transforms.PadEnd([4])(np.array(["a", "b"])).tolist() == ["a", "b", "", ""]
    assert ds.transforms.PadEnd([None, 2])(np.ones((3, 1), np.int32)).shape == (3, 2)


def _reviews():
    rng = np.random.default_rng(0)
    words = ["good", "bad", "film", "plot", "zzz"]
    return [(list(rng.choice(words, rng.integers(2, 9))), np.int32(i % 2)) for i in range(12)]


def test_ragged_tokens_become_padded_id_batches():
    rows = _reviews()
    vocab = ds.text.Vocab.from_list(["good", "bad", "film", "plot"], special_tokens=["<unk>", "<pad>"],
                                    special_first=False)
    data = ds.GeneratorDataset(rows, column_names=["text", "label"], shuffle=False)
    data = data.map([ds.text.Lookup(vocab, unknown_token="<unk>"),
                     ds.transforms.PadEnd([6], pad_value=vocab.tokens_to_ids("<pad>"))], input_columns="text")
    batches = list(data.batch(4).create_tuple_iterator(output_numpy=True))
    assert len(batches) == 3 and batches[0][0].shape == (4, 6) and batches[0][0].dtype == np.int32
    want = [[vocab.tokens_to_ids(str(w)) if str(w) != "zzz" else 4 for w in doc][:6] for doc, _ in rows]
    want = [ids + [5] * (6 - len(ids)) for ids in want]
    assert np.concatenate([b[0] for b in batches]).tolist() == want


def test_the_pipeline_ir_keeps_the_vocabulary_out_of_the_text():
    """The IR names the vocabulary by its key (a 400,000-word GloVe table is
    not printed); the ragged column is bytes[?]; the text parses back."""
    from irc.frontend.pipeline import lower_pipeline
    from irc.ir.graph import Module
    v = ds.text.Vocab.from_list(["a", "b", "c"] + [f"w{i}" for i in range(1000)])
    d = ds.GeneratorDataset([(["a", "b", "c"],), (["b"],), (["c", "a"],)], ["text"], shuffle=False)
    d = d.map([ds.text.Lookup(v), ds.transforms.PadEnd([4])], input_columns="text").batch(3)
    module = Module("pipe")
    lower_pipeline(module, d, "host")
    text = print_module(module)
    assert re.search(r'text\.Lookup\(%text\) \{.*vocab = "[\w.]+"\} : \(bytes\[\?\]\) -> i32\[\?\]', text)
    assert "w999" not in text and "transforms.PadEnd" in text and "i32[4]" in text
    assert print_module(parse_module(text)) == text


def test_a_word_outside_the_vocabulary_is_located(tmp_path):
    v = ds.text.Vocab.from_list(["a"])
    data = ds.GeneratorDataset([(["a", "q"],)], ["text"], shuffle=False)
    data = data.map(ds.text.Lookup(v), input_columns="text"); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        list(data.create_tuple_iterator())
    assert e.value.where == where and "'q' is not in the vocabulary" in e.value.message


def test_the_sequence_labeling_tutorial_runs_as_under_mindspore(capsys):
    """LSTM+CRF: a bidirectional LSTM over padded sentences given their
    seq_length, 40 steps of SGD; the losses, the Viterbi scores, the tags it
    learned (B I O ...) and every parameter as MindSpore 2.10's."""
    capsys.readouterr()
    run_script(os.path.join(HERE, "mindspore_style", "sequence_labeling_tutorial.py"), mode=RUN,
               argv=[])
    assert_prints_as(capsys.readouterr().out.strip().splitlines(),
                     os.path.join(HERE, "mindspore_style", "sequence_labeling_tutorial.mindspore.txt"))


def test_a_padded_sequence_model_trains_through_model_as_under_mindspore(capsys):
    """A 2-layer bidirectional LSTM given seq_length, trained by Model.train
    (its batch symbolic in the step: the Scan bodies must declare their
    ranks for onnxruntime), a custom loss cell, Adam: MindSpore's losses
    and weights."""
    capsys.readouterr()
    run_script(os.path.join(HERE, "mindspore_style", "sequence_model_train.py"), mode=RUN, argv=[])
    out = [line for line in capsys.readouterr().out.strip().splitlines()
           if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(HERE, "mindspore_style", "sequence_model_train.mindspore.txt"))


def test_the_sentiment_tutorial_runs_as_under_mindspore(capsys):
    """Same batches (shuffled source, randomized split of a pipeline), same
    initial weights, same losses and accuracies, same prediction."""
    capsys.readouterr()
    run_script(os.path.join(HERE, "mindspore_style", "sentiment_tutorial.py"), mode=RUN, argv=[])
    assert_prints_as(capsys.readouterr().out.strip().splitlines(),
                     os.path.join(HERE, "mindspore_style", "sentiment_tutorial.mindspore.txt"))


def test_nn_transformer_trains_as_under_mindspore(capsys):
    """nn.Transformer with its encoder and decoder stacks, a causal tgt_mask
    and a source key padding mask, trained by a jitted value_and_grad step:
    MindSpore 2.10's initial weights (Xavier drawn again over every >1-D
    weight), losses and trained weights."""
    capsys.readouterr()
    run_script(os.path.join(HERE, "mindspore_style", "transformer_copy.py"), mode=RUN, argv=[])
    out = [line for line in capsys.readouterr().out.strip().splitlines()
           if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(HERE, "mindspore_style", "transformer_copy.mindspore.txt"))
