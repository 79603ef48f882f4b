"""`athena eval facts`: planted user facts through the real pipeline, scored on the graph it builds.

`phrasings` (how facts are stated, tuning and held-out), `phrasings_fresh` (a fresh held-out set, written
without reading the extractor), `generator` (seeded multi-session users),
`scoring` (precision, recall, weight, initial/current, decoy leakage on a list of graph facts),
`runner` (the pipeline in-process, promotion included, then the graph read and scored).
"""
