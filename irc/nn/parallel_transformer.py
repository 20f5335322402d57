"""``mindspore.parallel._transformer`` (MindSpore 1.x's ``mindspore.nn.transformer``,
which the model zoo's GPT and PanGu build on): the parallel configs,
``AttentionMask``, ``VocabEmbedding``, ``_LayerNorm``, ``_Linear``,
``FeedForward``, ``MultiHeadAttention``, ``TransformerEncoderLayer``,
``TransformerEncoder`` and ``CrossEntropyLoss``, made as MindSpore makes them
(its parameter names, layouts and initialisers; its op order: the scores
divided by the fourth root of the head size on both sides, -10000 where the
mask is 0) from ``irc.ops``, so their gradients are those ops' own.  The
``shard`` strategies and the pipeline/recompute settings are kept and have
no effect: irc's parallel modes shard data, not operators.  The float16 casts
are MindSpore's; inside a compiled network irc computes them in float32."""
from __future__ import annotations

import math
import sys

import numpy as np

from .. import ops
from ..common import dtype as mstype
from ..common.initializer import initializer
from ..common.parameter import Parameter
from ..common.tensor import Tensor
from ..diagnostics import UnsupportedError, UserTypeError, UserValueError, missing_names, user_frame
from .activation import get_activation
from .basic import Dropout, _positive_int
from .cell import Cell, CellList
from .normalization import LayerNorm

class _Config:
    def __str__(self):
        return "[ParallelConfig]\n" + "".join(f"{k}:{v}\n" for k, v in self.__dict__.items())


def _positive_setting(name: str) -> property:
    """A setting checked a positive int whenever it is set."""
    def set_it(self, value):
        setattr(self, "_" + name, _positive_int(value, name, type(self).__name__))
    return property(lambda self: getattr(self, "_" + name), set_it)


class OpParallelConfig(_Config):
    """How many ways the data and the model are split (``data_parallel``,
    ``model_parallel``: positive ints)."""

    data_parallel = _positive_setting("data_parallel")
    model_parallel = _positive_setting("model_parallel")

    def __init__(self, data_parallel=1, model_parallel=1):
        self.data_parallel, self.model_parallel = data_parallel, model_parallel


class EmbeddingOpParallelConfig(OpParallelConfig):
    def __init__(self, data_parallel=1, model_parallel=1, vocab_emb_dp=True):
        super().__init__(data_parallel, model_parallel)
        self.vocab_emb_dp = vocab_emb_dp

    @property
    def dp_mp_config(self):
        return OpParallelConfig(self.data_parallel, self.model_parallel)


class MoEParallelConfig(OpParallelConfig):
    def __init__(self, data_parallel=1, model_parallel=1, expert_parallel=1):
        super().__init__(data_parallel, model_parallel)
        self.expert_parallel = _positive_int(expert_parallel, "expert_parallel", "MoEParallelConfig")

    @property
    def dpmp(self):
        return OpParallelConfig(self.data_parallel, self.model_parallel)


class TransformerRecomputeConfig(_Config):
    def __init__(self, recompute=False, parallel_optimizer_comm_recompute=False,
                 mp_comm_recompute=True, recompute_slice_activation=False):
        self.recompute = recompute
        self.parallel_optimizer_comm_recompute = parallel_optimizer_comm_recompute
        self.mp_comm_recompute = mp_comm_recompute
        self.recompute_slice_activation = recompute_slice_activation


class MoEConfig(_Config):
    """The mixture-of-experts settings; one expert (the default) is a plain
    feed-forward block, the only kind irc builds."""

    def __init__(self, expert_num=1, capacity_factor=1.1, aux_loss_factor=0.05, num_experts_chosen=1,
                 expert_group_size=None, group_wise_a2a=False, comp_comm_parallel=False,
                 comp_comm_parallel_degree=2):
        self.expert_num = _positive_int(expert_num, "expert_num", "MoEConfig")
        self.capacity_factor, self.aux_loss_factor = capacity_factor, aux_loss_factor
        self.num_experts_chosen, self.expert_group_size = num_experts_chosen, expert_group_size
        self.group_wise_a2a, self.comp_comm_parallel = group_wise_a2a, comp_comm_parallel
        self.comp_comm_parallel_degree = comp_comm_parallel_degree


