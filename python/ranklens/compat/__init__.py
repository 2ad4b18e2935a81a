"""Drop-in replacements for other evaluation libraries, backed by ranklens.

Import the one you need; nothing is imported eagerly::

    from ranklens.compat import pytrec_eval  # instead of: import pytrec_eval
    from ranklens.compat import autorag      # AutoRAG's retrieval metrics
    from ranklens.compat import axion        # Axion's retrieval metrics
    from ranklens.compat import sklearn      # ndcg_score, dcg_score
    from ranklens.compat import torchmetrics # torchmetrics' retrieval metrics, no torch needed
    from ranklens.compat import ir_measures  # ir_measures.install(): ranklens first in
                                             # ir_measures' (and PyTerrier's) pipeline
"""
