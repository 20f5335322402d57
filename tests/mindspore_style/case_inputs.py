"""What the case scripts (functional_ops.py, mint_ops.py, nn_cells.py)
share, under MindSpore and under irc: the fixed inputs they call MindSpore's
functions on, and how a result is written to their JSON references."""
import numpy as np
import mindspore as ms


def shared_inputs():
    """A fresh generator (seed 0) and the tensors drawn from it, in the order
    both scripts' references were written with; a script draws its own
    further tensors from the generator returned."""
    rng = np.random.default_rng(0)
    t = {
        "A": ms.Tensor(rng.standard_normal((3, 4)).astype(np.float32)),
        "B": ms.Tensor(rng.standard_normal((3, 4)).astype(np.float32)),
        "P": ms.Tensor(rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32)),       # in (0, 1)
        "G": ms.Tensor(rng.uniform(1.1, 3.0, (3, 4)).astype(np.float32)),       # > 1
        "I": ms.Tensor(np.array([[7, -7, 5, 0], [-3, 9, -8, 2], [4, -1, 6, -5]], np.int32)),
        "J": ms.Tensor(np.array([[3, 3, -2, 4], [2, -4, 3, 7], [-3, 2, 5, 3]], np.int32)),
        "Z": ms.Tensor(np.array([[0.0, 1.5, -2.0, 0.0], [3.0, 0.0, 0.0, -1.0], [0.5, 0.0, 2.0, 0.0]],
                                np.float32)),
        "M": ms.Tensor(rng.standard_normal((4, 5)).astype(np.float32)),
        "V": ms.Tensor(rng.standard_normal(4).astype(np.float32)),
        "W": ms.Tensor(rng.standard_normal(3).astype(np.float32)),
        "S": ms.Tensor(rng.standard_normal((2, 3, 4)).astype(np.float32)),
        "T": ms.Tensor(rng.standard_normal((2, 4, 5)).astype(np.float32)),
        "Q": ms.Tensor(rng.standard_normal((4, 4)).astype(np.float32)),
        "GI": ms.Tensor(np.array([[0, 3, 1, 1], [2, 2, 0, 3], [1, 0, 3, 2]], np.int64)),
    }
    return rng, t


def as_json(value):
    """A case's result as its reference records it: each Tensor's dtype,
    shape and values; a Python value as {"python": ...}."""
    if isinstance(value, (tuple, list)):
        return [as_json(v) for v in value]
    if isinstance(value, ms.Tensor):
        a = value.asnumpy()
        return {"dtype": str(a.dtype), "shape": list(a.shape), "values": a.astype(np.float64).ravel().tolist()}
    if isinstance(value, (bool, int, float, np.bool_, np.number)):
        return {"python": float(value)}
    return {"python": repr(value)}


def dump_cases(cases: dict, out) -> None:
    """Every case's result as JSON (a case MindSpore refuses: its error)."""
    import json
    results = {}
    for name, case in cases.items():
        try:
            results[name] = as_json(case())
        except Exception as e:  # noqa: BLE001 - recorded: the case is not MindSpore's
            results[name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    json.dump(results, out, indent=0)
