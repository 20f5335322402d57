"""``nn.MultiheadAttention``, ``nn.TransformerEncoderLayer``/``Encoder``,
``nn.TransformerDecoderLayer``/``Decoder`` and ``nn.Transformer`` as
MindSpore 2.x writes them (PyTorch's layout:
sequence-first unless ``batch_first``; ``in_proj_weight`` [3E, E]), built from
``irc.ops``: their gradients are those ops' own.  The sequence lengths must be
known when the network is compiled; the batch may be the run-time one."""
from __future__ import annotations

import copy
import math

from .. import ops
from ..common import dtype as mstype
from ..common.initializer import HeUniform, Uniform, XavierUniform
from ..diagnostics import UnsupportedError, UserValueError, user_frame
from .activation import GELU, ReLU
from .basic import Dense, Dropout, _positive_int, make_param
from .cell import Cell, CellList
from .normalization import LayerNorm


def _dense(n_in: int, n_out: int, has_bias: bool = True) -> Dense:
    """MindSpore's transformer Dense: HeUniform(sqrt(5)) weight, U(1/sqrt(fan_in)) bias."""
    return Dense(n_in, n_out, weight_init=HeUniform(math.sqrt(5)), bias_init=Uniform(1 / math.sqrt(n_in)),
                 has_bias=has_bias)


class MultiheadAttention(Cell):
    def __init__(self, embed_dim, num_heads, dropout=0.0, has_bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, dtype=None):
        super().__init__()
        self.embed_dim = _positive_int(embed_dim, "embed_dim", "MultiheadAttention")
        self.num_heads = _positive_int(num_heads, "num_heads", "MultiheadAttention")
        if embed_dim % num_heads:
            raise UserValueError("MultiheadAttention: embed_dim must be divisible by num_heads",
                                 where=user_frame())
        if add_bias_kv or add_zero_attn or kdim not in (None, embed_dim) or vdim not in (None, embed_dim):
            raise UnsupportedError("MultiheadAttention: add_bias_kv, add_zero_attn and kdim/vdim other "
                                   "than embed_dim are not supported by irc", where=user_frame())
        self.head_dim, self.dropout, self.batch_first = embed_dim // num_heads, float(dropout), batch_first
        self.in_proj_weight = make_param(XavierUniform(), (3 * embed_dim, embed_dim), "in_proj_weight")
        self.in_proj_bias = make_param("zeros", (3 * embed_dim,), "in_proj_bias") if has_bias else None
        self.out_proj = _dense(embed_dim, embed_dim, has_bias)

    def construct(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                  average_attn_weights=True):
        if not self.batch_first:        # [L, N, E] -> [N, L, E]
            query, key, value = (ops.transpose(t, (1, 0, 2)) for t in (query, key, value))
        out, weights = self._attend(query, key, value, key_padding_mask, attn_mask, average_attn_weights)
        if not self.batch_first:
            out = ops.transpose(out, (1, 0, 2))
        return (out, weights) if need_weights else (out,)

    def _attend(self, query, key, value, key_padding_mask, attn_mask, average):
        e, heads, hd = self.embed_dim, self.num_heads, self.head_dim
        w_q, w_k, w_v = ops.split(self.in_proj_weight, e, 0)
        b_q = b_k = b_v = None
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = ops.split(self.in_proj_bias, e, 0)
        tgt, src = query.shape[1], key.shape[1]

        def heads_of(x, w, b, length):        # [N, L, E] -> [N, heads, L, hd]
            y = ops.dense(x, w, b)
            return ops.transpose(ops.reshape(y, (-1, length, heads, hd)), (0, 2, 1, 3))
        q, k, v = heads_of(query, w_q, b_q, tgt), heads_of(key, w_k, b_k, src), heads_of(value, w_v, b_v, src)
        # MindSpore divides q and k each by the fourth root of the head size
        scale = math.sqrt(math.sqrt(hd))
        scores = ops.matmul(q / scale, ops.transpose(k, (0, 1, 3, 2)) / scale)
        mask = self._mask(key_padding_mask, attn_mask, tgt, src, scores.dtype)
        if mask is not None:
            scores = scores + mask
        attn = ops.softmax(scores, -1)
        if self.training and self.dropout > 0:
            attn = ops.dropout(attn, self.dropout)
        out = ops.reshape(ops.transpose(ops.matmul(attn, v), (0, 2, 1, 3)), (-1, tgt, e))
        out = self.out_proj(out)
        weights = ops.sum(attn, 1) / heads if average else attn
        return out, weights

    def _mask(self, key_padding_mask, attn_mask, tgt, src, dtype):
        """The additive mask ([N or 1, heads or 1, L, S]): -inf where a bool
        mask is True, a float mask as it is."""
        def additive(m):
            if m.dtype == mstype.bool_:
                return ops.masked_fill(ops.zeros_like(ops.cast(m, dtype)), m, float("-inf"))
            return ops.cast(m, dtype)
        total = None
        if attn_mask is not None:
            m = additive(attn_mask)
            m = ops.reshape(m, (1, 1, tgt, src)) if len(m.shape) == 2 else \
                ops.reshape(m, (-1, self.num_heads, tgt, src))
            total = m
        if key_padding_mask is not None:
            m = ops.reshape(additive(key_padding_mask), (-1, 1, 1, src))
            total = m if total is None else total + m
        return total