class TransformerOpParallelConfig(_Config):
    """Data/model/expert parallel ways, pipeline stages, micro batches,
    recomputation and optimizer sharding of a transformer."""

    def __init__(self, data_parallel=1, model_parallel=1, expert_parallel=1, pipeline_stage=1,
                 pipeline_segment=1, micro_batch_num=1, recompute=None, optimizer_shard=False,
                 gradient_aggregation_group=4, vocab_emb_dp=True):
        cls = "TransformerOpParallelConfig"
        self.recompute = TransformerRecomputeConfig() if recompute is None else recompute
        self.optimizer_shard = optimizer_shard
        self.gradient_aggregation_group = _positive_int(gradient_aggregation_group, "gradient_aggregation_group", cls)
        self.embedding_dp_mp_config = EmbeddingOpParallelConfig(data_parallel, model_parallel, vocab_emb_dp)
        self.moe_parallel_config = MoEParallelConfig(data_parallel, model_parallel, expert_parallel)
        self.pipeline_stage = _positive_int(pipeline_stage, "pipeline_stage", cls)
        self.pipeline_segment = _positive_int(pipeline_segment, "pipeline_segment", cls)
        self.micro_batch_num = _positive_int(micro_batch_num, "micro_batch_num", cls)

    data_parallel = property(lambda self: self.embedding_dp_mp_config.data_parallel,
                             lambda self, v: self._set("data_parallel", v))
    model_parallel = property(lambda self: self.embedding_dp_mp_config.model_parallel,
                              lambda self, v: self._set("model_parallel", v))
    expert_parallel = property(lambda self: self.moe_parallel_config.expert_parallel)
    vocab_emb_dp = property(lambda self: self.embedding_dp_mp_config.vocab_emb_dp)

    def _set(self, what: str, value) -> None:
        for config in (self.embedding_dp_mp_config, self.moe_parallel_config):
            setattr(config, what, value)

    @property
    def dp_mp_config(self):
        return OpParallelConfig(self.data_parallel, self.model_parallel)


default_dpmp_config = OpParallelConfig()
default_transformer_config = TransformerOpParallelConfig()
default_embedding_parallel_config = EmbeddingOpParallelConfig()
default_moe_config = MoEConfig()


def _check_dtype(x, what: str, allowed, cls: str) -> None:
    if x.dtype not in allowed:
        names = ", ".join(str(d) for d in allowed)
        raise UserTypeError(f"{cls}: {what} must be {names}, got {x.dtype}", where=user_frame())


def _check_rate(rate, what: str, cls: str) -> float:
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate < 1:
        raise UserValueError(f"{cls}: {what} must be in [0, 1.0), got {rate!r}", where=user_frame())
    return float(rate)


def _no_moe(moe_config, cls: str) -> None:
    if moe_config.expert_num > 1:
        raise UnsupportedError(f"{cls}: a mixture of experts (expert_num > 1) is not supported by irc",
                               where=user_frame(), hint="use MoEConfig(expert_num=1)")


def _no_past(use_past, cls: str) -> None:
    if use_past:
        raise UnsupportedError(f"{cls}: use_past (incremental inference) is not supported by irc",
                               where=user_frame(), hint="use_past=False: run the whole sequence each step")


class _Shardable:
    """``.shard(...)`` accepted and kept: irc does not split operators."""

    def shard(self, *strategies, **named):
        self.strategies = (strategies, named)
        return self


class _LayerNorm(_Shardable, LayerNorm):
    """LayerNorm over the last axis, ``eps`` 1e-5; ``gamma`` and ``beta``."""

    def __init__(self, normalized_shape, eps=1e-5, param_init_type=mstype.float32, is_self_defined=False):
        if param_init_type not in (mstype.float32, mstype.float16):
            raise UserTypeError(f"_LayerNorm: param_init_type must be float32 or float16, got "
                                f"{param_init_type}", where=user_frame())
        super().__init__(tuple(normalized_shape), epsilon=eps)
        self.is_self_defined = is_self_defined


