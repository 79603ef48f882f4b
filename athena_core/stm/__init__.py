"""STM: the live, verbatim window of each agent scope (SPEC S3)."""
