"""Pure scoring of retrieval results against LoCoMo evidence (SPEC S9 "Quality"), no LLM, no I/O.

A *result* is one ranked item a system returned: its text (what the caller actually reads) and the
turn ids it stands for (a chain → its events' turn ids; a raw-turn baseline → that one turn).

Metrics per question:

- ``turn_recall@k`` / ``session_recall@k``: share of the question's evidence turns (sessions) covered by
  the turn ids of the first k results.
- ``*@<B>tok``: the same over the results packed in rank order into a budget of B tokens of returned
  text; the result that does not fit is cut to what remains (its first words) and packing stops. A cut
  result still counts for turn/session recall (part of it was returned).
- ``answer_recall@<B>tok`` / ``answer_recall@k``: share of the gold answer's normalised content words
  present in the returned text (only the text actually returned, after cutting): a chain is credited only
  for what its summary says, not for the turns it was formed from.

Turn ids of a result are the turns it stands for: a raw turn (baselines), an event (Athena), or the
evidence turns a graph fact cites (SPEC S9: a fact counts for the answer words its statement says and for
the evidence turns it cites). A chain summary returns no turn verbatim, so it credits no evidence turn.
- ``returned_tokens@k``: tokens of the first k results' text.

Tokens: ``approx_tokens(text) = ceil(whitespace words × 4/3)`` (the usual ~0.75 English words per BPE
token); cutting to B tokens keeps the first ``floor(B × 3/4)`` words, so a cut text never exceeds B.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from athena_core.text.stemming import strip_plural
from athena_core.text.stopwords import ANSWER_STOPWORDS
from athena_core.text.tokens import word_tokens

from athena_core.retrieval.budget import approx_tokens  # the service packs by the same count

KS = (1, 5, 10)
BUDGETS = (500, 1000, 2000)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
MAIN_CATEGORIES = (1, 2, 3, 4)  # "overall"; category 5 is reported on its own


@dataclass(frozen=True)
class Result:
    text: str
    turn_ids: tuple[str, ...] = ()
    score: float | None = None
    source_id: str | None = None
    kind: str | None = None  # Athena: chain | event | fact
    retrievers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    key: str  # "<sample_id>#<qa index>"
    category: int
    evidence: tuple[str, ...]  # turn ids "D3:14"
    answer: str = ""
    question: str = ""
    conversation: str = ""

    @property
    def evidence_sessions(self) -> set[str]:
        return {session_of(t) for t in self.evidence}


def session_of(turn_id: str) -> str:
    """"D3:14" → "3"."""
    return turn_id.split(":", 1)[0].lstrip("D")


# ------------------------------------------------------------------------------------------ tokens


def cut_to_tokens(text: str, budget: int) -> str:
    """The first words of `text` that fit in `budget` approximate tokens."""
    if budget <= 0:
        return ""
    if approx_tokens(text) <= budget:
        return text
    return " ".join(text.split()[: (budget * 3) // 4])


@dataclass
class Packed:
    texts: list[str] = field(default_factory=list)  # what was returned, in rank order (last may be cut)
    results: list[Result] = field(default_factory=list)  # the results that contributed text
    tokens: int = 0
    cut: bool = False


def pack(results: Iterable[Result], budget: int) -> Packed:
    """Pack results in rank order into `budget` tokens; the first that does not fit is cut, then stop."""
    packed = Packed()
    for result in results:
        remaining = budget - packed.tokens
        if remaining <= 0:
            break
        size = approx_tokens(result.text)
        if size <= remaining:
            packed.texts.append(result.text)
            packed.results.append(result)
            packed.tokens += size
            continue
        piece = cut_to_tokens(result.text, remaining)
        if piece:
            packed.texts.append(piece)
            packed.results.append(result)
            packed.tokens += approx_tokens(piece)
        packed.cut = True
        break
    return packed


# ---------------------------------------------------------------------------------------- recall


def turn_recall(evidence: Iterable[str], results: Iterable[Result]) -> float:
    ev = set(evidence)
    if not ev:
        return 0.0
    found = {t for r in results for t in r.turn_ids}
    return len(ev & found) / len(ev)


def session_recall(evidence: Iterable[str], results: Iterable[Result]) -> float:
    ev = {session_of(t) for t in evidence}
    if not ev:
        return 0.0
    found = {session_of(t) for r in results for t in r.turn_ids}
    return len(ev & found) / len(ev)


def content_words(text: str) -> set[str]:
    """Lower-cased alphanumeric words minus stop words, with a light plural strip ("hikes" → "hike")."""
    return {strip_plural(w) for w in word_tokens(str(text).lower().replace("'s ", " ")) if w not in ANSWER_STOPWORDS}


def answer_word_recall(answer: str, returned_texts: Iterable[str]) -> float | None:
    """Share of the answer's content words present in the returned text; None if the answer has none."""
    gold = content_words(answer)
    if not gold:
        return None
    present = set()
    for text in returned_texts:
        present |= content_words(text)
    return len(gold & present) / len(gold)


