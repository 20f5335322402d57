"""mindspore.numpy array functions (the model zoo's Swin Transformer shifts its windows with
numpy.roll): values, shapes and dtypes as MindSpore 2.10's (numpy_functions.mindspore.txt)."""
import numpy as np
import mindspore as ms
from mindspore import numpy as mnp
x = ms.Tensor(np.arange(2 * 4 * 5 * 3, dtype=np.float32).reshape(2, 4, 5, 3))
y = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
cases = {
    "roll2": mnp.roll(x, (-3, -3), (1, 2)), "roll_flat": mnp.roll(x, 7), "roll1": mnp.roll(x, 2, 3),
    "concatenate": mnp.concatenate((y, y), 1), "stack": mnp.stack([y, y], 2),
    "transpose": mnp.transpose(x), "transpose_axes": mnp.transpose(x, (0, 2, 1, 3)),
    "reshape": mnp.reshape(x, (8, -1)), "reshape_int": mnp.reshape(y, 6),
    "expand_dims": mnp.expand_dims(y, 1), "squeeze": mnp.squeeze(mnp.expand_dims(y, 0)),
    "swapaxes": mnp.swapaxes(x, 0, 3), "moveaxis": mnp.moveaxis(x, 0, -1),
    "flip": mnp.flip(y), "flip1": mnp.flip(y, 1), "tile": mnp.tile(y, (2, 1, 2)), "tile_int": mnp.tile(y, 2),
    "matmul": mnp.matmul(y, mnp.transpose(y)), "maximum": mnp.maximum(y, 2.5), "minimum": mnp.minimum(y, 2.5),
    "clip": mnp.clip(y, 1.0, 4.0),
}
for k, v in cases.items():
    a = v.asnumpy()
    print(k, a.shape, a.dtype, float(a.sum()), float((a * np.arange(a.size).reshape(a.shape)).sum()))
