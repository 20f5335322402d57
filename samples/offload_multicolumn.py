"""Seed 000: offload on a multi-column dataset.

A Python map copies the image column into 'image1' and 'image2' (it has
output_columns, so it stays on the host); the same image_ops are then
offloaded on each new column separately.
"""
import os

import numpy as np

import mindspore.dataset as ds
import mindspore.common.dtype as mstype
import mindspore.dataset.vision as vision
import mindspore.dataset.transforms as transforms

dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "imagefolder")
train_image_size = 32
mean = [0.485 * 255, 0.456 * 255, 0.406 * 255]
std = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def copy_column(x, y):
    return x, x, y


dataset = ds.ImageFolder(dir)
type_cast_op = transforms.TypeCast(mstype.int32)
image_ops = [vision.RandomCropDecodeResize(train_image_size),
             vision.RandomHorizontalFlip(prob=0.5),
             vision.Normalize(mean=mean, std=std),
             vision.HWC2CHW()]
dataset = dataset.map(operations=type_cast_op, input_columns="label")
dataset = dataset.map(operations=copy_column,
                      input_columns=["image", "label"],
                      output_columns=["image1", "image2", "label"],
                      column_order=["image1", "image2", "label"])
dataset = dataset.map(operations=image_ops, input_columns=["image1"], offload=True)
dataset = dataset.map(operations=image_ops, input_columns=["image2"], offload=True)
dataset = dataset.batch(8, drop_remainder=True)
