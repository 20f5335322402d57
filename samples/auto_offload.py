"""Seed 000, "Option 1": the global config turns offload on for every map;
an explicit offload=False on a map wins over it.

Expected decisions: on 'image' RandomColorAdjust, RandomSharpness, Rescale,
Normalize and HWC2CHW offloaded, Decode and Resize kept on the host (not
offloadable); on 'label' TypeCast kept on the host (offload=False given).
"""
import os

import mindspore.dataset as ds
import mindspore.common.dtype as mstype
import mindspore.dataset.vision as vision
import mindspore.dataset.transforms as transforms

ds.config.set_auto_offload(True)
ds.config.set_seed(58)

dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "imagefolder")
dataset = ds.ImageFolder(dir, shuffle=True)
dataset = dataset.map(operations=[vision.Decode(), vision.Resize((32, 32))], input_columns="image")
dataset = dataset.map(operations=[vision.RandomColorAdjust(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1),
                                  vision.RandomSharpness(degrees=(0.5, 1.5))], input_columns="image")
dataset = dataset.map(operations=[vision.Rescale(1.0 / 255.0, 0.0),
                                  vision.Normalize(mean=[0.5, 0.5, 0.5], std=[0.25, 0.25, 0.25]),
                                  vision.HWC2CHW()], input_columns="image")
dataset = dataset.map(operations=transforms.TypeCast(mstype.int32), input_columns="label", offload=False)
dataset = dataset.batch(16, drop_remainder=True)
