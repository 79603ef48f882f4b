"""The shared text package (athena_core/text/): one splitter with a verbatim mode, the tokenizer, the
named variants of stop words, stemmers and name rules."""
from __future__ import annotations

from pydantic import BaseModel

from athena_core.providers.llm import LLMProvider
from athena_core.providers.metered_llm import MeteredLLM
from athena_core.providers.offline_llm import OfflineLLM
from athena_core.text.names import ENTITY_NAMES, SUBJECT_NAMES
from athena_core.text.sentences import split_sentences
from athena_core.text.stemming import stem, strip_plural
from athena_core.text.stopwords import ANSWER_STOPWORDS, SMALL_TALK_STOPWORDS, STOPWORDS
from athena_core.text.tokens import tokens, word_tokens


def test_analysis_mode_folds_quotes_and_splits_lines_verbatim_mode_keeps_the_text() -> None:
    text = "She said \u201cno.\u201d Then left\nfor good. \u05e9\u05dc\u05d5\u05dd. Done!"
    # analysis: the closing quote goes with the break; the Hebrew sentence has no Latin letter, so it is dropped
    assert split_sentences(text) == ['She said "no.', "Then left", "for good.", "Done!"]
    # verbatim: a break only where whitespace follows the punctuation itself; text as written, every script
    assert split_sentences(text, verbatim=True) == [
        "She said \u201cno.\u201d Then left\nfor good.", "\u05e9\u05dc\u05d5\u05dd.", "Done!"]
    assert split_sentences("Upgrade to 1.29 now.", verbatim=True) == ["Upgrade to 1.29 now."]


def test_word_tokens_are_lowercase_ascii_words_and_numbers() -> None:
    assert word_tokens("Don't stop at 3.5, Node.js!") == ["don", "t", "stop", "at", "3", "5", "node", "js"]
    assert [t.text for t in tokens("Maria's node.js app.")] == ["Maria", "node.js", "app"]


def test_the_two_stemmers_are_different_tools() -> None:
    assert stem("migrating") == stem("migration") == "migrat"
    assert strip_plural("tasks") == "task" and strip_plural("class") == "class" and strip_plural("migrating") == "migrating"


def test_the_stop_word_lists_are_named_variants() -> None:
    assert "thanks" in STOPWORDS and "thanks" in SMALL_TALK_STOPWORDS and "thanks" not in ANSWER_STOPWORDS
    assert "morning" in SMALL_TALK_STOPWORDS and "morning" not in STOPWORDS
    assert {"the", "and", "of"} <= STOPWORDS & SMALL_TALK_STOPWORDS & ANSWER_STOPWORDS


def test_name_rules_differ_where_their_callers_need_it() -> None:
    def names(rule, text: str) -> list[str]:
        return [t.text for t in tokens(text) if rule.is_name_word(t)]

    text = "Maria met FYI Web3 OpenShift ACMEIO on Monday at Christmas"
    assert names(ENTITY_NAMES, text) == ["Maria", "Christmas"]
    assert names(SUBJECT_NAMES, text) == ["Maria", "FYI", "Web3", "OpenShift", "ACMEIO"]


class _Reply(BaseModel):
    answer: str


def test_the_llm_port_carries_structured_and_the_wrapper_delegates_it() -> None:
    class Fake:
        name = "fake"

        def form_chain(self, transcript, *, tenant_id=""):  # noqa: ANN001, ANN202
            raise AssertionError

        def same_topic(self, previous, current, *, tenant_id=""):  # noqa: ANN001, ANN202
            raise AssertionError

        def structured(self, purpose, messages, model_cls, *, schema_name, tenant_id="", schema=None):  # noqa: ANN001, ANN202
            return model_cls(answer=f"{purpose}/{schema_name}/{tenant_id}/{messages[0]['content']}")

    metered = MeteredLLM(Fake())
    assert isinstance(metered, LLMProvider) and isinstance(OfflineLLM(), LLMProvider)
    reply = metered.structured("extract", [{"role": "user", "content": "hi"}], _Reply, schema_name="r", tenant_id="t")
    assert reply == _Reply(answer="extract/r/t/hi")
    try:
        MeteredLLM(OfflineLLM()).structured("extract", [], _Reply, schema_name="r")
    except NotImplementedError:
        pass
    else:
        raise AssertionError("the offline provider has no structured output")


def test_tokens_are_read_once_and_each_caller_gets_its_own_list() -> None:
    """A chain formation reads each sentence five times; the tokens are cached, never the list."""
    sentence = "Maria's team moved to node.js in March."
    first = tokens(sentence)
    first.pop()
    second = tokens(sentence)
    assert [t.text for t in second] == ["Maria", "team", "moved", "to", "node.js", "in", "March"]
    assert second[0] is first[0]  # the same immutable Token, not tokenized again
