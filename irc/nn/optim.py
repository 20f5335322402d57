"""``mindspore.nn`` optimizers: ``Momentum``, ``SGD``, ``Adam``, ``AdamWeightDecay``,
``RMSProp`` (plain and centered), ``Adagrad``, ``Adadelta``, ``FTRL``, ``LazyAdam``, ``AdaMax``,
``ProximalAdagrad``, ``Rprop``.

An optimizer describes the update.  ``Model.train`` turns it into the
``train.minimize`` marker (:meth:`Optimizer.minimize_attrs`) and the autodiff
pass emits the update ops; called on gradients (``optimizer(grads)``, the
functional style) it applies the same ops itself, traced inside a jitted
function or eagerly.  Their numbers follow MindSpore's kernels (see
``irc/dialects/train.py``).  The learning rate is
a number, a list (or 1-D Tensor/array) with one rate per step, or a
``LearningRateSchedule``; :meth:`Optimizer.learning_rates` gives the rates
of any run of global steps (past the end of a list, its last rate).

Weight decay follows MindSpore: without parameter groups it applies to the
parameters whose names contain neither "beta" nor "gamma"; a group
``{"params": [...], "weight_decay": w}`` sets it per group.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..common.tensor import Parameter, ParameterTuple, Tensor
from ..diagnostics import UnsupportedError, UserError, UserTypeError, UserValueError, user_frame
from ..dialects.train import OPTIMIZER_SPECS, optimizer_state, state_fill, update_attrs
from ..ops import _dispatch
from .cell import Cell
from .learning_rate_schedule import LearningRateSchedule

__all__ = ["opt_init_args_register", "Optimizer", "Momentum", "SGD", "Adam", "AdamWeightDecay", "RMSProp", "Adagrad", "Adadelta",
           "FTRL", "LazyAdam", "AdaMax", "ProximalAdagrad", "Rprop"]


def _check_number(cls: str, name: str, v, lo: float = 0.0, open_lo: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
        raise UserError(f"{cls}: {name} must be a float, got {v!r}", where=user_frame())
    v = float(v)
    if v < lo or (open_lo and v == lo):
        raise UserError(f"{cls}: {name} should be {'greater than' if open_lo else 'at least'} {lo}, "
                        f"got {v}", where=user_frame())
    return v


def _check_flag(cls: str, name: str, v) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise UserError(f"{cls}: {name} must be a bool, got {v!r}", where=user_frame())
    return bool(v)


def _moment_rates(opt, beta1, beta2, eps) -> tuple[float, float, float]:
    """An Adam-style optimizer's beta1, beta2 (each in (0, 1)) and eps (> 0), checked."""
    cls = type(opt).__name__
    for name, v in (("beta1", beta1), ("beta2", beta2)):
        if _check_number(cls, name, v, open_lo=True) >= 1.0:
            raise UserError(f"{cls}: {name} must be in (0.0, 1.0), got {float(v)}", where=opt.source)
    return float(beta1), float(beta2), _check_number(cls, "eps", eps, open_lo=True)


def opt_init_args_register(fn):
    """MindSpore's decorator of an optimizer's ``__init__``: records its
    arguments (``init_params``, ``init_learning_rate``, ``init_args``), as
    the model zoo's optimizers are written."""
    import functools
    import inspect

    @functools.wraps(fn)
    def init(self, *args, **kwargs):
        arguments = inspect.signature(fn).bind(self, *args, **kwargs)
        arguments.apply_defaults()
        given = dict(arguments.arguments)
        given.pop("self")
        if "params" in given:
            object.__setattr__(self, "init_params", {"params": given.pop("params")})
        if "optimizer" in given:
            object.__setattr__(self, "init_params", {"params": given.pop("optimizer").init_params["params"]})
        if "learning_rate" in given:
            lr = given.pop("learning_rate")
            lr = lr.asnumpy().tolist() if isinstance(lr, Tensor) else lr
            object.__setattr__(self, "init_learning_rate", None if isinstance(lr, Cell) else lr)
        object.__setattr__(self, "init_args", given)
        fn(self, *args, **kwargs)
    return init


