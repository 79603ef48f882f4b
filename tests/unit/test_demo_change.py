"""`make demo` shows a fact that changed over time (issue 14): which GetContext facts it picks."""
from __future__ import annotations

from athena_devtools.demo import changed_fact, render_change


def fact(obj: str, first: str, last: str, *, initial: bool, current: bool, relation: str = "USES",
         nuance: str = "") -> dict:
    return {"edge_id": obj, "subject": "user", "relation": relation, "object": obj, "statement": f"sam uses {obj}",
            "first_valid_at": first, "valid_at": last, "is_initial": initial, "is_current": current,
            "context_nuance": nuance}


def test_a_switch_shows_the_first_the_replaced_and_the_current_value() -> None:
    uses = [fact("go", "2026-11-02", "2026-11-02", initial=True, current=False),
            fact("orm", "2026-11-02", "2026-11-02", initial=False, current=False,
                 nuance="previously: I decided we will use pgx directly instead of an ORM"),
            fact("vs_code", "2026-11-09", "2026-11-09", initial=False, current=False,
                 nuance="previously, switched to Zed: I switched from VS Code to Zed"),
            fact("zed", "2026-11-09", "2026-11-09", initial=False, current=True,
                 nuance="switched from VS Code: I switched from VS Code to Zed")]
    works_on = [fact("apollo", "2026-10-01", "2026-10-01", initial=True, current=False, relation="WORKS_ON"),
                fact("zephyr", "2026-11-20", "2026-11-20", initial=False, current=True, relation="WORKS_ON")]
    change = changed_fact([*works_on, *uses])  # the newer change, but no value is said to be a past one
    assert (change["initial"]["object"], change["replaced"]["object"], change["current"]["object"]) == \
        ("go", "vs_code", "zed")
    text = render_change(change)
    assert "initially: sam uses go (first seen 2026-11-02)" in text
    assert "replaced:  sam uses vs_code" in text and "currently: sam uses zed (since 2026-11-09)" in text
    only_works_on = changed_fact(works_on)
    assert only_works_on["replaced"] is None and only_works_on["current"]["object"] == "zephyr"


def test_no_change_is_said_plainly() -> None:
    assert changed_fact([fact("go", "2026-11-02", "2026-11-02", initial=True, current=True)]) is None
    assert "no fact" in render_change(None)


def test_the_demo_labels_only_the_first_the_newest_and_a_replaced_value() -> None:
    """A value between the first and the newest (PostgreSQL beside Go and Zed) is still held: no label."""
    from athena_devtools.demo import render

    facts = [fact("go", "2026-11-02", "2026-11-02", initial=True, current=False),
             fact("postgresql", "2026-11-02", "2026-11-03", initial=False, current=False, nuance="Yes, PostgreSQL stays."),
             fact("vs_code", "2026-11-09", "2026-11-09", initial=False, current=False,
                  nuance="previously, switched to Zed: I switched from VS Code to Zed"),
             fact("zed", "2026-11-09", "2026-11-09", initial=False, current=True)]
    for f in facts:
        f.update(weight=1, confidence=0.8)
    text = render({"stm_events": [], "stm_source": "redis", "relevant_pages": [], "facts": facts, "user_persona": []})
    assert "sam uses go [initial]" in text and "sam uses zed [current]" in text
    assert "sam uses vs_code [replaced]" in text and "sam uses postgresql (weight" in text