class _Linear(_Shardable, Cell):
    """``x @ weight (+ bias)`` over the last axis, ``weight`` [out, in] with
    ``transpose_b`` (MindSpore's default), else [in, out]; computed in
    ``compute_dtype``, cast back; then ``activation``."""

    def __init__(self, in_channels, out_channels, weight_init="normal", bias_init="zeros", has_bias=True,
                 activation=None, transpose_b=True, expert_num=1, outer_batch=1, expert_group_size=None,
                 param_init_type=mstype.float32, compute_dtype=mstype.float16):
        super().__init__()
        self.in_channels = _positive_int(in_channels, "in_channels", "_Linear")
        self.out_channels = _positive_int(out_channels, "out_channels", "_Linear")
        if expert_num != 1:
            raise UnsupportedError("_Linear: expert_num > 1 is not supported by irc", where=user_frame())
        self.transpose_b = transpose_b
        shape = [out_channels, in_channels] if transpose_b else [in_channels, out_channels]
        self.weight = Parameter(initializer(weight_init, shape, param_init_type), name="weight")
        self.has_bias = has_bias
        self.bias = Parameter(initializer(bias_init, [out_channels], param_init_type), name="bias") \
            if has_bias else None
        self.act_name = activation
        if isinstance(activation, type) and issubclass(activation, Cell):
            self.activation = activation()
        else:
            self.activation = get_activation(activation)
        self.activation_flag = self.activation is not None
        self.dtype = compute_dtype

    def construct(self, x):
        out_shape = tuple(x.shape[:-1]) + (self.out_channels,)
        x = ops.reshape(x, (-1, self.in_channels))
        ori_dtype = x.dtype
        weight = ops.cast(self.weight, self.dtype)
        x = ops.cast(x, self.dtype)
        x = ops.matmul(x, ops.transpose(weight, (1, 0)) if self.transpose_b else weight)
        if self.has_bias:
            x = x + ops.cast(self.bias, self.dtype)
        if self.activation_flag:
            x = self.activation(x)
        return ops.reshape(ops.cast(x, ori_dtype), out_shape)


class FeedForward(_Shardable, Cell):
    """``mapping`` (hidden -> ffn, with ``hidden_act``), ``projection``
    (ffn -> hidden), dropout; computed in float16 as MindSpore's."""

    def __init__(self, hidden_size, ffn_hidden_size, dropout_rate, hidden_act="gelu", expert_num=1,
                 expert_group_size=None, param_init_type=mstype.float32, parallel_config=default_dpmp_config):
        super().__init__()
        if hidden_act is None or not (isinstance(hidden_act, str) or
                                      (isinstance(hidden_act, type) and issubclass(hidden_act, Cell))):
            raise UserTypeError(f"FeedForward: hidden_act must be a name or a Cell class, got {hidden_act!r}",
                                where=user_frame())
        mp = parallel_config.model_parallel
        for what, size in (("ffn_hidden_size", ffn_hidden_size), ("hidden_size", hidden_size)):
            if size % mp:
                raise UserValueError(f"FeedForward: {what} ({size}) must be a multiple of the model "
                                     f"parallel ways ({mp})", where=user_frame())
        rate = _check_rate(dropout_rate, "dropout_rate", "FeedForward")
        self.mapping = _Linear(hidden_size, ffn_hidden_size, activation=hidden_act, transpose_b=False,
                               expert_num=expert_num, param_init_type=param_init_type)
        self.projection = _Linear(ffn_hidden_size, hidden_size, transpose_b=False, expert_num=expert_num,
                                  param_init_type=param_init_type)
        self.dropout = Dropout(p=rate)

    def construct(self, x):
        _check_dtype(x, "x", (mstype.float32, mstype.float16), "FeedForward")
        x = ops.cast(x, mstype.float16)
        return self.dropout(self.projection(self.mapping(x)))


class AttentionMask(_Shardable, Cell):
    """(batch, seq) 1/0 validity -> (batch, seq, seq): row i keeps the valid
    positions up to i (both valid, lower triangle)."""

    def __init__(self, seq_length, parallel_config=default_dpmp_config):
        super().__init__()
        if not isinstance(parallel_config, OpParallelConfig):
            raise UserTypeError("AttentionMask: parallel_config must be an OpParallelConfig, got "
                                f"{type(parallel_config).__name__}", where=user_frame())
        self.seq_length = _positive_int(seq_length, "seq_length", "AttentionMask")
        self.lower_triangle_mask = Tensor(np.tril(np.ones((seq_length, seq_length))), mstype.float32)

    def construct(self, input_mask):
        _check_dtype(input_mask, "input_mask", (mstype.float32, mstype.float16), "AttentionMask")
        valid = ops.cast(ops.not_equal(input_mask, 0), mstype.float16)
        both = ops.expand_dims(valid, 2) * ops.expand_dims(valid, 1)
        return both * ops.expand_dims(self.lower_triangle_mask, 0)