class Optimizer(Cell):
    """Base class: parameters (optionally in groups), learning rate, weight
    decay and loss scale."""

    kind = ""

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        cls = type(self).__name__
        self.source = user_frame()
        self.loss_scale = _check_number(cls, "loss_scale", loss_scale, open_lo=True)
        weight_decay = _check_number(cls, "weight_decay", weight_decay)
        # a number, a per-step array or a LearningRateSchedule; a number is
        # the value of the ``learning_rate`` Parameter (MindSpore's), which a
        # callback may change while training (LearningRateScheduler)
        self._rate = self._check_lr(cls, learning_rate)
        self._rate_param = None
        self._rate_fed = False     # set by Model.train when a callback will change the rate
        self._group_rates: list = []      # each group's own rate (None: the optimizer's), by _groups
        self._group_starts: list = []     # the index of each group's first parameter, by _groups
        self.param_list, self.weight_decays, self.param_lrs = self._groups(cls, parameters, weight_decay)
        self._param_keys = [p.name for p in self.param_list]
        self._mindspore_attributes(parameters, weight_decay)
        from ..capture import current
        if current() is not None:
            current().optimizers.append(self)

    def _mindspore_attributes(self, parameters, weight_decay) -> None:
        """What MindSpore's Optimizer holds for the optimizers users write
        (``self.decay_flags``, ``self.weight_decay``, ``self.hyper_map`` ...):
        the model zoo's AdamW reads them in its construct."""
        from ..ops import composite as C
        items = list(parameters) if not isinstance(parameters, Parameter) else [parameters]
        self.is_group = not all(isinstance(p, Parameter) for p in items)
        self.is_group_lr = any(lr is not None for lr in self.param_lrs)
        self.is_group_params_ordered = any(isinstance(g, dict) and "order_params" in g for g in items)
        if self.is_group:
            self.decay_flags = tuple(d > 0 for d in self.weight_decays)
            self.weight_decay = tuple(Tensor(np.float32(d)) for d in self.weight_decays)
        else:
            self.decay_flags = tuple("beta" not in p.name and "gamma" not in p.name
                                     for p in self.param_list)
            self.weight_decay = Tensor(np.float32(weight_decay))
        self.exec_weight_decay = any(d > 0 for d in self.weight_decays)
        self.grad_centralization_flags = (False,) * len(self.param_list)
        self.dynamic_weight_decay = False
        self.optim_filter = (True,) * len(self.param_list)
        self.use_parallel = False
        self.param_length = len(self.param_list)
        self.need_scale = self.loss_scale != 1.0
        self.reciprocal_scale = Tensor(np.float32(1.0 / self.loss_scale))
        self.global_step_increase_tensor = Tensor(np.array([1], np.int32))
        self.map_, self.map_reverse = C.Map(), C.Map(None, True)
        self.hyper_map, self.hyper_map_reverse = C.HyperMap(), C.HyperMap(None, True)

    # -- parameters ---------------------------------------------------------------------
    def _groups(self, cls: str, parameters, weight_decay: float):
        items = list(parameters) if not isinstance(parameters, Parameter) else [parameters]
        if not items:
            raise UserError(f"{cls}: the optimizer got no parameters", where=self.source,
                            hint="pass network.trainable_params()")
        if all(isinstance(p, Parameter) for p in items):
            # MindSpore: ungrouped weight decay skips "beta"/"gamma" (normalisation) parameters
            decays = [weight_decay if "beta" not in (p.name or "") and "gamma" not in (p.name or "")
                      else 0.0 for p in items]
            return items, decays, [None] * len(items)
        params, decays, lrs = [], [], []
        order = None
        for group in items:
            if not isinstance(group, dict) or "params" not in group:
                if isinstance(group, dict) and "order_params" in group:
                    order = list(group["order_params"])
                    continue
                raise UserError(f"{cls}: parameters must be Parameters or dicts with 'params', "
                                f"got {type(group).__name__}", where=self.source)
            lr = group.get("lr", group.get("learning_rate"))
            if lr is not None:      # a number, per-step rates (the model zoo's OpenPose) or a schedule
                lr = self._check_lr(cls, lr)
            self._group_rates.append(lr)
            self._group_starts.append(len(params))
            wd = _check_number(cls, "weight_decay", group.get("weight_decay", weight_decay))
            for p in group["params"]:
                if not isinstance(p, Parameter):
                    raise UserError(f"{cls}: group params must be Parameters, got "
                                    f"{type(p).__name__}", where=self.source)
                params.append(p)
                decays.append(wd)
                lrs.append(lr)
        if order is not None:      # MindSpore's: the parameters in order_params' order
            names = [p.name for p in params]
            if sorted(names) != sorted(p.name for p in order):
                raise UserValueError(f"For 'Optimizer', the length of order parameters must be the "
                                     f"same as the length of group parameters, but got order "
                                     f"parameters' length {len(order)}, group parameters' length "
                                     f"{len(params)}.", where=self.source)
            at = [names.index(p.name) for p in order]
            params, decays, lrs = ([xs[i] for i in at] for xs in (params, decays, lrs))
        return params, decays, lrs

    @property
    def parameters(self) -> ParameterTuple:
        return ParameterTuple(self.param_list)

    @property
    def builtin_state(self) -> bool:
        """Whether it holds a built-in kind's state: a built-in optimizer, or
        a user's subclass of one (the model zoo's YOLOX ``MySgdOptimizer(nn.SGD)``,
        its construct calling the SGD's), whose MindSpore ``__init__`` made it."""
        return self.kind in OPTIMIZER_SPECS

    @property
    def custom(self) -> bool:
        """An optimizer the user wrote: its own construct updates the
        parameters (Model trains it through a TrainOneStepCell, as MindSpore's)."""
        construct = type(self).construct
        return construct is not Optimizer.construct and not construct.__module__.startswith("irc.")

    @property
    def global_step(self) -> Parameter:
        """MindSpore's step counter Parameter (int32 [1]): the rate of a
        dynamic learning rate is read at it, and only an optimizer's own
        ``assignadd`` moves it (MindSpore 2.x's get_lr does not)."""
        step = self.__dict__.get("_irc_global_step")
        if step is None:
            step = Parameter(np.zeros(1, np.int32), name="global_step", requires_grad=False)
            object.__setattr__(self, "_irc_global_step", step)
        return step

    def _held_name(self, key: str) -> str:
        """The name of a Parameter this optimizer holds under ``key``: the
        prefix a parent gave its Parameters (``optimizer_d.``, read off
        global_step, which every optimizer holds from the start) + ``key``."""
        return self.global_step.name[:-len("global_step")] + key

    def update_parameters_name(self, prefix: str = "", recurse: bool = True) -> None:
        """MindSpore's optimizer holds the network's parameters as its own,
        keyed by their names when it was made: each becomes ``prefix`` + that
        name (the DCGAN tutorial's ``optim_g.``, so two networks' checkpoints
        never share a name)."""
        if not isinstance(prefix, str):
            raise UserError(f"update_parameters_name: prefix must be a str, got {prefix!r}",
                            where=user_frame())
        for key, p in self._named_parameters_here():
            p.name = prefix + key

    # -- learning rate ------------------------------------------------------------------
    @staticmethod
    def _check_lr(cls: str, lr):
        if isinstance(lr, LearningRateSchedule):
            return lr
        if isinstance(lr, Iterable) and not isinstance(lr, (str, bytes, Tensor, np.ndarray)):
            lr = list(lr)       # any iterable of per-step rates (the model zoo's DeepLabv3 passes a generator)
        if isinstance(lr, (Tensor, np.ndarray, list, tuple)):
            values = np.asarray(lr.asnumpy() if isinstance(lr, Tensor) else lr, dtype=np.float64)
            if values.ndim == 0:
                return _check_number(cls, "learning_rate", float(values))
            if values.ndim != 1 or values.size == 0:
                raise UserError(f"{cls}: a dynamic learning_rate must be a non-empty 1-D list, "
                                f"got shape {list(values.shape)}", where=user_frame(),
                                hint="an empty list of rates usually comes from a dataset of no "
                                     "batches (steps per epoch = get_dataset_size() = 0): check "
                                     "the data folder and that batch_size is not larger than the "
                                     "dataset" if values.size == 0 else None)
            if (values < 0).any():
                raise UserError(f"{cls}: learning rates must be at least 0.0", where=user_frame())
            return values
        return _check_number(cls, "learning_rate", lr)

    @property
    def learning_rate(self):
        """MindSpore's ``optimizer.learning_rate``: for a fixed rate a float32
        Parameter (``F.assign`` to it changes the rate of the steps after),
        else the per-step array or the schedule."""
        if not isinstance(self._rate, float):
            return self._rate
        if self._rate_param is None:
            object.__setattr__(self, "_rate_param", Parameter(Tensor(np.float32(self._rate)),
                                                              name=self._held_name("learning_rate"),
                                                              requires_grad=False))
        return self._rate_param

    def _fixed_rate(self) -> float:
        return float(self._rate_param.asnumpy()) if self._rate_param is not None else self._rate

    @property
    def dynamic_lr(self) -> bool:
        """Whether the compiled step reads the rate as an input each step:
        a schedule, or a fixed rate a callback will change."""
        return not isinstance(self._rate, float) or self._rate_fed or bool(self._rate_columns())

    def learning_rates(self, first_step: int, count: int) -> np.ndarray:
        """float32 rates of global steps first_step .. first_step + count - 1:
        [count], or [count, 1 + groups] where groups have per-step rates of
        their own (column 0 the optimizer's, column k the k-th such group's)."""
        steps = np.arange(first_step, first_step + count)
        lr = self._rate
        if isinstance(lr, float):
            out = np.full(count, self._fixed_rate())
        elif isinstance(lr, LearningRateSchedule):
            out = np.asarray(lr.values(steps), dtype=np.float64).reshape(count)
        else:
            out = lr[np.minimum(steps, lr.size - 1)]
        columns = self._rate_columns()
        if columns:
            out = np.stack([out] + [np.asarray(rates.values(steps), np.float64).reshape(count)
                                    if isinstance(rates, LearningRateSchedule)
                                    else rates[np.minimum(steps, rates.size - 1)] for rates in columns], axis=1)
        return out.astype(np.float32)

    def _rate_columns(self) -> list:
        """The groups' own per-step rates (arrays or schedules), one each, in group order."""
        return [lr for lr in self._group_rates if isinstance(lr, (np.ndarray, LearningRateSchedule))]

    def _rate_column_of(self, lr) -> int:
        """The column of learning_rates a parameter of a group with rates ``lr`` reads."""
        return 1 + next(i for i, rates in enumerate(self._rate_columns()) if rates is lr)

    def get_lr(self):
        """MindSpore's: the rate at ``global_step`` (a group's own rates:
        one per parameter)."""
        if self.is_group_lr:
            base = self.get_lr_at_step()
            return tuple(base if lr is None else self._group_rate_now(lr) for lr in self.param_lrs)
        return self.get_lr_at_step()

    def _group_rate_now(self, lr):
        """A group's own rate at this step: a constant, or its column of the
        fed rates (traced: the step's; eager: at global_step)."""
        if isinstance(lr, float):
            return Tensor(np.float32(lr))
        if _dispatch.tracer() is not None:
            return _dispatch.learning_rate(self)[self._rate_column_of(lr)]
        step = int(np.asarray(self.global_step.asnumpy()).reshape(-1)[0])
        if isinstance(lr, LearningRateSchedule):
            return Tensor(np.float32(lr.values(np.array([step]))[0]))
        return Tensor(np.float32(lr[min(step, lr.size - 1)]))

    def get_lr_at_step(self):
        lr = self._rate
        if isinstance(lr, float):
            return self.learning_rate
        if isinstance(lr, LearningRateSchedule):
            return lr(self.global_step).reshape(())
        from .. import ops
        return ops.gather(self._rate_list_parameter(), self.global_step, 0).reshape(())

    def _rate_list_parameter(self) -> Parameter:
        """A list of per-step rates as MindSpore holds it: a Parameter ``learning_rate``."""
        rates = self.__dict__.get("_irc_rates")
        if rates is None:
            rates = Parameter(np.asarray(self._rate, np.float32), name=self._held_name("learning_rate"),
                              requires_grad=False)
            object.__setattr__(self, "_irc_rates", rates)
        return rates

    def get_lr_parameter(self, param):
        """The rate of ``param`` (its group's, else the optimizer's)."""
        for p, lr in zip(self.param_list, self.param_lrs):
            if p is param or p.name == getattr(param, "name", None):
                return self.get_lr_at_step() if lr is None else self._group_rate_now(lr)
        raise UserValueError(f"get_lr_parameter: {getattr(param, 'name', param)!r} is not one of "
                             f"the optimizer's parameters", where=user_frame())

    def get_weight_decay(self):
        return self.weight_decay

    def decay_weight(self, gradients):
        """``gradient + weight_decay * param`` where the decay applies (MindSpore's)."""
        if not self.exec_weight_decay:
            return gradients
        decays = self.weight_decay if self.is_group else (self.weight_decay,) * len(self.param_list)
        return tuple(g + p * d if flag else g for g, p, d, flag
                     in zip(gradients, self.param_list, decays, self.decay_flags))

    def scale_grad(self, gradients):
        """Gradients divided by the loss scale (MindSpore's)."""
        if not self.need_scale:
            return gradients
        return tuple(g * self.reciprocal_scale for g in gradients)

    def gradients_centralization(self, gradients):
        return gradients

    def flatten_gradients(self, gradients):
        return gradients

    def broadcast_params(self, optim_result):
        return optim_result

    # -- what the compiler reads --------------------------------------------------------
    def hyper_attrs(self) -> dict:
        """The optimizer's own attributes of train.minimize."""
        return {}

    def minimize_attrs(self, names: dict) -> dict:
        """train.minimize's attributes; ``names`` maps id(Parameter) to its
        name in the graph."""
        missing = [p for p in self.param_list if id(p) not in names]
        if missing:
            p = missing[0]
            raise UserError(f"{type(self).__name__}: parameter {p.name or '?'} does not belong "
                            f"to the network being trained", where=self.source,
                            hint="pass the trained network's trainable_params()")
        params = [names[id(p)] for p in self.param_list]
        decays = sorted({d for d in self.weight_decays if d})
        attrs = {"optimizer": self.kind, "params": params,
                 "learning_rate": "dynamic" if self.dynamic_lr else self._fixed_rate(),
                 "loss_scale": self.loss_scale, **self.hyper_attrs()}
        if len(decays) > 1:       # groups with different decays: each parameter's own
            attrs["param_decays"] = {n: d for n, d in zip(params, self.weight_decays) if d}
        elif decays:
            attrs["weight_decay"] = decays[0]
            if any(d == 0.0 for d in self.weight_decays):
                attrs["decay_params"] = [n for n, d in zip(params, self.weight_decays) if d]
        if any(isinstance(lr, float) for lr in self.param_lrs):
            attrs["param_lrs"] = {n: lr for n, lr in zip(params, self.param_lrs) if isinstance(lr, float)}
        if self._rate_columns():      # the fed rate is a row of columns; a parameter reads its group's
            attrs["lr_columns"] = 1 + len(self._rate_columns())
            attrs["param_lr_columns"] = {n: self._rate_column_of(lr) for n, lr in zip(params, self.param_lrs)
                                         if isinstance(lr, (np.ndarray, LearningRateSchedule))}
        # the state takes the names the parameters had when the optimizer was
        # made, as MindSpore's (a network wrapped since, the model zoo's
        # BuildTrainNetwork: moments.backbone.x, not moments.network.backbone.x)
        renamed = {n: k for n, k in zip(params, self._param_keys) if n != k}
        if renamed:
            attrs["state_keys"] = renamed
        return attrs

    # -- applied to gradients (functional training) ---------------------------------
    def next_learning_rate(self) -> np.float32:
        """The rate of the optimizer's next step; counts the step (MindSpore's
        global_step), so schedules advance once per update."""
        step = self._steps_taken()
        object.__setattr__(self, "_irc_step", step + 1)
        return self.learning_rates(step, 1)[0]

    def _steps_taken(self) -> int:
        """The steps counted so far: the global_step Parameter's value when
        anything wrote it since it was last read (a checkpoint loaded into the
        optimizer to resume by hand, the update a step made), else the count
        kept here (a step whose graph does not write it)."""
        global_step = self.global_step
        if self.__dict__.get("_irc_step_seen") != global_step._version:
            object.__setattr__(self, "_irc_step", int(np.asarray(global_step.asnumpy()).reshape(-1)[0]))
            object.__setattr__(self, "_irc_step_seen", global_step._version)
        return self.__dict__.get("_irc_step", 0)

    def step_not_taken(self) -> None:
        """The step next_learning_rate counted was not taken (a loss-scale
        step skipped its update): the schedule stays where it was."""
        object.__setattr__(self, "_irc_step", max(0, self.__dict__.get("_irc_step", 0) - 1))

    def state_of(self, param: Parameter) -> list[Parameter]:
        """The optimizer's state for ``param``, as Parameters under MindSpore's
        names (``moments.conv1.weight``), made on first use."""
        states = self.__dict__.setdefault("_irc_states", {})
        if id(param) not in states:
            states[id(param)] = [
                Parameter(np.full(param.shape,
                                  state_fill(init), dtype=np.float32),
                          name=self._held_name(f"{prefix}.{self._name_when_made(param)}"),
                          requires_grad=False)
                for prefix, init in optimizer_state(self.kind, self.hyper_attrs())]
        return states[id(param)]

    def _name_when_made(self, param: Parameter) -> str:
        """The parameter's name when the optimizer was made: MindSpore
        names its state then (a network wrapped later renames only its own)."""
        for p, name in zip(self.param_list, self._param_keys):
            if p is param:
                return name
        return param.name

    # MindSpore's attribute of each state kind (``adam.moment1``): the state's
    # name prefix, but AdamWeightDecay's moments1/moments2
    _STATE_ATTRIBUTES = {"moments1": "adam_m", "moments2": "adam_v"}

    def __getattr__(self, name: str):
        """An optimizer's state as MindSpore's attributes hold it: a
        ParameterTuple per kind (``moment1``, ``moments``, ``linear`` ...) and
        Adam's ``beta1_power``/``beta2_power`` Parameters."""
        kind = self.kind
        if kind in OPTIMIZER_SPECS and "param_list" in self.__dict__:
            prefixes = [prefix for prefix, _ in OPTIMIZER_SPECS[kind].state]
            prefix = self._STATE_ATTRIBUTES.get(name, name)
            if prefix in prefixes:
                column = prefixes.index(prefix)
                return ParameterTuple(self.state_of(p)[column] for p in self.param_list)
            betas = [f"{beta}_power" for beta in OPTIMIZER_SPECS[kind].powers]
            if name in betas:
                return self._power_parameters()[betas.index(name)]
        return super().__getattr__(name)

    def _named_parameters_here(self) -> list[tuple[str, Parameter]]:
        """What MindSpore's optimizer Cell holds, in its order and under its
        keys: global_step, the learning_rate Parameter (a fixed rate, or the
        list of per-step rates, last), the parameters it updates (keyed by their
        names when it was made), Momentum's and SGD's ``momentum``, then its
        state kind by kind (made now if not yet): what ``get_parameters``
        lists and ``save_checkpoint`` of a training cell saves.  A user's
        optimizer: its own Parameters after the ones it updates."""
        settings = dict(self.settings_held())
        held = [("global_step", self.global_step)]
        held += [(k, p) for k, p in settings.items() if k == "learning_rate" or k.startswith("learning_rate_group_")]
        last = [(k, p) for k, p in settings.items() if k.startswith("learning_rate.")]
        held += zip(self._param_keys, self.param_list)
        if not self.builtin_state:
            return held + list(super()._named_parameters_here())
        if "momentum" in settings:
            held.append(("momentum", settings["momentum"]))
        held += self._state_held()
        held += last        # MindSpore's sub-cells holding per-step rates, listed last
        if self.custom:     # a subclass's own Parameters, made after the built-in's
            listed = {id(p) for _, p in held}
            held += [(k, p) for k, p in super()._named_parameters_here() if id(p) not in listed]
        return held

    def settings_held(self) -> list[tuple[str, Parameter]]:
        """The hyper-parameters MindSpore's optimizer holds as Parameters
        (so its checkpoints save them): a fixed learning_rate, a list of
        per-step rates, Momentum's and SGD's momentum."""
        held = []
        if self.is_group_lr:
            held += self._group_rates_held()
        elif isinstance(self._rate, float):
            held.append(("learning_rate", self.learning_rate))
        elif isinstance(self._rate, np.ndarray):
            held.append(("learning_rate.learning_rate", self._rate_list_parameter()))
        if self.kind in ("Momentum", "SGD"):
            held.append(("momentum", self._momentum_parameter()))
        return held

    def _state_held(self) -> list[tuple[str, Parameter]]:
        """Adam's powers, then each kind of state for every parameter."""
        self.make_state()
        held = [(f"{beta}_power", p) for beta, p in zip(OPTIMIZER_SPECS[self.kind].powers,
                                                        self.__dict__.get("_irc_powers", ()))]
        states = [self.state_of(p) for p in self.param_list]
        for i, (prefix, _) in enumerate(optimizer_state(self.kind, self.hyper_attrs())):
            held += [(f"{prefix}.{key}", state[i]) for key, state in zip(self._param_keys, states)]
        return held

    def _group_rates_held(self) -> list[tuple[str, Parameter]]:
        """The groups' rates as MindSpore's optimizer holds them.  All
        constant: ``learning_rate_group_i`` for a group's own, the optimizer's
        ``learning_rate`` for the others.  Any per-step (a list or a
        schedule, the groups' or the optimizer's): one cell per group, named
        after the group's first parameter, ``learning_rate.K.learning_rate``
        holding its number or list (a schedule holds none)."""
        dynamic = not isinstance(self._rate, float) or bool(self._rate_columns())
        cached = self.__dict__.setdefault("_irc_group_rates", {})
        held: list[tuple[str, Parameter]] = []
        for i, (lr, start) in enumerate(zip(self._group_rates, self._group_starts)):
            if not dynamic and lr is None:
                key, value = "learning_rate", None
            else:
                key = f"learning_rate.{start}.learning_rate" if dynamic else f"learning_rate_group_{i}"
                value = self._rate if lr is None else lr
            if isinstance(value, LearningRateSchedule) or any(k == key for k, _ in held):
                continue
            if value is None:
                held.append((key, self.learning_rate))
                continue
            if key not in cached:
                cached[key] = Parameter(Tensor(np.asarray(value, np.float32)), name=self._held_name(key),
                                        requires_grad=False)
            held.append((key, cached[key]))
        return held

    def _momentum_parameter(self) -> Parameter:
        """MindSpore's ``momentum`` Parameter, as its checkpoints hold it
        (irc's update reads the number it was made with)."""
        momentum = self.__dict__.get("_irc_momentum")
        if momentum is None:
            momentum = Parameter(Tensor(np.float32(self.hyper_attrs()["momentum"])),
                                 name=self._held_name("momentum"), requires_grad=False)
            object.__setattr__(self, "_irc_momentum", momentum)
        return momentum

    def state_parameters(self) -> list[Parameter]:
        """The state made so far (moments, Adam's powers), as Parameters:
        named, as MindSpore's, after the parameter's name when the
        optimizer was made (``moment1.fc1.weight`` under ``net.fc1.weight``).
        A user's optimizer: the Parameters it holds itself (its cloned
        moments, its powers) and global_step."""
        if not self.builtin_state:
            own = [p for v in self.__dict__.values() if isinstance(v, ParameterTuple) for p in v]
            own += [p for p in self._params.values() if p is not None]
            seen = {id(p) for p in self.param_list}
            found = []
            for p in own:
                if id(p) not in seen:
                    seen.add(id(p))
                    found.append(p)
            return found + [self.global_step]
        states = [p for ps in self.__dict__.get("_irc_states", {}).values() for p in ps]
        return states + list(self.__dict__.get("_irc_powers", ()))

    def make_state(self) -> list[Parameter]:
        """Every state Parameter made now (a checkpoint of a step not yet
        run names them all); the state_parameters."""
        if not self.builtin_state:
            return self.state_parameters()
        for param in self.param_list:
            self.state_of(param)
        self._power_parameters()
        return self.state_parameters()

    def _power_parameters(self) -> list[Parameter]:
        """The bias-correction powers the kind holds (Adam's beta1_power and
        beta2_power, AdaMax's beta1_power), made on first use."""
        powers = self.__dict__.get("_irc_powers")
        if powers is None:
            powers = [Parameter(np.ones((), np.float32), name=self._held_name(f"{beta}_power"),
                                requires_grad=False) for beta in OPTIMIZER_SPECS[self.kind].powers]
            object.__setattr__(self, "_irc_powers", powers)
        return powers

    def _powers(self) -> list:
        """The bias-correction powers, advanced once per step."""
        powers = self._power_parameters()
        if len(powers) == 2:
            new = _dispatch.apply("train.AdamPowers", powers, {"beta1": self.beta1, "beta2": self.beta2})
        else:
            from .. import ops
            new = [ops.mul(p, Tensor(np.float32(getattr(self, beta))))
                   for p, beta in zip(powers, OPTIMIZER_SPECS[self.kind].powers)]
        for p, v in zip(powers, new):
            _dispatch.assign(p, v)
        return new

    def construct(self, gradients):
        """``optimizer(grads)``: one update of every parameter, the same
        ``train.*Update`` ops ``Model.train`` emits (inside a jitted
        function, graph nodes; eagerly, at once)."""
        grads = tuple(gradients) if isinstance(gradients, (tuple, list)) else (gradients,)
        if len(grads) != len(self.param_list):
            raise UserValueError(f"{type(self).__name__} has {len(self.param_list)} parameters "
                                 f"but got {len(grads)} gradients", where=user_frame(),
                                 hint="take the gradients with weights=optimizer.parameters")
        lr = _dispatch.learning_rate(self)      # a row of columns where groups have rates of their own
        columns = bool(self._rate_columns())
        powers = self._powers()
        for param, grad, decay, own_lr in zip(self.param_list, grads, self.weight_decays, self.param_lrs):
            state = self.state_of(param)
            attrs = update_attrs(self.kind, self.hyper_attrs(), decay, self.loss_scale)
            if own_lr is None:
                rate = lr[0] if columns else lr
            elif isinstance(own_lr, float):     # a group's own constant rate
                rate = Tensor(np.float32(own_lr))
            else:                               # a group's own per-step rates: its column
                rate = lr[self._rate_column_of(own_lr)]
            new = _dispatch.apply(OPTIMIZER_SPECS[self.kind].update_op, [param, grad, *state, rate, *powers],
                                  attrs)
            for target, value in zip([param, *state], new):
                _dispatch.assign(target, value)
        from .. import ops
        ops.assign_add(self.global_step, self.global_step_increase_tensor)    # as MindSpore's construct
        return True


