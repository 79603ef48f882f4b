"""SPEC S4: the no-LLM quality gate (sub-scores, weights, thresholds, modes)."""
from __future__ import annotations

import math

import pytest

from athena_core.mtm.quality_gate import QUALITY_THRESHOLDS, QUALITY_WEIGHTS, cognitive_depth_score, coherence_score, completeness_score, content_tokens, engagement_score, passes, relevance_score, score_segment, threshold_for, weighted_overall
from athena_core.models.chains import QualityScores
from athena_core.providers.llm import TranscriptLine


def line(role: str, content: str, type_: str = "message") -> TranscriptLine:
    return TranscriptLine(role=role, type=type_, content=content)


GREETING = [
    line("user", "hi"),
    line("agent", "hello! how can I help?"),
    line("user", "thanks bye"),
]
GREETING_FORMATION = ("The user greeted the agent and said goodbye.", "greeting", [])

REDIS_QA = [
    line(
        "user",
        "How should I configure Redis persistence for our Celery broker? I don't want to lose queued "
        "tasks when Redis restarts.",
    ),
    line(
        "agent",
        "Redis offers two persistence modes. RDB writes a point-in-time snapshot every few minutes, so a "
        "crash loses every task queued since the last snapshot. AOF (the append-only file) logs every write; "
        "with appendfsync everysec you lose at most about 1 second of writes, because fsync runs once per "
        "second. For a Celery broker AOF is the safer choice, since losing queued tasks matters more than "
        "restart speed.",
    ),
    line(
        "user",
        "Makes sense. I decided to use AOF with appendfsync everysec for the Celery broker, because losing "
        "one second of tasks is acceptable for us.",
    ),
]
REDIS_FORMATION = (
    "The user asked how to configure Redis persistence for a Celery broker. The agent compared RDB "
    "snapshots with AOF; the user decided on AOF with appendfsync everysec.",
    "Redis persistence for the Celery broker",
    ["Redis", "Celery", "AOF", "RDB"],
)

SUBSCORES = ("coherence", "completeness", "relevance", "engagement", "cognitive_depth")


def test_weights_and_thresholds_match_spec() -> None:
    assert dict(QUALITY_WEIGHTS) == {
        "coherence": 0.3,
        "completeness": 0.25,
        "relevance": 0.25,
        "engagement": 0.1,
        "cognitive_depth": 0.1,
    }
    assert math.isclose(sum(QUALITY_WEIGHTS.values()), 1.0)
    assert dict(QUALITY_THRESHOLDS) == {"permissive": 0.4, "balanced": 0.5, "strict": 0.7}


def test_greeting_fails_balanced() -> None:
    q = score_segment(GREETING, *GREETING_FORMATION, mode="balanced")
    assert not q.passed
    assert q.overall < 0.4  # fails even permissive
    assert q.coherence == 0.0 and q.relevance == 0.0 and q.cognitive_depth == 0.0


def test_real_qa_passes_balanced_and_strict() -> None:
    q = score_segment(REDIS_QA, *REDIS_FORMATION, mode="balanced")
    assert q.passed, q
    assert q.overall >= 0.7
    assert score_segment(REDIS_QA, *REDIS_FORMATION, mode="strict").passed
    for name in SUBSCORES:
        assert getattr(q, name) > getattr(score_segment(GREETING, *GREETING_FORMATION), name)


@pytest.mark.parametrize(
    "segment",
    [GREETING, REDIS_QA, [], [line("user", "")], [line("system", "x" * 5000, "observation")]],
)
def test_each_subscore_in_unit_interval(segment: list[TranscriptLine]) -> None:
    q = score_segment(segment, "some summary text", "topic", ["Entity"])
    for name in (*SUBSCORES, "overall"):
        assert 0.0 <= getattr(q, name) <= 1.0, name


def test_overall_is_the_weighted_sum() -> None:
    q = score_segment(REDIS_QA, *REDIS_FORMATION)
    assert q.overall == pytest.approx(sum(QUALITY_WEIGHTS[n] * getattr(q, n) for n in SUBSCORES), abs=1e-6)
    assert weighted_overall(q) == pytest.approx(q.overall, abs=1e-6)


def test_weighted_overall_boundary_is_exact() -> None:
    half = dict.fromkeys(SUBSCORES, 0.5)
    assert weighted_overall(half) == 0.5
    assert passes(weighted_overall(half), "balanced")
    with pytest.raises(ValueError, match="cognitive_depth"):
        weighted_overall({k: 1.0 for k in SUBSCORES[:-1]})


@pytest.mark.parametrize(
    ("overall", "mode", "expected"),
    [
        (0.5, "balanced", True),
        (0.4999, "balanced", False),
        (0.4, "permissive", True),
        (0.3999, "permissive", False),
        (0.7, "strict", True),
        (0.6999, "strict", False),
        (0.5, "Balanced", True),
    ],
)
def test_pass_thresholds(overall: float, mode: str, expected: bool) -> None:
    assert passes(overall, mode) is expected


def test_unknown_mode_names_valid_modes() -> None:
    with pytest.raises(ValueError, match="balanced.*permissive.*strict"):
        passes(0.9, "lenient")
    with pytest.raises(ValueError, match="lenient"):
        score_segment(REDIS_QA, *REDIS_FORMATION, mode="lenient")
    assert threshold_for("strict") == 0.7
    assert threshold_for("custom", thresholds={"custom": 0.2}) == 0.2


