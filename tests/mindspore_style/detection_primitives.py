"""IOU (iou and iof, sides counted inclusively), ScatterNd (duplicates
summed) and CheckValid, primitives and functions, as the model zoo's CTPN
and Faster R-CNN take them.  MindSpore's output is in
detection_primitives.mindspore.txt."""
import numpy as np, mindspore as ms
from mindspore import ops
from mindspore.ops import operations as P
a = ms.Tensor(np.array([[0, 0, 16, 16], [8, 8, 24, 24], [2, 3, 10, 30]], np.float32))
g = ms.Tensor(np.array([[0, 0, 16, 16], [5, 5, 20, 12]], np.float32))
print("IOU", P.IOU()(a, g).asnumpy().round(6).tolist())
print("IOF", P.IOU("iof")(a, g).asnumpy().round(6).tolist())
print("ScatterNd", P.ScatterNd()(ms.Tensor([[1], [3], [1]], ms.int32), ms.Tensor([5., 7., 2.]), (5,)).asnumpy().tolist())
print("ScatterNd 2d", ops.scatter_nd(ms.Tensor([[0, 1], [2, 0]], ms.int32), ms.Tensor([[1., 2.], [3., 4.]]), (3, 2, 2)).asnumpy().tolist())
print("CheckValid", P.CheckValid()(a, ms.Tensor(np.array([20, 25, 1], np.float32))).asnumpy().tolist())
print("check_valid", ops.check_valid(a, ms.Tensor(np.array([32, 12, 2], np.float32))).asnumpy().tolist())
print("iou fn", ops.iou(a, g).asnumpy().round(6).tolist())
