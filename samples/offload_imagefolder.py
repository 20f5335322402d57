"""Seed 000, "Option 2": offload=True on the maps of an ImageFolder pipeline.

Expected decisions (irc compile --remarks): TypeCast on 'label' offloaded;
on 'image' RandomCropDecodeResize stays on the host (not offloadable) and the
map is split after it: RandomHorizontalFlip, Normalize and HWC2CHW offloaded.
"""
import os

import mindspore.dataset as ds
import mindspore.common.dtype as mstype
import mindspore.dataset.vision as vision
import mindspore.dataset.transforms as transforms

dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "imagefolder")
train_image_size = 32
mean = [0.485 * 255, 0.456 * 255, 0.406 * 255]
std = [0.229 * 255, 0.224 * 255, 0.225 * 255]

dataset = ds.ImageFolder(dir)
type_cast_op = transforms.TypeCast(mstype.int32)
image_ops = [vision.RandomCropDecodeResize(train_image_size),
             vision.RandomHorizontalFlip(prob=0.5),
             vision.Normalize(mean=mean, std=std),
             vision.HWC2CHW()]
dataset = dataset.map(operations=type_cast_op, input_columns="label", offload=True)
dataset = dataset.map(operations=image_ops , input_columns="image", offload=True)
dataset = dataset.batch(8, drop_remainder=True)