def _activation(activation, who: str) -> Cell:
    if activation in ("relu", ops.relu) or isinstance(activation, ReLU):
        return ReLU()
    if activation in ("gelu", ops.gelu) or isinstance(activation, GELU):
        return GELU(approximate=False)
    raise UserValueError(f"{who}: activation must be 'relu' or 'gelu', got {activation!r}",
                         where=user_frame())


class _TransformerLayer(Cell):
    """What MindSpore's encoder and decoder layers share, made in its order:
    self-attention (the decoder's attention over the memory next), the
    feed-forward block, ``blocks`` norms and dropouts; ``init_args`` is
    what a stack makes its layers from."""

    blocks = 2

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first)
        if self.blocks == 3:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                     batch_first=batch_first)
        self.dense1 = _dense(d_model, dim_feedforward)
        self.dropout = Dropout(p=dropout)
        self.dense2 = _dense(dim_feedforward, d_model)
        self.norm_first = bool(norm_first)
        for i in range(1, self.blocks + 1):
            setattr(self, f"norm{i}", LayerNorm((d_model,), epsilon=layer_norm_eps))
        for i in range(1, self.blocks + 1):
            setattr(self, f"dropout{i}", Dropout(p=dropout))
        self.activation = _activation(activation, type(self).__name__)
        self.init_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                          norm_first)

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x, dropout):
        return dropout(self.dense2(self.dropout(self.activation(self.dense1(x)))))


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention, then a feed-forward block; each added back and
    normalised (before, with ``norm_first``)."""

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff_block(x, self.dropout2))


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention over ``tgt``, attention over ``memory``, a feed-forward
    block; each added back and normalised (before, with ``norm_first``)."""

    blocks = 3

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._ff_block(x, self.dropout3))

    def _mha_block(self, x, memory, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout2(x)


class _TransformerStack(Cell):
    """``num_layers`` copies of one new ``layer_class`` layer made with
    ``layer``'s arguments (MindSpore's: the copies start from the same
    weights), then ``norm``."""

    layer_class: type = _TransformerLayer

    def __init__(self, layer, num_layers, norm=None):
        super().__init__()
        made = self.layer_class(*layer.init_args)
        self.layers = CellList([copy.deepcopy(made) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def _normed(self, out):
        return self.norm(out) if self.norm is not None else out


class TransformerEncoder(_TransformerStack):
    layer_class = TransformerEncoderLayer

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self._normed(out)


class TransformerDecoder(_TransformerStack):
    layer_class = TransformerDecoderLayer

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask)
        return self._normed(out)


class Transformer(Cell):
    """An encoder and a decoder (``custom_encoder``/``custom_decoder`` in
    their place), every weight of more than one dimension then drawn again
    Xavier-uniform, in the parameters' order (MindSpore's)."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 dtype=None):
        super().__init__()
        from ..common.initializer import initializer
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first)
        for name, custom, layer, stack, depth in (
                ("encoder", custom_encoder, TransformerEncoderLayer, TransformerEncoder,
                 num_encoder_layers),
                ("decoder", custom_decoder, TransformerDecoderLayer, TransformerDecoder,
                 num_decoder_layers)):
            setattr(self, name, custom if custom is not None else
                    stack(layer(*layer_args), depth, LayerNorm((d_model,), epsilon=layer_norm_eps)))
        for _, p in self.parameters_and_names():
            if p.ndim > 1:
                p.set_data(initializer("xavier_uniform", p.shape, p.dtype))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def construct(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                  src_key_padding_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise UserValueError("The number of features for 'src' and 'tgt' must be equal to "
                                 "`d_model`.", where=user_frame())
        memory = self.encoder(src, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)
