"""MTM: topic segmentation, the quality gate and chain merging (SPEC S4)."""
