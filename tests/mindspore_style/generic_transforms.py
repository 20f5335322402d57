"""mindspore.dataset.transforms' Fill, Mask (every Relational), Slice
(indices kept as dimensions, lists, slices, ..., an outer product of the
picks), Concatenate (prepend/append, strings too) and Unique (a batch's
distinct values in order of appearance, their indices and counts), eager
and in a pipeline: MindSpore 2.10's (generic_transforms.mindspore.txt)."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as T
from mindspore.dataset.transforms import Relational

x = np.array([[3, 1, 4], [1, 5, 9]], np.int32)
f = np.array([0.5, -1.5, 2.25], np.float32)
s = np.array(["a", "bb", "a", "c"])
print("fill", T.Fill(7)(x).tolist(), T.Fill(0.5)(f).tolist(), T.Fill(2.7)(x).tolist(), T.Fill("z")(s).tolist())
for op in Relational.__members__.values():
    print("mask", op.name, T.Mask(op, 3)(x).tolist(), T.Mask(op, 1.0, ms.int32)(f).tolist())
print("mask str", T.Mask(Relational.EQ, "a")(s).tolist())
print("slice", T.Slice(1)(x[0]).tolist(), T.Slice([0, 2])(x[0]).tolist(), T.Slice(slice(0, 2))(x[0]).tolist(),
      T.Slice(1, slice(0, 3, 2))(x).tolist(), T.Slice(slice(2, 0, -1))(x[0]).tolist(), T.Slice(...)(x).tolist(),
      T.Slice([1, 0], [2, 2, 0])(x).tolist(), T.Slice(-1)(x[0]).tolist())
print("concat", T.Concatenate()(x[0]).tolist(), T.Concatenate(0, np.array([9], np.int32), np.array([8, 8], np.int32))(x[0]).tolist(),
      T.Concatenate(0, np.array(["p"]), np.array(["q"]))(s).tolist())
u = T.Unique()(np.array([[5, 2, 5], [7, 2, 2]], np.int32))
print("unique", [t.tolist() for t in u], [str(t.dtype) for t in u])
d = ds.NumpySlicesDataset({"x": np.array([[5, 2, 5, 7], [2, 2, 1, 1], [9, 9, 9, 9], [4, 3, 2, 1]], np.int32)}, shuffle=False)
d = d.batch(2).map(T.Unique(), "x", ["u", "i", "c"])
print("unique map", [[r[k].tolist() for k in ("u", "i", "c")] for r in d.create_dict_iterator(output_numpy=True)])
d = ds.NumpySlicesDataset({"x": f.reshape(3, 1)}, shuffle=False).map([T.Fill(1.0), T.Concatenate(0, np.array([2.0], np.float32))], "x")
print("chain", [r["x"].tolist() for r in d.create_dict_iterator(output_numpy=True)])
