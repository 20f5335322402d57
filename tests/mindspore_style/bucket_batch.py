"""bucket_batch_by_length as MindSpore 2.10 runs it: rows bucketed by the first
dimension of a column or by an element_length_function, each bucket batched
when full, padded as pad_info says (an empty one pads every column; with
pad_to_bucket_boundary a listed shape's None dimensions pad to the bucket's
boundary less one), partial buckets dropped or emitted in bucket order; and
padded_batch with an empty pad_info."""
import numpy as np
import mindspore.dataset as ds


def rows():
    for i in range(11):
        n = [1, 4, 2, 6, 3, 7, 1, 5, 8, 2, 3][i]
        yield np.arange(n, dtype=np.int32) + 1, np.full((n % 2 + 1,), i, np.float32), np.int32(i)


cases = [
    dict(column_names=["a"], bucket_boundaries=[3, 6], bucket_batch_sizes=[2, 2, 3],
         pad_info={"a": (None, 0), "b": (None, -1)}),
    dict(column_names=["a"], bucket_boundaries=[3, 6], bucket_batch_sizes=[3, 3, 2], pad_info={}),
    dict(column_names=["a", "c"], bucket_boundaries=[3, 6, 9], bucket_batch_sizes=[2, 2, 3, 1],
         element_length_function=lambda a, c: len(a), pad_info={"a": ([None], 0), "b": (None, -1)},
         pad_to_bucket_boundary=True, drop_remainder=True),
]
for kw in cases:
    data = ds.GeneratorDataset(rows, ["a", "b", "c"], shuffle=False).bucket_batch_by_length(**kw)
    print(sorted(k for k in kw))
    for row in data.create_dict_iterator(output_numpy=True, num_epochs=1):
        print({k: (list(v.shape), v.tolist()) for k, v in row.items()})

data = ds.GeneratorDataset(rows, ["a", "b", "c"], shuffle=False).padded_batch(4, pad_info={})
for row in data.create_dict_iterator(output_numpy=True, num_epochs=1):
    print({k: (list(v.shape), v.tolist()) for k, v in row.items()})