def test_mode_changes_verdict_not_scores() -> None:
    segment = [
        line("user", "What port does Postgres use?"),
        line("agent", "Postgres listens on port 5432 by default."),
    ]
    formation = ("Postgres listens on port 5432.", "Postgres port", ["Postgres"])
    scores = {m: score_segment(segment, *formation, mode=m) for m in QUALITY_THRESHOLDS}
    assert len({s.overall for s in scores.values()}) == 1
    for mode, s in scores.items():
        assert s.mode == mode
        assert s.passed is (s.overall >= QUALITY_THRESHOLDS[mode])


def test_quality_scores_model_validates() -> None:
    with pytest.raises(ValueError):
        QualityScores(
            coherence=1.5, completeness=0, relevance=0, engagement=0, cognitive_depth=0,
            overall=0, passed=False, mode="balanced",
        )


# ----------------------------------------------------------------------------- sub-score signals


def test_content_tokens_drop_small_talk_and_strip_plurals() -> None:
    assert content_tokens("hi! thanks, bye") == []
    assert content_tokens("Queued tasks") == ["queued", "task"]
    assert content_tokens("class access") == ["class", "access"]


def test_coherence_rewards_shared_vocabulary() -> None:
    question = line("user", "Redis AOF persistence settings?")
    on_topic = [question, line("agent", "Redis AOF persistence uses appendfsync.")]
    drifting = [question, line("agent", "Bananas grow in tropical climates.")]
    assert coherence_score(on_topic, "Redis persistence") > coherence_score(drifting, "Redis persistence")
    assert coherence_score([], "x") == 0.0


def test_completeness_needs_an_answer() -> None:
    question = line("user", "How do I rotate Postgres logs?")
    answered = [question, line("agent", "Set log_rotation_age and log_rotation_size in postgresql.conf.")]
    unanswered = [question]
    empty_reply = [question, line("agent", "ok!")]
    assert completeness_score(answered) > completeness_score(empty_reply) > completeness_score(unanswered)
    assert completeness_score(unanswered) < 0.5
    assert completeness_score([]) == 0.0


def test_an_informing_statement_is_answered_by_an_acknowledgement() -> None:
    """A user who tells something asked nothing: "Great choice." answers it; "thanks" + "ok!" stays unanswered."""
    told = line("user", "I switched from VS Code to Neovim last month.")
    assert completeness_score([told, line("agent", "Great choice.")]) > 0.75
    thanks = line("user", "thanks, that works")
    assert completeness_score([thanks, line("agent", "Great choice.")]) < 0.5
    asked = line("user", "Which editor should I switch to?")
    assert completeness_score([asked, line("agent", "Great choice.")]) < 0.5
    told_and_asked = line("user", "I keep tripping over Kafka rebalancing, is there a sane mental model for it?")
    half = completeness_score([told_and_asked, line("agent", "Great question.")])
    full = completeness_score([told_and_asked, line("agent", "Think of the group coordinator assigning partitions.")])
    assert completeness_score([asked, line("agent", "Great choice.")]) < half < full


@pytest.mark.parametrize(
    ("user_text", "reply", "kept"),
    [
        ("I switched from VS Code to Neovim last month.", "Great choice.", True),
        ("I'd love to learn about spaced repetition for studying.", "Happy to explain.", True),
        ("We use pgx with PostgreSQL, and pgxpool settings are a struggle.", "Happy to help with that.", True),
        ("On a different note, I've been nerding out on category theory lately, any book you would suggest?",
         "Happy to explain.", True),
        ("I'm based in Osaka.", "Got it.", True),
        ("thanks, that works", "Great choice.", False),
        ("I'll give it a shot", "Got it.", False),
        ("That makes sense", "Got it.", False),
        ("ok cool", "Happy to help with that.", False),
        ("hi there", "Hello! How can I help?", False),
    ],
)
def test_a_short_exchange_carrying_a_user_fact_passes_the_gate(user_text: str, reply: str, kept: bool) -> None:
    """Imported history is full of one-line acknowledgements; the facts in front of them must make a chain."""
    from athena_core.providers.offline_llm import OfflineLLM

    segment = [line("user", user_text), line("agent", reply)]
    formation = OfflineLLM().form_chain(segment)
    verdict = score_segment(segment, formation.summary, formation.topic, formation.entities)
    assert verdict.passed is kept, verdict


def test_relevance_penalises_an_unrelated_summary() -> None:
    good = relevance_score(REDIS_QA, *REDIS_FORMATION)
    bad = relevance_score(REDIS_QA, "The user planned a hiking trip to the Alps.", "hiking trip", ["Alps"])
    assert good > 0.6 > bad
    assert relevance_score(REDIS_QA, "", "", []) == 0.0


def test_engagement_grows_with_user_participation() -> None:
    one_word = [line("user", "redis?"), line("agent", "Redis is an in-memory data store.")]
    assert engagement_score(REDIS_QA) > engagement_score(one_word) > 0.0
    assert engagement_score([line("system", "build finished", "observation")]) == 0.0


def test_cognitive_depth_counts_reasoning_signals() -> None:
    flat = [line("user", "Redis is a database."), line("agent", "Yes, Redis is a database.")]
    reasoned = [
        line("user", "Why pick Kafka rather than RabbitMQ?"),
        line("agent", "thinking about throughput", "thought"),
        line("agent", "Kafka is better for 100k msgs/s because it batches; therefore we decided on Kafka."),
    ]
    assert cognitive_depth_score(flat) == 0.0
    assert cognitive_depth_score(reasoned, ["Kafka", "RabbitMQ"]) == pytest.approx(1.0)
    assert cognitive_depth_score(reasoned) < cognitive_depth_score(reasoned, ["Kafka"])
