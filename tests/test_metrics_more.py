"""MindSpore 2.x's other metrics (ConfusionMatrix, ConfusionMatrixMetric,
Perplexity, ROC/auc, Dice, CosineSimilarity, BleuScore, the surface
distances), get_metric_fn/names and Model.eval by name, against what
tests/mindspore_style/metrics_more.py printed under MindSpore 2.10."""


def test_more_metrics_give_what_mindspore_gives(capsys):
    """tests/mindspore_style/metrics_more.py: each metric fed batches of
    numpy arrays and Tensors, its results' types, shapes and values, clear(),
    its errors' builtin types, and two of them under Model.eval."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "metrics_more.py", rel=1e-5)


def test_top_k_of_fewer_classes_is_refused_with_a_hint():
    """Swin's eval.py on 4 classes: MindSpore fails in a numpy broadcast;
    irc says why (a top 5 of 4 classes is all of them) instead of 1.0."""
    import numpy as np
    import pytest

    from irc import nn
    from irc.diagnostics import UserError
    metric = nn.Top5CategoricalAccuracy()
    metric.clear()
    with pytest.raises(ValueError, match="the top 5 of 4 classes") as refused:
        metric.update(np.random.RandomState(0).randn(8, 4).astype(np.float32), np.arange(8) % 4)
    assert isinstance(refused.value, UserError) and "k at most 4" in refused.value.hint