class Momentum(Optimizer):
    """``accum = momentum * accum + grad; param -= lr * accum`` (Nesterov:
    ``param -= lr * (grad + momentum * accum)``)."""

    kind = "Momentum"

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
                 use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _check_number("Momentum", "momentum", momentum)
        self.use_nesterov = bool(use_nesterov)

    def hyper_attrs(self) -> dict:
        return {"momentum": self.momentum, "use_nesterov": self.use_nesterov}


class SGD(Optimizer):
    kind = "SGD"

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _check_number("SGD", "momentum", momentum)
        self.dampening = _check_number("SGD", "dampening", dampening)
        self.nesterov = bool(nesterov)
        if self.nesterov and (self.momentum <= 0 or self.dampening != 0):
            raise UserError("SGD: nesterov needs momentum > 0 and dampening = 0",
                            where=self.source)

    def hyper_attrs(self) -> dict:
        return {"momentum": self.momentum, "dampening": self.dampening,
                "use_nesterov": self.nesterov}


class Adam(Optimizer):
    kind = "Adam"

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1, self.beta2, self.eps = _moment_rates(self, beta1, beta2, eps)
        self.use_nesterov = bool(use_nesterov)

    def hyper_attrs(self) -> dict:
        return {"beta1": self.beta1, "beta2": self.beta2, "eps": self.eps,
                "use_nesterov": self.use_nesterov}



