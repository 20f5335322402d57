"""``mindspore.common``: dtypes, initializers, Tensor and Parameter."""
