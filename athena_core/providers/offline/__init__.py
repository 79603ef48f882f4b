"""The offline provider's parts, one stage each: `transcript` (sentences and terms), `summary` (TextRank),
`keyphrases` (topic and subtopics), `entities`, `importance`. The provider itself is
`providers/offline_llm.py`."""
