"""JPEG files stored as a MindRecord bytes field and decoded in the
pipeline, as the model zoo's detection and segmentation scripts read their
converted datasets (SSD, FasterRCNN, DeepLabv3): MindSpore's output is in
mindrecord_images.mindspore.txt."""
import io
import os
import sys

import numpy as np
from PIL import Image
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
from mindspore.mindrecord import FileWriter
rng = np.random.RandomState(0)
path = os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "img.mindrecord")
w = FileWriter(path, overwrite=True)
w.add_schema({"image": {"type": "bytes"}, "label": {"type": "int32"}, "file_name": {"type": "string"}}, "imgs")
rows = []
for i in range(6):
    buf = io.BytesIO(); Image.fromarray(rng.randint(0, 255, (20 + i, 30, 3), dtype=np.uint8)).save(buf, "JPEG")
    rows.append({"image": buf.getvalue(), "label": i, "file_name": f"{i}.jpg"})
w.write_raw_data(rows); w.commit()
d = ds.MindDataset(path, shuffle=False)
d = d.map(vision.Decode(), "image").map([vision.Resize((16, 16)), vision.Normalize([0.5]*3, [0.2]*3), vision.HWC2CHW()], "image")
for r in d.create_dict_iterator(output_numpy=True):
    print(r["image"].shape, r["image"].dtype, round(float(r["image"].mean()), 4), int(r["label"]), str(r["file_name"]))
d2 = ds.MindDataset(path, shuffle=False, columns_list=["image"]).map(lambda b: np.frombuffer(b.tobytes(), np.uint8)[:4], "image")
print([r[0].tolist() for r in d2.create_tuple_iterator(output_numpy=True)][:2])
