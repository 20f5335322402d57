"""What the data-sized scripts (sized_by_data.py, sized_by_data_draws.py)
share: a MindRecord of uint8 3x16x16 images stored as raw bytes with an
int32 label, written with MindSpore's FileWriter as DeepLabV3's tooling does."""
import os
import tempfile

import numpy as np
from mindspore.mindrecord import FileWriter

SIDE = 16


def write_images(count: int) -> str:
    """A fresh one-shard MindRecord of ``count`` images (seed 0), labels
    alternating 0/1; its path."""
    path = os.path.join(tempfile.mkdtemp(), "images.mindrecord")
    writer = FileWriter(path, shard_num=1)
    writer.add_schema({"data": {"type": "bytes"}, "label": {"type": "int32"}}, "images")
    rng = np.random.RandomState(0)
    writer.write_raw_data([{"data": rng.randint(0, 255, (3, SIDE, SIDE)).astype(np.uint8).tobytes(),
                            "label": i % 2} for i in range(count)])
    writer.commit()
    return path
