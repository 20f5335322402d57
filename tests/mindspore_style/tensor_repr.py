"""How a Tensor prints (``print(loss)`` in the model zoo's scripts): str is
numpy's, repr MindSpore 2.10's C++ printer's (a scalar to 6 significant
digits, array floats as %.8e of their double value, twelve to a line, a 2-D
or larger array from a new line), and a numpy float64 scalar stays Float64.
MindSpore's output is in tensor_repr.mindspore.txt."""
import numpy as np
import mindspore as ms
from mindspore import Tensor

values = [np.float32(872.98645), np.float32(4096.0), np.float32(0.123456789), np.float32(1e-8),
          np.float32(-3.5), np.float64(2.0 / 3), np.int64(7), np.array(3.0, np.float16),
          np.array([0.123456789, 1.5, 1000.25], np.float32), np.array([[1, 2], [3, 4]], np.int32),
          np.array([True, False]), np.array([1e-8, 1.0], np.float32),
          np.array([[0.1, 0.2], [0.3, 0.4]], np.float32), np.array([1.5, -2.25, 100.0], np.float32),
          np.zeros((2, 2, 2), np.float32), np.arange(30, dtype=np.float32),
          np.array([1.0, np.nan, np.inf], np.float32), np.array([-1, 20, 300], np.int64),
          np.array([0.1, 0.25], np.float64)]
for v in values:
    t = Tensor(v)
    print(repr(str(t)), "|", repr(repr(t)))
print((Tensor(np.float32(872.98645)), Tensor(4096.0, ms.float32)))