class AdamWeightDecay(Optimizer):
    """``AdamWeightDecay(params, learning_rate=1e-3, beta1=0.9, beta2=0.999,
    eps=1e-6, weight_decay=0.0)``: MindSpore's kernel (no bias correction;
    the decay is added to the update, not to the gradient).  Its state is
    ``adam_m.<param>`` and ``adam_v.<param>``, as MindSpore names it."""

    kind = "AdamWeightDecay"

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = _moment_rates(self, beta1, beta2, eps)

    def hyper_attrs(self) -> dict:
        return {"beta1": self.beta1, "beta2": self.beta2, "eps": self.eps}


class RMSProp(Optimizer):
    """``RMSProp(params, learning_rate=0.1, decay=0.9, momentum=0.0,
    epsilon=1e-10, use_locking=False, centered=False, loss_scale=1.0,
    weight_decay=0.0)``: MindSpore's ApplyRMSProp (centered:
    ApplyCenteredRMSProp).  Its state is ``mean_square.<param>`` (starting
    at ones, as MindSpore's), ``moment.<param>`` and, centered,
    ``mean_grad.<param>``."""

    def __init__(self, params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.decay = _check_number("RMSProp", "decay", decay)
        self.momentum = _check_number("RMSProp", "momentum", momentum)
        self.epsilon = _check_number("RMSProp", "epsilon", epsilon, open_lo=True)
        self.centered = _check_flag("RMSProp", "centered", centered)
        _check_flag("RMSProp", "use_locking", use_locking)
        self.kind = "CenteredRMSProp" if self.centered else "RMSProp"

    def hyper_attrs(self) -> dict:
        return {"decay": self.decay, "momentum": self.momentum, "eps": self.epsilon,
                "centered": self.centered}


class Adagrad(Optimizer):
    """``Adagrad(params, accum=0.1, learning_rate=0.001, update_slots=True,
    loss_scale=1.0, weight_decay=0.0)``: MindSpore's ApplyAdagrad, its state
    ``accum.<param>`` starting at ``accum``."""

    kind = "Adagrad"

    def __init__(self, params, accum=0.1, learning_rate=0.001, update_slots=True, loss_scale=1.0,
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.initial_accum = _check_number("Adagrad", "accum", accum)
        self.update_slots = _check_flag("Adagrad", "update_slots", update_slots)

    def hyper_attrs(self) -> dict:
        return {"accum": self.initial_accum, "update_slots": self.update_slots}


class Adadelta(Optimizer):
    """``Adadelta(params, learning_rate=1.0, rho=0.9, epsilon=1e-6, loss_scale=1.0,
    weight_decay=0.0)``: MindSpore's ApplyAdadelta, its state ``accum.<param>``
    and ``accum_update.<param>``."""

    kind = "Adadelta"

    def __init__(self, params, learning_rate=1.0, rho=0.9, epsilon=1e-6, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.rho = _check_number("Adadelta", "rho", rho)
        if self.rho > 1.0:
            raise UserError(f"Adadelta: rho must be in [0.0, 1.0], got {rho}", where=self.source)
        self.epsilon = _check_number("Adadelta", "epsilon", epsilon)

    def hyper_attrs(self) -> dict:
        return {"rho": self.rho, "eps": self.epsilon}


class FTRL(Optimizer):
    """``FTRL(params, initial_accum=0.1, learning_rate=0.001, lr_power=-0.5,
    l1=0.0, l2=0.0, use_locking=False, loss_scale=1.0, weight_decay=0.0)``:
    MindSpore's ApplyFtrl (the model zoo's Wide&Deep trains its wide part
    with it), its state ``moments.<param>`` starting at ``initial_accum`` and
    ``linear.<param>``; a fixed rate only, weight decay on every parameter,
    as MindSpore's."""

    kind = "FTRL"

    def __init__(self, params, initial_accum=0.1, learning_rate=0.001, lr_power=-0.5, l1=0.0, l2=0.0,
                 use_locking=False, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if self.dynamic_lr or self.is_group_lr:
            raise UserValueError(f"For 'FTRL', dynamic learning rate and group learning rate are "
                                 f"currently not supported in FTRL, they should all be false, but got "
                                 f"dynamic learning rate {self.dynamic_lr} and group learning rate "
                                 f"{self.is_group_lr}.", where=self.source)
        for name, value in (("initial_accum", initial_accum), ("learning_rate", learning_rate),
                            ("lr_power", lr_power), ("l1", l1), ("l2", l2)):
            if not isinstance(value, float):
                raise UserTypeError(f"For 'FTRL', the type of '{name}' should be 'float', but got "
                                    f"type '{type(value).__name__}'.", where=self.source)
        self.initial_accum = _check_number("FTRL", "initial_accum", initial_accum)
        if lr_power > 0.0:
            raise UserValueError(f"For 'FTRL', the argument 'lr_power' must <= 0.0, but got {lr_power}.",
                                 where=self.source)
        self.lr_power = float(lr_power)
        self.l1 = _check_number("FTRL", "l1", l1)
        self.l2 = _check_number("FTRL", "l2", l2)
        self.lr = float(learning_rate)
        _check_flag("FTRL", "use_locking", use_locking)
        if not self.is_group:      # MindSpore's FTRL decays every parameter
            self.weight_decays = [float(weight_decay)] * len(self.param_list)
            self.decay_flags = (True,) * len(self.param_list)

    def hyper_attrs(self) -> dict:
        return {"initial_accum": self.initial_accum, "l1": self.l1, "l2": self.l2,
                "lr_power": self.lr_power}


class LazyAdam(Adam):
    """MindSpore's LazyAdam: on dense gradients (irc's), Adam itself, with
    Adam's state names."""


class AdaMax(Optimizer):
    """``AdaMax(params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-8,
    weight_decay=0.0, loss_scale=1.0)``: MindSpore's ApplyAdaMax, its state
    ``beta1_power`` and ``moment1.<param>``, ``moment2.<param>``."""

    kind = "AdaMax"

    def __init__(self, params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-08, weight_decay=0.0,
                 loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1, self.beta2, self.eps = _moment_rates(self, beta1, beta2, eps)

    def hyper_attrs(self) -> dict:
        return {"beta1": self.beta1, "beta2": self.beta2, "eps": self.eps}


class ProximalAdagrad(Optimizer):
    """``ProximalAdagrad(params, accum=0.1, learning_rate=0.001, l1=0.0, l2=0.0,
    use_locking=False, loss_scale=1.0, weight_decay=0.0)``: MindSpore's
    ApplyProximalAdagrad, its state ``accum.<param>`` starting at ``accum``."""

    kind = "ProximalAdagrad"

    def __init__(self, params, accum=0.1, learning_rate=0.001, l1=0.0, l2=0.0, use_locking=False,
                 loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.initial_accum = _check_number("ProximalAdagrad", "accum", accum)
        self.l1 = _check_number("ProximalAdagrad", "l1", l1)
        self.l2 = _check_number("ProximalAdagrad", "l2", l2)
        _check_flag("ProximalAdagrad", "use_locking", use_locking)

    def hyper_attrs(self) -> dict:
        return {"accum": self.initial_accum, "l1": self.l1, "l2": self.l2}


class Rprop(Optimizer):
    """``Rprop(params, learning_rate=0.1, etas=(0.5, 1.2), step_sizes=(1e-6, 50.0),
    weight_decay=0.0)``: MindSpore's Rprop, its state ``prev.<param>`` and
    ``step_size.<param>`` (each step size starts at the learning rate)."""

    kind = "Rprop"

    def __init__(self, params, learning_rate=0.1, etas=(0.5, 1.2), step_sizes=(1e-6, 50.0), weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        for name, pair in (("etas", etas), ("step_sizes", step_sizes)):
            if not isinstance(pair, tuple):
                raise UserTypeError(f"For Rprop, {name} must be a tuple, but got {type(pair)}.", where=self.source)
            if len(pair) != 2:
                raise UserValueError(f"For Rprop, {name} must be a tuple with the size of 2, but got "
                                     f"{len(pair)}.", where=self.source)
        self.etaminus, self.etaplus = (_check_number("Rprop", n, v, open_lo=True)
                                       for n, v in zip(("etaminus", "etaplus"), etas))
        self.step_size_min, self.step_size_max = (_check_number("Rprop", n, v)
                                                  for n, v in zip(("min_step_sizes", "max_step_sizes"), step_sizes))
        if self.step_size_min > self.step_size_max:
            raise UserValueError(f"For Rprop, maximal step size should not be less than minimal step size, "
                                 f"but got {step_sizes[0]} > {step_sizes[1]}.", where=self.source)
        if self.etaminus >= 1.0:
            raise UserValueError(f"For Rprop, etaminus must be in (0.0, 1.0), but got {etas[0]}.", where=self.source)
        if self.etaplus <= 1.0:
            raise UserValueError(f"For Rprop, etaplus must be greater than 1.0, but got etaplus {etas[1]}.",
                                 where=self.source)

    def hyper_attrs(self) -> dict:
        return {"etaminus": self.etaminus, "etaplus": self.etaplus, "step_size_min": self.step_size_min,
                "step_size_max": self.step_size_max}


class Lamb(Optimizer):
    """Importable (the model zoo's seq2seq imports it and trains with Adam);
    constructing one is refused: irc has no LAMB update, and MindSpore 2.10
    has no CPU kernel for it either ("Unsupported op [Lamb] on CPU")."""

    def __init__(self, params, learning_rate, *args, **kwargs):
        raise UnsupportedError("nn.Lamb is not supported by irc yet (MindSpore 2.10 cannot run it "
                               "on the CPU either)", where=user_frame(),
                               hint="nn.AdamWeightDecay is the closest update irc has")
