"""Text primitives shared by every stage: one splitter, one tokenizer, the stop-word lists, the stemmers,
the tool gazetteer and proper-name rules.

Pure and deterministic (no model download, no network), so the offline provider, the quality gate, the
extractor and retrieval give the same answer for the same text on every machine. Where two callers
need different rules, the variants are named here side by side (never silently shared):

- `sentences`: `split_sentences(text)` for analysis (quotes folded, line breaks split, script-less
  parts dropped) and `split_sentences(text, verbatim=True)` for excerpts (the text exactly as written);
- `tokens`: `word_tokens` (lowercase `[a-z0-9]+` words) and `tokens` (words with offsets, as written);
- `stopwords`: `STOPWORDS` (content words, lexical terms), `SMALL_TALK_STOPWORDS` (the quality gate),
  `ANSWER_STOPWORDS` (evaluation's answer-word recall);
- `stemming`: `stem` (light Porter-like step) and `strip_plural` (a plural "s" only);
- `content_words`: `is_content_word`, `content_stems`;
- `gazetteer`: tools, languages and databases as entities;
- `names`: capitalised-word rules for proper names (`ENTITY_NAMES`, `SUBJECT_NAMES`).
"""