def words_only_facts_say(answer: str, results: Iterable[Result]) -> set[str]:
    """The gold answer's content words that a fact result's text says and no other result's text does."""
    gold = content_words(answer)
    said_by_facts: set[str] = set()
    said_by_others: set[str] = set()
    for r in results:
        (said_by_facts if r.kind == "fact" else said_by_others).update(content_words(r.text) & gold)
    return said_by_facts - said_by_others


# ------------------------------------------------------------------------------------- per question


def score_question(question: Question, results: list[Result],
                   ks: tuple[int, ...] = KS, budgets: tuple[int, ...] = BUDGETS) -> dict[str, float | None]:
    """Every metric of one question for one system's ranked results."""
    out: dict[str, float | None] = {}
    for k in ks or ():
        top = results[:k]
        out[f"turn_recall@{k}"] = turn_recall(question.evidence, top)
        out[f"session_recall@{k}"] = session_recall(question.evidence, top)
    for budget in budgets:
        packed = pack(results, budget)
        out[f"turn_recall@{budget}tok"] = turn_recall(question.evidence, packed.results)
        out[f"session_recall@{budget}tok"] = session_recall(question.evidence, packed.results)
        out[f"answer_recall@{budget}tok"] = answer_word_recall(question.answer, packed.texts)
    if not ks:
        return out
    kmax = max(ks)
    out[f"answer_recall@{kmax}"] = answer_word_recall(question.answer, [r.text for r in results[:kmax]])
    out[f"returned_tokens@{kmax}"] = float(sum(approx_tokens(r.text) for r in results[:kmax]))
    return out


def score_question_by_budget(question: Question, by_budget: dict[int, list[Result]],
                             ks: tuple[int, ...] = KS) -> dict[str, float | None]:
    """Every metric when a system answers each budget with its own call (Athena's SearchMemory with
    `max_tokens`): budget metrics from that budget's results, rank metrics from the largest budget's."""
    largest = by_budget[max(by_budget)]
    out = {k: v for k, v in score_question(question, largest, ks, ()).items()}
    for budget, results in by_budget.items():
        out.update(score_question(question, results, (), (budget,)))
    return {name: out[name] for name in metric_names(ks, tuple(sorted(by_budget)))}


def metric_names(ks: tuple[int, ...] = KS, budgets: tuple[int, ...] = BUDGETS) -> list[str]:
    names = [f"turn_recall@{k}" for k in ks] + [f"session_recall@{k}" for k in ks]
    names += [f"turn_recall@{b}tok" for b in budgets] + [f"session_recall@{b}tok" for b in budgets]
    names += [f"answer_recall@{b}tok" for b in budgets] + [f"answer_recall@{max(ks)}", f"returned_tokens@{max(ks)}"]
    return names


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def aggregate(scored: list[tuple[int, dict[str, float | None]]]) -> dict[str, dict]:
    """(category, metrics) per question → {"1": {...}, …, "5": {...}, "overall": {... over 1–4}}.

    Each group holds `n` (questions) and the mean of every metric over the questions where it is defined
    (answer recall is undefined when the gold answer has no content word).
    """
    groups: dict[str, list[dict]] = defaultdict(list)
    for category, metrics in scored:
        groups[str(category)].append(metrics)
        if category in MAIN_CATEGORIES:
            groups["overall"].append(metrics)
    out: dict[str, dict] = {}
    for name in [str(c) for c in sorted(CATEGORY_NAMES)] + ["overall"]:
        rows = groups.get(name, [])
        summary: dict = {"n": len(rows)}
        keys = list(rows[0]) if rows else []
        for key in keys:
            summary[key] = _mean([r[key] for r in rows if r.get(key) is not None])
        out[name] = summary
    return out