class VocabEmbedding(_Shardable, Cell):
    """The rows of ``embedding_table`` [vocab, embedding] for int32 ids; returns
    them and the table."""

    def __init__(self, vocab_size, embedding_size, parallel_config=default_embedding_parallel_config,
                 param_init="normal"):
        super().__init__()
        self.vocab_size = _positive_int(vocab_size, "vocab_size", "VocabEmbedding")
        self.embedding_size = _positive_int(embedding_size, "embedding_size", "VocabEmbedding")
        if not parallel_config.vocab_emb_dp and vocab_size % parallel_config.model_parallel:
            raise UserValueError(f"VocabEmbedding: vocab_size ({vocab_size}) must be a multiple of "
                                 f"parallel_config.model_parallel ({parallel_config.model_parallel})",
                                 where=user_frame())
        self.embedding_table = Parameter(initializer(param_init, [vocab_size, embedding_size]),
                                         name="embedding_table")

    def construct(self, input_ids):
        _check_dtype(input_ids, "input_ids", (mstype.int32,), "VocabEmbedding")
        return ops.gather(self.embedding_table, input_ids, 0), self.embedding_table.value()


class MultiHeadAttention(_Shardable, Cell):
    """Query, key and value projections (``dense1``/``dense2``/``dense3``,
    [out, in]), scaled dot-product attention over ``num_heads`` heads with
    -10000 added where ``attention_mask`` is 0, the ``projection`` [in, out];
    returns the output in the input's shape and (key, value):
    [batch, heads, head size, tgt] and [batch, heads, tgt, head size]."""

    def __init__(self, batch_size, src_seq_length, tgt_seq_length, hidden_size, num_heads,
                 hidden_dropout_rate=0.1, attention_dropout_rate=0.1, compute_dtype=mstype.float16,
                 softmax_compute_type=mstype.float32, param_init_type=mstype.float32, use_past=False,
                 parallel_config=default_dpmp_config):
        super().__init__()
        cls = "MultiHeadAttention"
        if batch_size:
            _positive_int(batch_size, "batch_size", cls)
        _no_past(use_past, cls)
        hidden_rate = _check_rate(hidden_dropout_rate, "hidden_dropout_rate", cls)
        attention_rate = _check_rate(attention_dropout_rate, "attention_dropout_rate", cls)
        if hidden_size % num_heads:
            raise UserValueError(f"{cls}: hidden_size ({hidden_size}) must be a multiple of num_heads "
                                 f"({num_heads})", where=user_frame())
        if num_heads % parallel_config.model_parallel:
            raise UserValueError(f"{cls}: num_heads ({num_heads}) must be a multiple of "
                                 f"parallel_config.model_parallel ({parallel_config.model_parallel})",
                                 where=user_frame())
        self.batch_size, self.hidden_size = batch_size, hidden_size
        self.src_seq_length, self.tgt_seq_length = src_seq_length, tgt_seq_length
        self.n_head, self.size_per_head = num_heads, hidden_size // num_heads
        self.use_past = use_past
        self.projection = _Linear(hidden_size, hidden_size, transpose_b=False, compute_dtype=compute_dtype,
                                  param_init_type=param_init_type)
        self.dropout = Dropout(p=hidden_rate)
        self.prob_dropout = Dropout(p=attention_rate)
        for name in ("dense1", "dense2", "dense3"):     # query, key, value
            setattr(self, name, _Linear(hidden_size, hidden_size, compute_dtype=compute_dtype,
                                        param_init_type=param_init_type))
        self.dtype, self.softmax_dtype = compute_dtype, softmax_compute_type
        self.scale_factor = math.sqrt(math.sqrt(self.size_per_head))

    def construct(self, query_tensor, key_tensor, value_tensor, attention_mask, key_past=None,
                  value_past=None, batch_valid_length=None):
        cls = "MultiHeadAttention"
        for what, t in (("query_tensor", query_tensor), ("key_tensor", key_tensor),
                        ("value_tensor", value_tensor)) + \
                ((("attention_mask", attention_mask),) if attention_mask is not None else ()):
            _check_dtype(t, what, (mstype.float32, mstype.float16), cls)
        ori_shape, ori_dtype = tuple(query_tensor.shape), query_tensor.dtype
        heads, size = self.n_head, self.size_per_head

        def projected(dense, t, length, perm):
            t = ops.cast(ops.reshape(t, (-1, t.shape[-1])), self.dtype)
            return ops.transpose(ops.reshape(dense(t), (-1, length, heads, size)), perm)
        query = projected(self.dense1, query_tensor, self.src_seq_length, (0, 2, 1, 3))
        key = projected(self.dense2, key_tensor, self.tgt_seq_length, (0, 2, 3, 1))
        value = projected(self.dense3, value_tensor, self.tgt_seq_length, (0, 2, 1, 3))
        if attention_mask is not None and len(attention_mask.shape) == 3:
            attention_mask = ops.expand_dims(attention_mask, 1)
        output = self.dropout(self.projection(self._attn(query, key, value, attention_mask)))
        return ops.cast(ops.reshape(output, ori_shape), ori_dtype), (key, value)

    def _attn(self, query, key, value, attention_mask):
        score = ops.matmul(query / self.scale_factor, key / self.scale_factor)
        scores = ops.cast(score, self.softmax_dtype)
        if attention_mask is not None:
            # -10000 where masked, so those positions drop out of the softmax
            scores = (1.0 - ops.cast(attention_mask, scores.dtype)) * -10000.0 + scores
        probs = self.prob_dropout(ops.cast(ops.softmax(scores, -1), score.dtype))
        merged = ops.transpose(ops.matmul(probs, value), (0, 2, 1, 3))
        return ops.reshape(merged, (-1, self.hidden_size))


