"""Goal-match features of (observation, goal, action) for :class:`~agentgym_credit.truth.text_policy.TextPolicy`'s
``"match"`` part: what lets a policy that reads only text tell a matching listing or product page from a
wrong one, on any goal (no product, game or instance is named, so what is learned carries to held-out goals).

The observation is read as ``[SEP]``-separated segments (WebShop's text pages; an observation without them
gives only the action-class features). Each feature is a name, hashed into the policy's linear weights:

- ``mL|...`` for an action whose argument is a listing on the page (its segment is followed by a title and a
  ``$`` price): whether its title shares the most goal words on the page, the shared fraction (quarters),
  and whether its price is within the goal's budget (``lower than X dollars``);
- ``mP|<class>|...`` on a page with a title and a ``Price:`` segment (a product page): the page's title match
  (quarters) and price fit, crossed with the action's class (``< prev``, ``buy now``, ``back to search``, an
  option the goal names, another option, ...);
- ``mR|<class>|...`` on a page of listings, for the actions that are not listings: the best listing's match.

Why (issue 41): the WebShop expert goes back (``< prev``) from every wrong product page; without these
features a learned text policy cannot tell that page from the right one, so imitating the expert teaches
``< prev`` everywhere and the imitating policy never buys (benchmarks/learning/matched_kl_known_effect.md).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z]+|\d+")
_BUDGET = re.compile(r"(?:lower|less|under|below|cheaper)\s+than\s+\$?\s*(\d+(?:\.\d+)?)")
_PRICE = re.compile(r"\$\s*(\d+(?:\.\d+)?)")
_ARG = re.compile(r"^\s*\w+\[(.*)\]\s*$")
_NAMED = ("< prev", "next >", "back to search", "buy now", "description", "features", "reviews")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if not w.isdigit()}


def _quarter(x: float) -> int:
    return min(int(x * 4), 3)


def _price_ok(text: str, budget: float | None) -> str:
    m = _PRICE.search(text)
    if budget is None or m is None:
        return "?"
    return "1" if float(m.group(1)) <= budget else "0"


def _match(title: str, goal_words: set[str]) -> float:
    tw = _words(title)
    return len(tw & goal_words) / len(tw) if tw else 0.0


def page_facts(obs: str, goal: str) -> dict:
    """What the features read from one page: its listings (argument -> (match, price fit)), the best listing
    match, and a product page's title match and price fit (``None`` when the page has no such part)."""
    segs = [s.strip() for s in obs.split("[SEP]")]
    low = [s.lower() for s in segs]
    gw = _words(goal)
    m = _BUDGET.search(goal.lower())
    budget = float(m.group(1)) if m else None
    listings = {}
    for i in range(len(segs) - 2):
        if segs[i + 2].startswith("$") and segs[i] and not segs[i].startswith("$"):
            listings[low[i]] = (_match(segs[i + 1], gw), _price_ok(segs[i + 2], budget))
    product = None
    for i in range(1, len(segs)):
        if low[i].startswith("price:"):
            product = (_match(segs[i - 1], gw), _price_ok(segs[i], budget))
            break
    best = max((v[0] for v in listings.values()), default=None)
    return {"listings": listings, "best": best, "product": product, "goal_words": gw}


def action_class(action: str, goal_words: set[str]) -> str:
    m = _ARG.match(action)
    arg = (m.group(1) if m else action).strip().lower()
    if arg in _NAMED:
        return arg
    return "opt-goal" if _words(arg) & goal_words else "opt"


def match_names(obs: str, goal: str, action: str, facts: dict | None = None) -> list[str]:
    """The ``"match"`` feature names of one candidate action (module docstring)."""
    f = page_facts(obs, goal) if facts is None else facts
    m = _ARG.match(action)
    arg = (m.group(1) if m else action).strip().lower()
    hit = f["listings"].get(arg)
    if hit is not None:
        best = "1" if f["best"] is not None and hit[0] >= f["best"] - 1e-12 else "0"
        return [f"mL|best{best}|p{hit[1]}", f"mL|q{_quarter(hit[0])}|p{hit[1]}", f"mL|best{best}"]
    cls = action_class(action, f["goal_words"])
    out = [f"mC|{cls}"]
    if f["product"] is not None:
        q, ok = _quarter(f["product"][0]), f["product"][1]
        out += [f"mP|{cls}|q{q}", f"mP|{cls}|p{ok}", f"mP|{cls}|q{q}|p{ok}"]
    elif f["best"] is not None:
        out.append(f"mR|{cls}|q{_quarter(f['best'])}")
    return out


__all__ = ["page_facts", "action_class", "match_names"]
