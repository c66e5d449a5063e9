"""The challenge policy, rule by rule (pure: no server)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.challenges.policy import decide, describe
from bot.config import SPEEDS, config_from_dict


def challenge(user="alice", title=None, variant="standard", speed="blitz", limit=300, inc=0,
              rated=False, tc_type="clock", days=None, rating=1500):
    tc = {"type": tc_type}
    if tc_type == "clock":
        tc.update(limit=limit, increment=inc, show=f"{limit // 60}+{inc}")
    elif tc_type == "correspondence":
        tc.update(daysPerTurn=days)
    return {"id": "abcd1234",
            "challenger": {"id": user.lower(), "name": user, "title": title, "rating": rating},
            "variant": {"key": variant, "name": variant}, "speed": speed, "timeControl": tc,
            "rated": rated, "color": "random"}


def policy(**kw):
    return config_from_dict({"challenge": kw}).challenge


@pytest.mark.parametrize("ch, cfg, reason, rule", [
    (challenge(variant="chess960"), {}, "variant", "challenge.variants"),
    (challenge(variant="atomic"), {}, "variant", "challenge.variants"),
    (challenge(variant="fromPosition"), {"variants": ["standard"]}, "standard", "challenge.variants"),
    (challenge(variant="standard"), {"variants": ["fromPosition"]}, "variant", "challenge.variants"),
    (challenge(speed="ultraBullet", limit=15), {}, "tooFast", "challenge.speeds"),
    (challenge(speed="bullet", limit=60), {"speeds": ["blitz", "rapid"]}, "tooFast", "challenge.speeds"),
    (challenge(speed="classical", limit=1800), {"speeds": ["blitz", "rapid"]}, "tooSlow", "challenge.speeds"),
    (challenge(speed="rapid", limit=600), {"speeds": ["blitz", "classical"]}, "timeControl",
     "challenge.speeds"),
    (challenge(speed="correspondence", tc_type="correspondence", days=3), {}, "tooSlow", "challenge.speeds"),
    (challenge(limit=120), {"min_base_s": 180}, "tooFast", "challenge.min_base_s"),
    (challenge(limit=600, speed="rapid"), {"max_base_s": 300}, "tooSlow", "challenge.max_base_s"),
    (challenge(inc=0), {"min_increment_s": 1}, "tooFast", "challenge.min_increment_s"),
    (challenge(inc=30), {"max_increment_s": 10}, "tooSlow", "challenge.max_increment_s"),
    (challenge(speed="correspondence", tc_type="correspondence", days=1),
     {"speeds": ["correspondence"], "min_days": 2}, "tooFast", "challenge.min_days"),
    (challenge(speed="correspondence", tc_type="correspondence", days=14),
     {"speeds": ["correspondence"], "max_days": 7}, "tooSlow", "challenge.max_days"),
    (challenge(speed="correspondence", tc_type="unlimited"), {"speeds": ["correspondence"]},
     "timeControl", "challenge.unlimited"),
    (challenge(rated=True), {"modes": ["casual"]}, "casual", "challenge.modes"),
    (challenge(rated=False), {"modes": ["rated"]}, "rated", "challenge.modes"),
    (challenge(title="BOT"), {"accept_bots": False}, "noBot", "challenge.accept_bots"),
    (challenge(title="GM"), {"accept_humans": False}, "onlyBot", "challenge.accept_humans"),
    (challenge(user="Mallory"), {"block_list": ["mallory"]}, "generic", "challenge.block_list"),
    (challenge(user="Eve"), {"allow_list": ["alice"]}, "generic", "challenge.allow_list"),
    (challenge(rating=1399), {"min_rating": 1400}, "generic", "challenge.min_rating"),
    (challenge(rating=2201), {"max_rating": 2200}, "generic", "challenge.max_rating"),
    (challenge(rating=None), {"max_rating": 2200}, "generic", "challenge.max_rating"),
    (challenge(title="BOT", speed="bullet", limit=60, inc=0), {}, "timeControl",
     "challenge.bot_bullet_needs_increment"),
    (challenge(title="BOT", speed="bullet", limit=120, inc=0), {}, "timeControl",
     "challenge.bot_bullet_needs_increment"),
])
def test_each_rule_declines_with_its_reason(ch, cfg, reason, rule):
    d = decide(ch, policy(**cfg), games_in_progress=0)
    assert not d.accept
    assert (d.reason, d.rule) == (reason, rule)
    assert rule in str(d)


@pytest.mark.parametrize("ch, cfg", [
    (challenge(), {}),
    (challenge(variant="fromPosition"), {}),
    (challenge(speed="bullet", limit=60), {}),
    (challenge(title="BOT", rated=True), {}),
    (challenge(title="BOT", speed="bullet", limit=60, inc=1), {}),  # bullet with increment
    (challenge(title="BOT", speed="blitz", limit=180, inc=0), {}),  # blitz without: fine
    (challenge(speed="bullet", limit=60, inc=0), {}),  # a human's 1+0: fine
    (challenge(title="BOT", speed="bullet", limit=60), {"bot_bullet_needs_increment": False}),
    (challenge(rating=1400), {"min_rating": 1400, "max_rating": 1400}),  # the bounds are inclusive
    (challenge(rating=None), {}),  # no window: the rating does not matter
    (challenge(user="Alice"), {"allow_list": ["ALICE"]}),
    (challenge(speed="correspondence", tc_type="correspondence", days=3), {"speeds": ["correspondence"]}),
    (challenge(speed="correspondence", tc_type="unlimited"),
     {"speeds": ["correspondence"], "unlimited": True}),
])
def test_acceptable_challenges_are_accepted(ch, cfg):
    d = decide(ch, policy(**cfg), games_in_progress=0)
    assert d.accept and d.reason is None


def test_concurrency_declines_later_only_when_full():
    cfg = policy(concurrency=2)
    assert decide(challenge(), cfg, 1).accept
    d = decide(challenge(), cfg, 2)
    assert (d.accept, d.reason, d.rule) == (False, "later", "challenge.concurrency")


def test_games_per_user_declines_later_only_at_the_limit():
    cfg = policy(concurrency=4)
    assert decide(challenge(user="Alice"), cfg, 1, games_by_user={"bob": 1}).accept
    d = decide(challenge(user="Alice"), cfg, 1, games_by_user={"alice": 1})
    assert (d.accept, d.reason, d.rule) == (False, "later", "challenge.max_games_per_user")
    cfg2 = policy(concurrency=4, max_games_per_user=2)
    assert decide(challenge(user="Alice"), cfg2, 1, games_by_user={"alice": 1}).accept
    assert decide(challenge(user="Alice"), cfg2, 2, games_by_user={"alice": 2}).reason == "later"


def test_a_permanent_rule_beats_the_per_user_limit():
    d = decide(challenge(rating=900), policy(min_rating=1000), 1, games_by_user={"alice": 1})
    assert (d.reason, d.rule) == ("generic", "challenge.min_rating")


def test_rating_window_upside_down_is_one_config_line():
    from bot.config import ConfigError

    with pytest.raises(ConfigError, match=r"challenge.min_rating \(2000\) is above challenge.max_rating"):
        policy(min_rating=2000, max_rating=1500)


def test_permanent_reason_beats_later():
    # A challenge we would never take is told why, even when we are busy.
    d = decide(challenge(variant="atomic"), policy(concurrency=1), games_in_progress=5)
    assert d.reason == "variant"


def test_describe_is_one_line():
    text = describe(challenge(user="Bob", title="BOT", limit=60, inc=1, rated=True, speed="bullet"))
    assert text == "abcd1234 from BOT Bob (standard bullet 1+1 rated)"


@settings(deadline=None)  # the suite runs engines in parallel: timing varies
@given(speed=st.sampled_from(SPEEDS), limit=st.integers(0, 20000), inc=st.integers(0, 200),
       rated=st.booleans(), bot=st.booleans(), busy=st.integers(0, 5),
       variant=st.sampled_from(["standard", "fromPosition", "chess960", "horde"]))
def test_every_challenge_gets_a_valid_answer(speed, limit, inc, rated, bot, busy, variant):
    reasons = {"generic", "later", "tooFast", "tooSlow", "timeControl", "rated", "casual", "standard",
               "variant", "noBot", "onlyBot"}
    d = decide(challenge(speed=speed, limit=limit, inc=inc, rated=rated, title="BOT" if bot else None,
                         variant=variant), policy(concurrency=2), busy)
    assert d.accept == (d.reason is None)
    assert d.accept or d.reason in reasons
    if d.accept:
        assert busy < 2 and variant in ("standard", "fromPosition") and speed != "ultraBullet"
        assert not (bot and speed == "bullet" and inc == 0)