class TransformerEncoderLayer(_Shardable, Cell):
    """Pre-norm (``post_layernorm_residual=False``): x + attention(layernorm1(x)),
    then + output(layernorm2(.)); post-norm: layernorm1 of the feed-forward's
    sum.  Returns the output and the attention's (key, value)."""

    def __init__(self, batch_size, hidden_size, ffn_hidden_size, num_heads, seq_length,
                 attention_dropout_rate=0.1, hidden_dropout_rate=0.1, post_layernorm_residual=False,
                 layernorm_compute_type=mstype.float32, softmax_compute_type=mstype.float32,
                 param_init_type=mstype.float32, hidden_act="gelu", use_past=False,
                 moe_config=default_moe_config, parallel_config=default_dpmp_config):
        super().__init__()
        cls = "TransformerEncoderLayer"
        if batch_size or use_past:
            _positive_int(batch_size, "batch_size", cls)
        _no_moe(moe_config, cls)
        _no_past(use_past, cls)
        mp = parallel_config.model_parallel
        for what, size in (("num_heads", num_heads), ("hidden_size", hidden_size),
                           ("ffn_hidden_size", ffn_hidden_size)):
            if size % mp:
                raise UserValueError(f"{cls}: {what} ({size}) must be a multiple of "
                                     f"parallel_config.model_parallel ({mp})", where=user_frame())
        self.batch_size, self.seq_length, self.hidden_size = batch_size, seq_length, hidden_size
        self.use_past, self.use_moe = use_past, False
        self.layernorm1 = _LayerNorm((hidden_size,)).to_float(layernorm_compute_type)
        self.layernorm2 = _LayerNorm((hidden_size,)).to_float(layernorm_compute_type)
        self.attention = MultiHeadAttention(batch_size, seq_length, seq_length, hidden_size, num_heads,
                                            hidden_dropout_rate=hidden_dropout_rate,
                                            attention_dropout_rate=attention_dropout_rate,
                                            softmax_compute_type=softmax_compute_type,
                                            param_init_type=param_init_type, parallel_config=parallel_config)
        self.output = FeedForward(hidden_size, ffn_hidden_size, hidden_dropout_rate, hidden_act=hidden_act,
                                  param_init_type=param_init_type, parallel_config=parallel_config)
        self.post_layernorm_residual = post_layernorm_residual
        self.dtype = mstype.float16
        self.key_past = self.value_past = None

    def construct(self, x, input_mask=None, init_reset=True, batch_valid_length=None):
        _check_dtype(x, "x", (mstype.float32, mstype.float16), "TransformerEncoderLayer")
        x_shape = tuple(x.shape)
        x = ops.reshape(x, (-1, x_shape[-1]))
        input_x = x if self.post_layernorm_residual else self.layernorm1(x)
        input_x = ops.cast(input_x, self.dtype)
        attention, layer_present = self.attention(input_x, input_x, input_x, input_mask)
        x = (input_x if self.post_layernorm_residual else x) + attention
        output_x = ops.cast(self.layernorm2(x), self.dtype)
        mlp_logit = self.output(output_x)
        if self.post_layernorm_residual:
            output = self.layernorm1(output_x + mlp_logit)
        else:
            output = x + mlp_logit
        return ops.reshape(output, x_shape), layer_present


