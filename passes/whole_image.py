"""whole-image: the pipeline as it would be with its image unsliced.

Seed 004's coverage check compares what a rank read (its patch) with the
whole image at the same position of the same epoch.  This pass turns a
pipeline's ``vision.SlicePatches`` into a 1x1 one (the whole image) feeding
the column the rank projected, and re-infers the types downstream.  Node
names stay the same, so every random op draws the same numbers as in the
sliced pipeline.  A pipeline without SlicePatches, or whose SlicePatches
feeds more than one patch, is left as it is.
"""
from __future__ import annotations

from .manager import register


@register("whole-image", "replace SlicePatches by the whole image (the ranks' coverage check)")
def run(module, ctx) -> bool:
    changed = False
    for graph in module.graphs.values():
        changed |= _unslice(graph)
    return changed


def patch_slicer(graph):
    """(SlicePatches node, the one patch the pipeline uses) or None: what this
    pass unslices, and where the ranks' check reads the grid."""
    slicers = graph.find("vision.SlicePatches")
    if not slicers:
        return None
    used = [v for v in slicers[0].outs if v.uses()]
    return (slicers[0], used[0]) if len(used) == 1 else None


def _unslice(graph) -> bool:
    found = patch_slicer(graph)
    if found is None:
        return False
    slicer, used = found
    whole = graph.add("vision.SlicePatches", graph.operands(slicer),
                      {**slicer.attrs, "num_height": 1, "num_width": 1},
                      names=[f"{slicer.name}.whole"], column=slicer.column, loc=slicer.loc,
                      prov=["whole-image:unsliced"])
    used.replace_all_uses_with(whole.out(0))
    graph.remove(slicer)
    for node in graph.topo_order():
        graph.refresh_types(node)
    return True
