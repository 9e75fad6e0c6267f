"""Graph -> Graph passes and the pipeline that names, times, verifies and dumps them.

Importing this package registers every pass in `PASSES` under its kebab-case name.
"""
from .pipeline import (OPTIMIZE_PIPELINE, PASSES, PassError, PassRecord, register_pass,
                       run_pipeline, timed)
from .simplify import simplify
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .layout import fold_transposes
from .all_reduce_combiner import all_reduce_combiner
from .histogram_merge import merge_histograms
from .dot_broadcast import dot_of_broadcast_pass
from .expand import LOWERING_PIPELINE, expand_short_dots
from .half import half_as_float32

__all__ = ["OPTIMIZE_PIPELINE", "PASSES", "PassError", "PassRecord", "register_pass",
           "run_pipeline", "timed", "simplify", "eliminate_common_subexpressions",
           "eliminate_dead_code", "fold_transposes", "all_reduce_combiner", "merge_histograms",
           "LOWERING_PIPELINE", "expand_short_dots", "half_as_float32",
           "dot_of_broadcast_pass"]