class TransformerEncoder(_Shardable, Cell):
    """``num_layers`` TransformerEncoderLayers (``blocks``), each its own
    weights; returns the last output and each layer's (key, value)."""

    def __init__(self, batch_size, num_layers, hidden_size, ffn_hidden_size, seq_length, num_heads,
                 attention_dropout_rate=0.1, hidden_dropout_rate=0.1, hidden_act="gelu",
                 post_layernorm_residual=False, layernorm_compute_type=mstype.float32,
                 softmax_compute_type=mstype.float32, param_init_type=mstype.float32, lambda_func=None,
                 offset=0, use_past=False, moe_config=default_moe_config,
                 parallel_config=default_transformer_config):
        super().__init__()
        _no_moe(moe_config, "TransformerEncoder")
        self.num_layers = _positive_int(num_layers, "num_layers", "TransformerEncoder")
        self.use_moe = False
        self.blocks = CellList()
        for layer_id in range(num_layers):
            block = TransformerEncoderLayer(
                batch_size=batch_size, hidden_size=hidden_size, ffn_hidden_size=ffn_hidden_size,
                num_heads=num_heads, seq_length=seq_length, attention_dropout_rate=attention_dropout_rate,
                hidden_dropout_rate=hidden_dropout_rate, post_layernorm_residual=post_layernorm_residual,
                layernorm_compute_type=layernorm_compute_type, softmax_compute_type=softmax_compute_type,
                param_init_type=param_init_type, hidden_act=hidden_act, use_past=use_past,
                moe_config=moe_config, parallel_config=parallel_config.dp_mp_config)
            if lambda_func is not None:     # the user's pipeline-stage / recompute placement
                lambda_func(block, layer_id=layer_id, layers=num_layers, offset=offset,
                            parallel_config=parallel_config)
            self.blocks.append(block)

    def construct(self, hidden_states, attention_mask, init_reset=True, batch_valid_length=None):
        present_layer = ()
        for block in self.blocks:
            hidden_states, present = block(hidden_states, attention_mask, init_reset, batch_valid_length)
            present_layer = present_layer + (present,)
        return hidden_states, present_layer


class CrossEntropyLoss(_Shardable, Cell):
    """Softmax cross entropy of (N, C) logits against (N,) int32 labels,
    averaged over the positions where ``input_mask`` (N,) is 1:
    sum(loss * mask) / (sum(mask) + 1e-5), shape (1,) as MindSpore's."""

    def __init__(self, parallel_config=default_dpmp_config):
        super().__init__()
        if not isinstance(parallel_config, OpParallelConfig):
            raise UserTypeError("CrossEntropyLoss: parallel_config must be an OpParallelConfig, got "
                                f"{type(parallel_config).__name__}", where=user_frame())

    def construct(self, logits, label, input_mask):
        cls = "CrossEntropyLoss"
        _check_dtype(logits, "logits", (mstype.float32, mstype.float16), cls)
        _check_dtype(label, "label", (mstype.int32,), cls)
        _check_dtype(input_mask, "input_mask", (mstype.float32,), cls)
        logits = ops.cast(logits, mstype.float32)
        # MindSpore's steps: the max subtracted (no gradient of its own), exp,
        # normalised, log of softmax + 1e-24 at the label
        shifted = logits - ops.stop_gradient(ops.amax(logits, -1, keepdims=True))
        exps = ops.exp(shifted)
        softmax = exps / ops.reshape(ops.sum(exps, -1), (-1, 1))
        one_hot = ops.one_hot(label, logits.shape[-1], 1.0, 0.0)
        loss = ops.sum(-(ops.log(softmax + 1e-24) * one_hot), -1)
        input_mask = ops.reshape(input_mask, (-1,))
        denominator = ops.sum(input_mask) + Tensor([1e-5], mstype.float32)
        return ops.sum(loss * input_mask) / denominator


__mindspore_name__ = "mindspore.parallel._transformer"     # what its errors call it
_missing = missing_names(__name__)


def __getattr__(name: str):
    # MindSpore's submodules (transformer, layers, loss, op_parallel_config,
    # moe) are this one module: ``from ..._transformer.loss import X``
    if name in ("transformer", "layers", "loss", "op_parallel_config", "moe"):
        return sys.modules[__name__]
    return _missing(name)
