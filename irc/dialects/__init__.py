"""Op dialects: importing this package registers every op."""
from . import core  # noqa: F401
from . import vision  # noqa: F401
from . import transforms  # noqa: F401
from . import onnx_generic  # noqa: F401
from . import nn  # noqa: F401
from . import dataset  # noqa: F401
from . import parallel  # noqa: F401
from . import train  # noqa: F401
from . import nn_grad  # noqa: F401
