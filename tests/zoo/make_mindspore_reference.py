"""Write mindspore_reference.json: each zoo net's parameters (names, shapes,
sums) and one forward pass in evaluation mode, computed by real MindSpore.

Run with a Python that has MindSpore (not irc), from any folder:
    python tests/zoo/make_mindspore_reference.py
(made with MindSpore 2.10.0, CPU).  The tests never import MindSpore; they
compare irc with this file.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mindspore as ms  # noqa: E402

import zoo_nets  # noqa: E402


def main() -> None:
    ms.set_context(device_target="CPU")
    out = {"mindspore": ms.__version__, "input_shape": list(zoo_nets.INPUT_SHAPE), "nets": {}}
    for name in zoo_nets.NETS:
        net = zoo_nets.build(name)
        logits = net(ms.Tensor(zoo_nets.inputs())).asnumpy()
        out["nets"][name] = {"parameters": zoo_nets.parameter_digest(net),
                             "logits": logits.tolist()}
        print(name, logits.shape, float(abs(logits).max()))
    path = os.path.join(zoo_nets.ZOO, "mindspore_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    main()
